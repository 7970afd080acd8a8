"""The SCIP source on indexes written by the real scip-python and scip-typescript (installed
by `make test-servers` under LSP_AGENT_TEST_SERVERS/scip), through `lsp-agent index scip`.
Each index is decoded a second time by the protobuf runtime (tests/support/scip_protobuf.py),
and every occurrence in it is asked about: references are exactly the indexer's occurrences
of its symbol, definition exactly its definitions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import Semantic, scip
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.scip_protobuf import expected, occurrences_of, sharing, truth

FIXTURES = Path(__file__).parent.parent / "fixtures" / "semantic"
CACHE = os.environ.get("LSP_AGENT_TEST_SERVERS")
if CACHE is None and os.environ.get("CI") == "true":
    raise RuntimeError("CI: run these through `make test-servers`, which installs the indexers")
pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    """The two fixture projects in one folder, indexed by `lsp-agent index scip`."""
    root = tmp_path_factory.mktemp("scip") / "project"
    shutil.copytree(FIXTURES / "py", root)
    shutil.copytree(FIXTURES / "ts" / "src", root / "src")
    os.environ["XDG_CACHE_HOME"] = str(root.parent / "cache")
    bin_folder = Path(CACHE or ".") / "scip" / "node_modules" / ".bin"
    run = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "index", "scip", "--root", str(root), "--bin", str(bin_folder)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "python: wrote index.python.scip (4 documents" in run.stdout
    assert "typescript: wrote index.typescript.scip (2 documents" in run.stdout
    assert "scip-python: " in run.stdout  # the indexer's own progress, passed on
    assert not (root / "tsconfig.json").exists()  # --infer-tsconfig's is removed
    return root


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_every_occurrence_answers_the_indexers_references_and_definitions(indexed, language):
    index = indexed / f"index.{language}.scip"
    uses, definitions = expected(index)
    together = sharing(index)
    source = Semantic(Workspace([indexed]), Settings())
    asked = 0
    for document, span, symbol, _ in occurrences_of(index):
        line, start = span[0], span[1]
        all_uses, all_definitions = truth(uses, definitions, together[(document, span)])
        references = source.locations("references", indexed / document, line + 1, start + 1)
        assert references.server == f"scip-{language} " + references.server.split(" ")[1] + " index"
        assert set(references.locations) == all_uses, (document, line, symbol)
        definition = source.locations("definition", indexed / document, line + 1, start + 1)
        assert set(definition.locations) == all_definitions, (document, line, symbol)
        if not all_definitions:  # defined outside the workspace (or in an empty file): said, not shown
            assert definition.dropped + definition.invalid == 1
        asked += 1
    assert asked > 30


def tool(root: Path, name: str, **arguments) -> dict:
    return call(Context(Workspace([root]), Settings()), name, arguments)


def test_known_facts_of_the_fixtures(indexed):
    answer = tool(indexed, "references", path="app/views.py", line=12, column=11)  # cache.get
    confirmed = {(r["path"], r["line"]) for r in answer["references"] if r["source"] != "name"}
    assert confirmed == {("app/views.py", 5), ("app/views.py", 12)}
    answer = tool(indexed, "definition", path="app/models.py", line=8, column=17)  # super().save()
    assert [(d["path"], d["name_path"]) for d in answer["definitions"]] == [("app/models.py", "Base/save")]
    answer = tool(indexed, "implementations", path="src/shapes.ts", line=1, column=18)  # interface Shape
    assert {(e["path"], e["line"]) for e in answer["entries"]} == {
        ("src/shapes.ts", 5),
        ("src/shapes.ts", 12),
    }
    assert answer["source"].startswith("scip-typescript")
    answer = tool(indexed, "implementations", path="app/models.py", line=2, column=9)  # Base.save
    assert [(e["path"], e["line"]) for e in answer["entries"]] == [("app/models.py", 7)]  # Order.save
    assert "def save(" in answer["semantic"]["documentation"][0]  # the indexer's hover text


def test_an_edited_file_falls_back_and_says_so(indexed, tmp_path):
    root = tmp_path / "copy"
    shutil.copytree(indexed, root)
    for index in root.glob("index.*.scip"):  # copied after the sources: still newer than them
        os.utime(index)
    scip.STORE.found.clear()
    views = root / "app" / "views.py"
    views.write_text(views.read_text() + "\n# edited after indexing\n")
    answer = tool(root, "references", path="app/views.py", line=12, column=11)
    assert answer["semantic"]["unavailable"] == (
        "index.python.scip is older than app/views.py (changed since it was indexed)"
    )
    answer = tool(root, "references", path="app/models.py", line=7, column=9)  # Order.save
    assert "index.python.scip is older than app/views.py" in answer["text"]
    assert {(r["path"], r["line"]) for r in answer["references"] if r["source"] == "name"} >= {
        ("app/views.py", 10)
    }


def test_a_truncated_real_index_is_refused(indexed, tmp_path):
    root = tmp_path / "cut"
    shutil.copytree(indexed, root)
    index = root / "index.python.scip"
    index.write_bytes(index.read_bytes()[: index.stat().st_size // 2])
    scip.STORE.found.clear()
    answer = tool(root, "definition", path="app/models.py", line=8, column=17)
    assert "index.python.scip is not a readable SCIP index" in answer["semantic"]["unavailable"]
    assert answer["definitions"]  # the syntax source answers


def test_an_index_of_one_folder_is_written_there_and_read_from_there(tmp_path):
    """scip-python limited to a folder (`--only`, its --target-only: Django's package without
    its tests) gives paths relative to that folder, so the index is written in it."""
    root = tmp_path / "project"
    shutil.copytree(FIXTURES / "py", root)
    os.environ["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    bin_folder = Path(CACHE or ".") / "scip" / "node_modules" / ".bin"
    run = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "index", "scip", "--root", str(root), "--bin", str(bin_folder),
         "--only", "app"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    assert "python: wrote app/index.python.scip (" in run.stdout
    assert not (root / "index.python.scip").exists()
    scip.STORE.found.clear()
    answer = tool(root, "references", path="app/views.py", line=12, column=11)  # cache.get
    assert answer["semantic"]["server"].startswith("scip-python")
    confirmed = {(r["path"], r["line"]) for r in answer["references"] if r["source"] != "name"}
    assert confirmed == {("app/views.py", 5), ("app/views.py", 12)}
