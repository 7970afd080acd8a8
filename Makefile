# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test test-vscode test-servers lint venv docs bench clean
.PHONY: docs-project install-cli uninstall-cli test-emacs

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,ws]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m lsp_agent.demo

test: lint
	$(PY) -m pytest -q --ignore=tests/servers

# Navigation against real language servers: basedpyright from PyPI and typescript-language-server
# with TypeScript 5 from npm, and SCIP indexes by the real scip-python and scip-typescript (npm),
# installed by version into ~/.cache/lsp-agent-ci/servers (not on PATH, so `make test` stays by
# name). `.ci/run` runs it after `make test`.
SERVERS ?= $(HOME)/.cache/lsp-agent-ci/servers
test-servers: $(STAMP)
	test -x $(SERVERS)/py/bin/basedpyright-langserver || { $(PYTHON) -m venv $(SERVERS)/py && \
	  $(SERVERS)/py/bin/pip install --quiet basedpyright==1.40.2; }
	test -f $(SERVERS)/node/node_modules/typescript/lib/tsserver.js || \
	  npm install --no-audit --no-fund --prefix $(SERVERS)/node typescript-language-server@5.3.0 typescript@5.9.3
	test -x $(SERVERS)/scip/node_modules/.bin/scip-typescript || \
	  npm install --no-audit --no-fund --prefix $(SERVERS)/scip @sourcegraph/scip-python@0.6.6 @sourcegraph/scip-typescript@0.4.0
	LSP_AGENT_TEST_SERVERS=$(SERVERS) $(PY) -m pytest -q -p no:cacheprovider tests/servers

# The VS Code extension in a real VS Code: code-server from npm (cached by version under
# ~/.cache/lsp-agent-ci), Chromium from Debian, Playwright from PyPI. `.ci/run` runs it after
# `make test`; the first run installs for a few minutes.
test-vscode: $(STAMP)
	$(PY) -m pip install --quiet 'playwright>=1.49'
	editors/vscode/e2e/setup.sh $(VENV)/bin/rg
	cd editors/vscode && npm ci --no-audit --no-fund --prefer-offline
	$(PY) -m pytest -q -p no:cacheprovider editors/vscode/e2e

# Emacs 28 with eglot and lsp-mode, from Debian (installed here when missing: the test installs nothing),
# driving the real server (tests/editors/test_emacs.py). `.ci/run` runs it before `make test`.
test-emacs: $(STAMP)
	@emacs --batch -q --eval "(progn (require 'eglot) (require 'lsp-mode))" >/dev/null 2>&1 || { apt-get update -q && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -q emacs-nox elpa-eglot elpa-lsp-mode; }
	$(PY) -m pytest -q -p no:cacheprovider tests/editors/test_emacs.py

# ruff (rules chosen in pyproject.toml) and mypy on lsp_agent; `make test` runs both first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Rewrite the outputs shown in README.md and docs/*.md from real runs (tests/docs/test_docs.py
# checks them); run it after a deliberate change of an answer, and commit what it rewrites.
docs: $(STAMP)
	if test -x $(SERVERS)/py/bin/basedpyright-langserver; then export LSP_AGENT_TEST_SERVERS=$(SERVERS); fi; \
	  $(PY) -m tests.docs.docs_examples

# The docs' small project, where the examples of README.md and docs/ run: build/docs/project.
docs-project: $(STAMP)
	$(PY) -m tests.docs.docs_examples --project

# `lsp-agent` on PATH for everyday use, as pipx would: a virtual environment of its own under
# $(PREFIX)/share/lsp-agent with the mcp and ws extras, its command linked into $(PREFIX)/bin.
# From this clone, or from a built wheel: make install-cli WHEEL=dist/lsp_agent-….whl
PREFIX   ?= $(HOME)/.local
WHEEL    ?= .
CLI_VENV := $(PREFIX)/share/lsp-agent/venv
install-cli:
	$(PYTHON) -m venv --clear $(CLI_VENV)
	$(CLI_VENV)/bin/python -m pip install --quiet '$(WHEEL)[mcp,ws]'
	mkdir -p $(PREFIX)/bin
	ln -sf $(CLI_VENV)/bin/lsp-agent $(PREFIX)/bin/lsp-agent
	@$(PREFIX)/bin/lsp-agent --version
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; \
	  *) echo "$(PREFIX)/bin is not on PATH; add it: export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

uninstall-cli:
	rm -rf $(PREFIX)/share/lsp-agent $(PREFIX)/bin/lsp-agent

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,ws,bench]'
	$(PY) -m benchmarks $(BENCH)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache benchmarks/out
