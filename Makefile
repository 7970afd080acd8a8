# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed

.PHONY: demo test lint venv docs bench clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,ws]'
	touch $(STAMP)

demo: $(STAMP)
	$(PY) -m lsp_agent.demo

test: lint
	$(PY) -m pytest -q

# ruff (rules chosen in pyproject.toml) and mypy on lsp_agent; `make test` runs both first.
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# Rewrite the outputs shown in README.md and docs/*.md from real runs (tests/test_docs.py
# checks them); run it after a deliberate change of an answer, and commit what it rewrites.
docs: $(STAMP)
	$(PY) -m tests.docs_examples

bench: $(STAMP)
	$(PY) -m pip install --quiet -e '.[test,ws,bench]'
	$(PY) -m benchmarks $(BENCH)

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache benchmarks/out
