"""The command a session runs: a pyright is given its file-based cancellation strategy
(test_cancel_servers shows why against the real server); other servers run as configured."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from lsp_agent.semantic import servers
from lsp_agent.semantic.servers import CANCEL_RECEIVE, Spec, launch_command


def spec(*command: str) -> Spec:
    return Spec("s", "python", command, {".py": "python"})


def test_a_pyright_is_given_file_based_cancellation_once():
    for executable in ("/x/bin/basedpyright-langserver", "pyright-langserver"):
        command = launch_command(spec(executable, "--stdio"))
        assert command[:2] == [executable, "--stdio"]
        assert len(command) == 3 and command[2].startswith(f"{CANCEL_RECEIVE}=file:lsp-agent-")
    given = ["basedpyright-langserver", "--stdio", f"{CANCEL_RECEIVE}=file:mine"]
    assert launch_command(spec(*given)) == given


def test_other_servers_run_as_configured():
    for command in (
        ["typescript-language-server", "--stdio"],
        ["gopls"],
        ["/opt/pyright-wrapper", "--stdio"],
    ):
        assert launch_command(spec(*command)) == command


def test_a_server_installed_while_lsp_agent_runs_is_found_once_the_last_look_is_old(tmp_path, monkeypatch):
    """Looking for a server (PATH, tsserver's package) is done once in SPEC_KEPT seconds per
    language, setting and PATH: a server installed since is found after that."""
    if (Path(sys.executable).parent / "rust-analyzer").exists():
        pytest.skip("a rust-analyzer beside this Python is found whatever PATH says")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.setattr(servers, "SPEC_KEPT", 3600.0)
    assert servers.spec_for("rust", {}) == (
        None,
        "rust-analyzer is not on PATH (install it, or set semantic_servers.rust)",
    )
    installed = tmp_path / "rust-analyzer"
    installed.write_text("#!/bin/sh\necho rust-analyzer 1.0\n")
    installed.chmod(0o755)
    assert servers.spec_for("rust", {})[0] is None  # the last look holds
    assert servers.spec_for("rust", {"rust": ["ra-configured"]})[0].command == (
        "ra-configured",
    )  # another setting's own look
    monkeypatch.setattr(servers, "SPEC_KEPT", 0.0)
    spec, _ = servers.spec_for("rust", {})
    assert spec is not None and spec.command == (str(installed),)
