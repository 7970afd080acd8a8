"""The VS Code extension (editors/vscode): a clean install from the lock file, type-check,
lint, bundling and packaging into a .vsix, and its Node protocol test against the real server.

src/test/protocol.test.ts sends the same requests as the extension; the extension itself runs
in a real VS Code in editors/vscode/e2e (`make test-vscode`). Node.js and npm are required:
without them these tests fail (they are not skipped).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from lsp_agent.tools import catalog

EXTENSION = Path(__file__).resolve().parents[2] / "editors" / "vscode"


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
    npm("run", "package", "--", "--out", str(vsix), env=dict(os.environ, LSP_AGENT_PYTHON=sys.executable))
    with zipfile.ZipFile(vsix) as archive:
        names = {n for n in archive.namelist() if n.startswith("extension/")}
        manifest = json.loads(archive.read("extension/package.json"))
    # One bundle (esbuild) holds the extension and the language client: nothing else runs.
    assert names == {
        "extension/package.json",
        "extension/readme.md",
        "extension/LICENSE.txt",
        "extension/icon.png",
        "extension/dist/extension.js",
    }
    assert manifest["main"] == "./dist/extension.js"
    # The Language Model Tools are the catalog of this build's server, one per agent tool.
    tools = manifest["contributes"]["languageModelTools"]
    assert [(t["name"], t["inputSchema"]) for t in tools] == [
        (f"lspAgent_{t['name']}", t["inputSchema"]) for t in catalog()
    ]
    exclude = manifest["contributes"]["configuration"]["properties"]["lspAgent.languageModelTools.exclude"]
    assert exclude["items"]["enum"] == [t["name"] for t in catalog()]
    assert manifest["capabilities"]["untrustedWorkspaces"]["supported"] == "limited"
    assert (
        manifest["contributes"]["configuration"]["properties"]["lspAgent.server.command"]["scope"]
        == "machine"
    )


def test_protocol_against_the_real_server(installed):
    result = npm("test", env=dict(os.environ, LSP_AGENT_PYTHON=sys.executable))
    assert "# fail 0" in result.stdout
    passed = int(result.stdout.split("# pass ")[1].split()[0])
    assert passed >= 16, result.stdout
