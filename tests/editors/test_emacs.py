"""A real Emacs (28, Debian's emacs-nox) with eglot (Debian's elpa-eglot) and
editors/emacs/lsp-agent.el, driving the real server from PATH: documentSymbol through imenu,
a custom request, M-. by the opt-in standard definition, and an unsaved edit seen by search.
And lsp-mode (Debian's elpa-lsp-mode) with docs/editors.md's snippet: lsp-agent as an add-on
beside the language's own server. `make test-emacs` installs the packages when they are
missing; .ci/run calls it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EMACS = shutil.which("emacs")
SHOP = (
    "class Cart:\n    def total(self):\n        return 0\n\n\ndef checkout(cart):\n    return cart.total()\n"
)

if EMACS is None and os.environ.get("CI") != "true":
    pytest.skip("no emacs here (make test-emacs installs it)", allow_module_level=True)


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict:
    assert EMACS, "no emacs on PATH: make test-emacs installs it from Debian"
    project = tmp_path_factory.mktemp("emacs") / "proj"
    (project / ".git").mkdir(parents=True)  # project.el finds the project by it
    (project / "shop.py").write_text(SHOP)
    out = project.parent / "seen.json"
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(project.parent),
    }
    done = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(REPO / "editors/emacs/lsp-agent.el"), "-l", str(REPO / "tests/editors/emacs/check.el"),
         str(project / "shop.py"), str(out)],
        env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stderr[-3000:]
    assert "Connected!" in done.stderr
    return json.loads(out.read_text()) | {"disk": (project / "shop.py").read_text()}


def test_imenu_lists_the_document_symbols(seen):
    assert (
        seen["imenu"]
        == '(("Class" ("Cart" . 7)) ("Method" ("Cart" ("total" . 21))) ("Function" ("checkout" . 57)))'
    )


def test_a_custom_request_answers_from_the_unmodified_buffer_without_an_unsaved_note(seen):
    assert seen["read"].startswith("7 lines · version ")
    assert "1:class Cart:\n2:    def total(self):" in seen["read"]
    assert "unsaved" not in seen["read"] and "open in the editor" not in seen["read"]


def test_m_dot_goes_to_the_definition_by_the_opt_in_standard_request(seen):
    assert seen["definition"] == ["shop.py:2"]


def test_an_unsaved_edit_is_seen_by_search(seen):
    assert seen["modified"] == "yes" and "unsaved_helper" not in seen["disk"]
    assert (
        seen["search"]
        == "1 match in 1 file\nshop.py (editor buffer, unsaved changes included)\n10:def unsaved_helper():"
    )


def lsp_mode_snippet() -> str:
    """docs/editors.md's lsp-mode block, as a user copies it into their init file."""
    blocks = re.findall(r"^```elisp\n(.*?)^```", (REPO / "docs/editors.md").read_text(), re.S | re.M)
    [snippet] = [b for b in blocks if "lsp-register-client" in b]
    return snippet


def test_lsp_mode_runs_lsp_agent_as_an_add_on_beside_the_languages_own_server(tmp_path):
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / "shop.py").write_text(SHOP)
    (tmp_path / "snippet.el").write_text(lsp_mode_snippet())
    out = tmp_path / "seen.json"
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
    }
    done = subprocess.run(
        [EMACS, "--batch", "-q", "-l", str(REPO / "tests/editors/emacs/lsp_mode.el"),
         str(tmp_path / "snippet.el"), str(project / "shop.py"), str(out)],
        env=env, capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip
    assert done.returncode == 0 and out.exists(), done.stderr[-3000:]
    seen = json.loads(out.read_text())
    assert sorted(seen["servers"]) == ["lsp-agent", "users-own"]  # both attached to the buffer
    assert (
        seen["search"]
        == "1 match in 1 file\nshop.py (editor buffer, unsaved changes included)\n10:def unsaved_helper():"
    )
