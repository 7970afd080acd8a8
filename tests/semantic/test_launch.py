"""The command a session runs: a pyright is given its file-based cancellation strategy
(test_cancel_servers shows why against the real server); other servers run as configured."""

from __future__ import annotations

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
