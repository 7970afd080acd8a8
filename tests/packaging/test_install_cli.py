"""`make install-cli` puts `lsp-agent` on PATH for everyday use, from this clone or from a built
wheel: a virtual environment of its own (the mcp and ws extras in it) and a link in
PREFIX/bin. Run for real into a temporary PREFIX, then used from a shell whose PATH has only
that bin folder and the system's (no virtual environment of ours active)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def make(*goals: str, **variables: str) -> subprocess.CompletedProcess:
    assigned = [f"{name}={value}" for name, value in variables.items()]
    return subprocess.run(
        ["make", "--no-print-directory", *goals, f"PYTHON={sys.executable}", *assigned],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def shell(prefix: Path, command: str, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = f"{prefix / 'bin'}{os.pathsep}/usr/bin{os.pathsep}/bin"
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def works_from_path(prefix: Path, project: Path) -> None:
    (project / "a.py").write_text("class A:\n    def run(self):\n        return 1\n")
    found = shell(prefix, "command -v lsp-agent", project)
    assert found.stdout.strip() == str(prefix / "bin" / "lsp-agent")
    done = shell(prefix, "lsp-agent find-symbol A/run --body", project)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("a.py · method · lines 2-3 of 3 · version ")  # symbols: the grammars are in
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        },
    }
    served = shell(prefix, "lsp-agent mcp", project, stdin=json.dumps(initialize) + "\n")
    assert '"serverInfo":{"name":"lsp-agent"' in served.stdout.replace(" ", ""), served.stderr


def test_make_install_cli_from_the_clone_puts_lsp_agent_on_path(tmp_path):
    prefix = tmp_path / "local"
    done = make("install-cli", PREFIX=str(prefix))
    assert done.returncode == 0, done.stderr
    assert "lsp-agent 0.1" in done.stdout
    assert f"{prefix}/bin is not on PATH" in done.stdout  # and says how to add it
    (tmp_path / "project").mkdir()
    works_from_path(prefix, tmp_path / "project")

    assert make("uninstall-cli", PREFIX=str(prefix)).returncode == 0
    assert not (prefix / "bin" / "lsp-agent").exists() and not (prefix / "share" / "lsp-agent").exists()


def test_make_install_cli_from_a_built_wheel(tmp_path):
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--quiet",
            "--no-deps",
            "--wheel-dir",
            str(tmp_path / "dist"),
            str(REPO),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    [wheel] = (tmp_path / "dist").glob("lsp_agent-*.whl")
    prefix = tmp_path / "local"
    done = make("install-cli", PREFIX=str(prefix), WHEEL=str(wheel))
    assert done.returncode == 0, done.stderr
    (tmp_path / "project").mkdir()
    works_from_path(prefix, tmp_path / "project")
