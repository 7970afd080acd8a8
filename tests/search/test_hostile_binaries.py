"""A planted binary is never run: with the server's working directory in the workspace (as
VS Code starts it) and PATH holding `.`, an empty entry or a relative folder, an executable
`rg` in the repository must not be the rg the server runs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.search import walk
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

HOSTILE_PATHS = [":/usr/bin", ".:/usr/bin", "/usr/bin::", "bin:/usr/bin", "", "."]


@pytest.fixture
def planted(tmp_path):
    """A workspace with `./rg` and `./bin/rg` that leave a mark and print a fake match."""
    root = tmp_path / "ws"
    (root / "bin").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    marker = tmp_path / "planted-rg-ran"
    for rg in (root / "rg", root / "bin" / "rg"):
        rg.write_text(f"#!/bin/sh\ntouch {marker}\necho 'a.py:1:PLANTED'\n")
        rg.chmod(0o755)
    return root, marker


@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_a_planted_rg_in_the_working_directory_is_not_run(planted, monkeypatch, path):
    root, marker = planted
    monkeypatch.chdir(root)
    monkeypatch.setenv("PATH", path)
    monkeypatch.delenv("LSP_AGENT_RG", raising=False)
    found = walk.find_rg()
    assert found is not None and os.path.isabs(found) and Path(found).parent != root
    ctx = Context(Workspace([root]))
    for tool, arguments in [("search", {"pattern": "x"}), ("list_files", {}), ("symbols", {"path": "."})]:
        answer = call(ctx, tool, arguments)
        assert "PLANTED" not in answer["text"] and "error" not in answer, (tool, answer["text"])
    assert not marker.exists()


def test_a_configured_rg_must_be_an_absolute_path(planted, monkeypatch):
    root, _ = planted
    monkeypatch.chdir(root)
    monkeypatch.setenv("LSP_AGENT_RG", "rg")  # relative: ignored
    assert walk.find_rg() != "rg"
    monkeypatch.setenv("LSP_AGENT_RG", str(root / "rg"))  # absolute: the user's choice
    assert walk.find_rg() == str(root / "rg")


def test_the_cli_in_the_workspace_with_dot_on_path_runs_its_own_rg(planted):
    root, marker = planted
    env = {**os.environ, "PATH": ".:" + os.environ.get("PATH", "")}
    env.pop("LSP_AGENT_RG", None)
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "search", "x"], cwd=root, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert "PLANTED" not in done.stdout and "a.py" in done.stdout
    assert not marker.exists()
