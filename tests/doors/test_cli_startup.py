"""A one-shot command starts fast (issue 28): it imports only the tool it runs, validates
its arguments without jsonschema where a quick check vouches for them, and takes from the
index a server saved only the records of the files it looks in."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.syntax.index import SymbolIndex, saved_index
from lsp_agent.tools import REGISTRY, Context, call
from lsp_agent.tools.registry import MODULES, surely_valid
from lsp_agent.workspace import Workspace

# What no read, search or find-symbol needs: the validator, the call decoders, the
# protocol library, the language servers' and the MCP doors, the other tools.
HEAVY = (
    "jsonschema",
    "pygls",
    "lsprotocol",
    "mcp",
    "lsp_agent.calls",
    "lsp_agent.semantic",
    "lsp_agent.server",
)

IMPORTED = """
import contextlib, io, json, sys
from lsp_agent.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "text": out.getvalue(), "modules": sorted(sys.modules)}))
"""


def written_long_ago(path: Path, text: str) -> None:
    """A file whose stat vouches for its record (one written in the last 2 s does not)."""
    path.write_text(text)
    os.utime(path, (time.time() - 60, time.time() - 60))


def one_shot(root: Path, cache: Path, *argv: str) -> dict:
    env = {**os.environ, "LSP_AGENT_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, *argv, "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize(
    ("argv", "tool_module"),
    [
        (["read", "a.py"], "read"),
        (["search", "run"], "search"),
        (["find-symbol", "run"], "symbols"),
        (["symbols", "a.py"], "symbols"),
    ],
)
def test_a_one_shot_imports_only_its_own_tool(tmp_path, index_cache, argv, tool_module):
    written_long_ago(tmp_path / "a.py", "class A:\n    def run(self):\n        return 1\n")
    SymbolIndex(Workspace([tmp_path]), cache=index_cache).build()
    ran = one_shot(tmp_path, index_cache, *argv)
    assert ran["code"] == 0 and "run" in ran["text"]
    heavy = [m for m in ran["modules"] if m.split(".")[0] in HEAVY or m.startswith(HEAVY)]
    assert heavy == []
    tools = {m.rpartition(".")[2] for m in ran["modules"] if m.startswith("lsp_agent.tools.")}
    assert tools <= {"registry", tool_module, "chain"}  # chain: search's shortening chain


@pytest.mark.parametrize("argv", [["search", "run"], ["find-symbol", "run"]])
def test_a_one_shot_answered_from_saved_records_imports_no_classifier(tmp_path, index_cache, argv):
    """Records a server saved answer a search's enclosing symbols and find-symbol's
    definitions: the uses' classification and its receivers (3 ms of a one-shot's 80) are
    imported only where a record is made or a signature shown."""
    written_long_ago(tmp_path / "a.py", "class A:\n    def run(self):\n        return 1\n")
    SymbolIndex(Workspace([tmp_path]), cache=index_cache).build()
    ran = one_shot(tmp_path, index_cache, *argv)
    assert ran["code"] == 0 and ("2 A:" in ran["text"] or "A/run" in ran["text"])  # the symbol named
    assert not {"lsp_agent.syntax.references", "lsp_agent.syntax.receivers"} & set(ran["modules"])


def test_the_answer_is_the_one_with_every_tool_imported(tmp_path, index_cache):
    written_long_ago(tmp_path / "a.py", "class A:\n    def run(self):\n        return 1\n")
    SymbolIndex(Workspace([tmp_path]), cache=index_cache).build()
    ctx = Context(Workspace([tmp_path]))
    for argv, name, arguments in [
        (["search", "run"], "search", {"pattern": "run"}),
        (["find-symbol", "run"], "find_symbol", {"name_path": "run"}),
    ]:
        assert one_shot(tmp_path, index_cache, *argv)["text"] == call(ctx, name, arguments)["text"] + "\n"


def test_the_registry_lists_every_tool_in_catalog_order():
    names = list(REGISTRY)
    assert names[: len(MODULES)] == list(MODULES)
    assert all(REGISTRY[n].handler.__module__ == f"lsp_agent.tools.{MODULES[n]}" for n in MODULES)
    # a module that declares a tool but is missing from MODULES would never be imported
    tools = Path(REGISTRY["read"].handler.__code__.co_filename).parent
    declaring = {p.stem for p in tools.glob("*.py") if re.search(r"^@tool\(", p.read_text(), re.M)}
    assert declaring == set(MODULES.values())


def test_every_schema_is_a_valid_json_schema():
    for tool in REGISTRY.values():
        jsonschema.Draft202012Validator.check_schema(tool.schema)


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**60), 2**60)
    | st.floats(allow_nan=False)
    | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@st.composite
def arguments_of(draw, schema: dict) -> dict:
    """Arguments shaped like a tool's: its own names mostly, values of any JSON kind, or
    of the kind its schema says (so that many pass)."""
    properties = schema.get("properties", {})
    arguments = {}
    for name in draw(
        st.lists(st.sampled_from(sorted(properties) or ["x"]) | st.text(max_size=4), max_size=4)
    ):
        kind = properties.get(name, {}).get("type")
        plausible = {
            "string": st.text(max_size=4) | st.sampled_from(properties.get(name, {}).get("enum", ["a"])),
            "integer": st.integers(-5, 10**6),
            "boolean": st.booleans(),
            "array": st.lists(st.text(max_size=3) | st.integers(), max_size=3),
        }.get(kind if isinstance(kind, str) else "", json_values)
        arguments[name] = draw(plausible | json_values)
    return arguments


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_the_quick_check_passes_only_what_the_schema_accepts(data):
    tool = REGISTRY[data.draw(st.sampled_from(list(REGISTRY)))]
    arguments = data.draw(arguments_of(tool.schema))
    if surely_valid(tool.schema, arguments):
        assert jsonschema.Draft202012Validator(tool.schema).is_valid(arguments), arguments


def test_the_quick_check_passes_ordinary_calls():
    assert surely_valid(REGISTRY["search"].schema, {"pattern": "def ", "paths": ["src"], "max_chars": 4000})
    assert not surely_valid(REGISTRY["search"].schema, {"pattern": "def ", "max_chars": 4000.0})
    assert not surely_valid(REGISTRY["read"].schema, {"path": "a.py", "nonsense": 1})


def test_a_lazily_loaded_index_makes_only_the_records_asked_for(tmp_path, index_cache):
    written_long_ago(tmp_path / "a.py", "def one():\n    return 1\n")
    written_long_ago(tmp_path / "b.py", "def two():\n    return 2\n")
    SymbolIndex(Workspace([tmp_path]), cache=index_cache).build()
    eager = saved_index(Workspace([tmp_path]))
    lazy = saved_index(Workspace([tmp_path]), lazily=True)
    assert eager is not None and lazy is not None and lazy.files == {}
    assert lazy.current(tmp_path / "a.py") == eager.files[tmp_path / "a.py"]
    assert set(lazy.files) == {tmp_path / "a.py"}
    (tmp_path / "b.py").write_text("def three():\n    return 3\n")  # changed since the save
    assert lazy.current(tmp_path / "b.py") is None
    lazy.build()  # a build after it loads the others and parses the changed one
    assert {e.name_path for e in lazy.files[tmp_path / "b.py"].entries()} == {"three"}


def test_a_one_shot_search_answered_with_counts_loads_no_index(tmp_path, index_cache):
    """A search whose answer is counts alone shows no symbol: the saved index (its import and
    its table) is loaded when a record is first asked for, and here none is. One whose lines
    are shown loads it and names the symbols from its records."""
    for n in range(3):
        written_long_ago(tmp_path / f"m{n}.py", "class A:\n    def run(self):\n        return 1\n" * 2)
    SymbolIndex(Workspace([tmp_path]), cache=index_cache).build()
    counted = one_shot(tmp_path, index_cache, "search", "run", "--output", "count")
    shown = one_shot(tmp_path, index_cache, "search", "run")
    assert counted["code"] == shown["code"] == 0
    assert "lsp_agent.syntax.index" not in counted["modules"]
    assert "lsp_agent.syntax.index" in shown["modules"] and "2 A:" in shown["text"]  # line 2, in A
    index = saved_index(Workspace([tmp_path]), lazily=True)
    assert index is not None and index._saved is None  # the table is not read until a record is asked for
    assert index.current(tmp_path / "m0.py") is not None and index._saved is not None
