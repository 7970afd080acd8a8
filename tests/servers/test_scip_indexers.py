"""The SCIP source on indexes written by the real scip-python and scip-typescript (installed
by `make test-servers` under LSP_AGENT_TEST_SERVERS/scip), through `lsp-agent index scip`.
Each index is decoded a second time by the protobuf runtime from a descriptor written here
from scip.proto's field numbers, and every occurrence in it is asked about: references are
exactly the indexer's occurrences of its symbol, definition exactly its definitions."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from lsp_agent.config import Settings
from lsp_agent.semantic import Location, Semantic, scip
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parent.parent / "fixtures" / "semantic"
CACHE = os.environ.get("LSP_AGENT_TEST_SERVERS")
if CACHE is None and os.environ.get("CI") == "true":
    raise RuntimeError("CI: run these through `make test-servers`, which installs the indexers")
pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")

# message -> [(field, number, type, repeated, message type)], per scip.proto
MESSAGES = {
    "Index": [("metadata", 1, "message", False, "Metadata"), ("documents", 2, "message", True, "Document")],
    "Metadata": [("tool_info", 2, "message", False, "ToolInfo")],
    "ToolInfo": [("name", 1, "string", False, None), ("version", 2, "string", False, None)],
    "Document": [
        ("relative_path", 1, "string", False, None),
        ("occurrences", 2, "message", True, "Occurrence"),
        ("symbols", 3, "message", True, "SymbolInformation"),
    ],
    "Occurrence": [
        ("range", 1, "int32", True, None),
        ("symbol", 2, "string", False, None),
        ("symbol_roles", 3, "int32", False, None),
    ],
    "SymbolInformation": [
        ("symbol", 1, "string", False, None),
        ("relationships", 4, "message", True, "Relationship"),
    ],
    "Relationship": [("symbol", 1, "string", False, None), ("is_implementation", 3, "bool", False, None)],
}
TYPES = {
    "message": descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
    "string": descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
    "int32": descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
    "bool": descriptor_pb2.FieldDescriptorProto.TYPE_BOOL,
}


def index_class():
    proto = descriptor_pb2.FileDescriptorProto(name="scip_test.proto", package="sciptest", syntax="proto3")
    for name, fields in MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, repeated, type_name in fields:
            entry = message.field.add(name=field, number=number, type=TYPES[kind])
            entry.label = entry.LABEL_REPEATED if repeated else entry.LABEL_OPTIONAL
            if type_name:
                entry.type_name = f".sciptest.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("sciptest.Index"))


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


def occurrences_of(path: Path):
    """(document, 0-based range, symbol, roles) of every occurrence, by the protobuf runtime."""
    index = index_class()()
    index.ParseFromString(path.read_bytes())
    for document in index.documents:
        for occurrence in document.occurrences:
            span = list(occurrence.range)
            if len(span) == 3:
                span.insert(2, span[0])
            yield document.relative_path, tuple(span), occurrence.symbol, occurrence.symbol_roles


def expected(path: Path):
    """Per symbol: its occurrences and its definitions, as 1-based locations."""
    uses, definitions = defaultdict(set), defaultdict(set)
    root = path.parent
    for document, (line, start, end_line, end), symbol, roles in occurrences_of(path):
        key = (document, symbol) if symbol.startswith("local ") else symbol
        if not (root / document).read_text():
            continue  # a module's occurrence in an empty __init__.py: no line to show it on
        found = Location(root / document, line + 1, start + 1, end_line + 1, end + 1)
        uses[key].add(found)
        if roles & 1:
            definitions[key].add(found)
    return uses, definitions


@pytest.mark.parametrize("language", ["python", "typescript"])
def test_every_occurrence_answers_the_indexers_references_and_definitions(indexed, language):
    index = indexed / f"index.{language}.scip"
    uses, definitions = expected(index)
    source = Semantic(Workspace([indexed]), Settings())
    asked = 0
    for document, (line, start, _, _), symbol, _ in occurrences_of(index):
        key = (document, symbol) if symbol.startswith("local ") else symbol
        references = source.locations("references", indexed / document, line + 1, start + 1)
        assert references.server == f"scip-{language} " + references.server.split(" ")[1] + " index"
        assert set(references.locations) == uses[key], (document, line, symbol)
        definition = source.locations("definition", indexed / document, line + 1, start + 1)
        assert set(definition.locations) == definitions[key], (document, line, symbol)
        if not definitions[key]:  # defined outside the workspace (or in an empty file): said, not shown
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
