"""The package as a user gets it: `python -m build` makes an sdist and a wheel from the files a
fresh clone has, the wheel installs into a bare virtual environment, and there the command
line and one LSP session work, symbols included (so a package-data file left out of the wheel
fails here). The metadata a package index shows is checked on the wheel itself."""

from __future__ import annotations

import email
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.lsp_client import initialize_params, make_client, request

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    """sdist and wheel built from a copy of the checkout's files (tracked, or new and not ignored)."""
    source = tmp_path_factory.mktemp("source")
    files = (
        subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            cwd=REPO,
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, files):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    out = tmp_path_factory.mktemp("dist")
    # Without flags, build makes the sdist and then the wheel from the unpacked sdist: a file
    # missing from the sdist is missing from the wheel too.
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(out), str(source)], capture_output=True, check=True
    )
    return out


@pytest.fixture(scope="module")
def venv(dist, tmp_path_factory) -> Path:
    env = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
    [wheel] = dist.glob("*.whl")
    subprocess.run(
        [env / "bin" / "python", "-m", "pip", "install", "--quiet", str(wheel)],
        check=True,
        capture_output=True,
    )
    return env


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "shapes.py").write_text("class Point:\n    def norm(self):\n        return 0\n")
    return tmp_path


def test_the_wheel_installs_and_its_command_line_works(venv, project):
    def cli(*args: str) -> str:
        done = subprocess.run(
            [venv / "bin" / "lsp-agent", *args], cwd=project, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout

    assert cli("--version").startswith("lsp-agent ")
    assert cli("symbols", "shapes.py").splitlines()[1:] == ["class Point  1-3", "  method norm  2-3"]
    found = json.loads(cli("search", "def norm", "--json"))
    assert found["engine"] == "ripgrep" and "2 Point:    def norm(self):" in found["text"]
    assert (
        "1 call decoded"
        in subprocess.run(
            [venv / "bin" / "lsp-agent", "decode"],
            input='<tool_call>{"name": "read", "arguments": {"path": "a"}}</tool_call>',
            cwd=project,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
    )


async def test_the_wheel_serves_one_lsp_session(venv, project):
    client = make_client()
    await client.start_io(str(venv / "bin" / "lsp-agent"), "serve", cwd=project)
    try:
        await client.initialize_session(initialize_params(project))
        symbols = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(
                text_document=types.TextDocumentIdentifier(uri=(project / "shapes.py").as_uri())
            )
        )
        assert [(s.name, [c.name for c in s.children]) for s in symbols] == [("Point", ["norm"])]
        answer = await request(client, "read", path="shapes.py")
        assert answer["total_lines"] == 3
    finally:
        await client.shutdown_session()


def test_the_sdist_holds_the_package_and_leaves_the_tests_out(dist):
    [sdist] = dist.glob("*.tar.gz")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "LICENSE", "lsp_agent/py.typed", "lsp_agent/server.py"} <= names
    assert not any(name.startswith("tests") for name in names)  # not half of them: none


def test_the_metadata_a_package_index_shows(dist):
    [wheel] = dist.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "lsp_agent/py.typed" in archive.namelist()
        [metadata] = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        meta = email.message_from_bytes(archive.read(metadata))
    classifiers = meta.get_all("Classifier")
    for version in ("3.10", "3.11", "3.12", "3.13"):
        assert f"Programming Language :: Python :: {version}" in classifiers
    assert "Typing :: Typed" in classifiers
    assert any(c.startswith("Operating System ::") for c in classifiers)
    assert any(c.startswith("Topic ::") for c in classifiers)
    assert meta["Keywords"] and meta["License-Expression"] == "MIT"
    urls = dict(u.split(", ", 1) for u in meta.get_all("Project-URL"))
    assert {"Homepage", "Documentation", "Source", "Issues"} <= set(urls)
    assert meta["Description-Content-Type"] == "text/markdown"
    # The long description is read on a package index, outside the repository: every link
    # must be absolute (or to a heading of the page itself).
    links = re.findall(r"\]\(([^)]+)\)", meta.get_payload())
    relative = [link for link in links if not link.startswith(("https://", "#"))]
    assert links and relative == []
    source = urls["Source"]
    assert all(link.startswith(source) for link in links if "lsp-agent/lsp-agent" in link)
