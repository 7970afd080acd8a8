"""The VS Code extension (editors/vscode): a clean install from the lock file, type-check,
lint, packaging into a .vsix, and its Node protocol test against the real server.

VS Code itself cannot be installed here, so the extension's protocol side is tested by
src/test/protocol.test.ts, which sends the same requests as the extension. Node.js and npm
are required: without them these tests fail (they are not skipped).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"


def npm(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    exe = shutil.which("npm")
    if exe is None or shutil.which("node") is None:
        pytest.fail(
            "Node.js 20+ and npm are needed to build and test the VS Code extension; "
            "install them (e.g. apt-get install nodejs npm)"
        )
    result = subprocess.run(
        [exe, *args],
        check=False,  # the assertion below shows npm's output
        cwd=EXTENSION,
        capture_output=True,
        text=True,
        env=env,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert result.returncode == 0, f"npm {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
    return result


@pytest.fixture(scope="module")
def installed():
    """`npm ci`: exactly the locked dependencies, from a clean node_modules."""
    npm("ci", "--no-audit", "--no-fund", "--prefer-offline")


def test_extension_type_checks_and_lints(installed):
    npm("run", "compile")
    assert (EXTENSION / "out" / "extension.js").is_file()
    npm("run", "lint")


def test_extension_packages_into_a_vsix(installed, tmp_path):
    vsix = tmp_path / "lsp-agent.vsix"
    npm("run", "package", "--", "--out", str(vsix))
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
    assert {"extension/package.json", "extension/out/extension.js", "extension/out/protocol.js"} <= names
    assert "extension/node_modules/vscode-languageclient/package.json" in names
    # Only what runs: no sources, tests or dev dependencies.
    assert not [n for n in names if n.startswith(("extension/src/", "extension/out/test/"))]
    assert not [n for n in names if n.startswith("extension/node_modules/typescript/")]


def test_protocol_against_the_real_server(installed):
    result = npm("test", env=dict(os.environ, LSP_AGENT_PYTHON=sys.executable))
    assert "# fail 0" in result.stdout
    passed = int(result.stdout.split("# pass ")[1].split()[0])
    assert passed >= 6, result.stdout
