"""The symbols and find_symbol tools, and read by symbol, through the registry."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parent / "fixtures" / "symbols"


@pytest.fixture
def project(tmp_path):
    """A small project: fixtures in src/, an ignored build/ folder, a hidden folder."""
    shutil.copytree(FIXTURES, tmp_path / "src")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("def generated():\n    pass\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "secret.py").write_text("def secret():\n    pass\n")
    (tmp_path / "src" / "notes.txt").write_text("def not_code():\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    return tmp_path


def test_outline_of_a_file(project, run):
    answer = run("symbols", path="src/geometry.rs")
    assert answer["text"] == "\n".join([
        "src/geometry.rs · 13 symbols · stage: full tree",
        "constant PI  4",
        "trait Shape  6-11",
        "  method area  7",
        "  method name  8-10",
        "struct Circle  14-16",
        "enum Kind  18-21",
        "impl Circle  23-28",
        "  method area  24-27",
        "impl Kind  30-34",
        "  method fmt  31-33",
        "module util  36-43",
        "  function double  37-42",
        "    function helper  38-40",
    ])  # fmt: skip
    assert (answer["stage"], answer["depth"], answer["max_depth"]) == ("full tree", 3, 3)


def test_depth_argument_counts_hidden_children(project, run):
    answer = run("symbols", path="src/geometry.rs", depth=1)
    lines = answer["text"].splitlines()
    assert lines[0] == "src/geometry.rs · 13 symbols · stage: depth 1 of 3"
    assert "module util  36-43  (+2 inside)" in lines
    assert "depth=2" in lines[-1]


def test_folder_outline_honours_gitignore_and_hidden(project, run):
    answer = run("symbols", path=".")
    text = answer["text"]
    assert answer["stage"] == "full tree" and answer["files"] == 14
    assert "build/gen.py" not in text and "secret" not in text and "notes.txt" not in text
    assert "src/shapes.py  (7 symbols)" in text and "  class Point  9-22" in text


def test_folder_outline_never_leaves_the_workspace(project, tmp_path_factory, run):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "evil.py").write_text("def evil():\n    pass\n")
    os.symlink(outside, project / "src" / "link_dir")
    os.symlink(outside / "evil.py", project / "src" / "link.py")
    assert "evil" not in run("symbols", path=".")["text"]
    assert run("symbols", path="src/link.py")["error"]["code"] == "outside_workspace"
    assert run("symbols", path="../")["error"]["code"] == "outside_workspace"


def test_refusals(project, run):
    assert run("symbols", path="src/notes.txt")["error"]["code"] == "no_grammar"
    assert run("symbols", path="nope.py")["error"]["code"] == "not_found"


STAGES = ["full tree", "depth", "counts per file", "counts per folder", "counts per folder, cut"]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=200, max_value=3000))
def test_outline_fits_any_budget_and_shortens_in_order(project, budget):
    ctx = Context(Workspace([project]))
    answer = call(ctx, "symbols", {"path": ".", "max_chars": budget})
    if "error" in answer:
        assert answer["error"]["code"] == "budget_too_small" and answer["minimum"] > budget
        return
    assert len(answer["text"]) <= budget
    stage = answer["stage"]
    assert answer["text"].splitlines()[0].split(" · stage: ")[1].startswith(stage.split(",")[0].replace(" per ", " by kind per ").split(" of ")[0][:6])
    bigger = call(ctx, "symbols", {"path": ".", "max_chars": budget + 500})
    rank = lambda s: STAGES.index("depth" if s.startswith("depth") else s)  # noqa: E731
    assert rank(bigger["stage"]) <= rank(stage)
    if stage.startswith("depth"):
        assert bigger["depth"] >= answer["depth"]


def test_outline_sees_the_editor_buffer(project):
    ws = Workspace([project])
    ws.open_document(project / "src" / "deploy.sh", "fresh() {\n  true\n}\n")
    text = call(Context(ws), "symbols", {"path": "src/deploy.sh"})["text"]
    assert text.splitlines()[1:] == ["function fresh  1-3"]


# --- find_symbol ----------------------------------------------------------------------


def names(answer):
    return [(m["path"], m["name_path"]) for m in answer["matches"]]


def test_find_symbol_patterns(project, run):
    assert names(run("find_symbol", name_path="area")) == [
        ("src/geometry.rs", "Shape/area"), ("src/geometry.rs", "Circle/area"),
        ("src/shapes.cpp", "geo/Polygon/area"), ("src/shapes.cpp", "geo/Polygon/area"),
    ]  # fmt: skip
    assert names(run("find_symbol", name_path="Circle/area")) == [("src/geometry.rs", "Circle/area")]
    assert names(run("find_symbol", name_path="Circle.area")) == [("src/geometry.rs", "Circle/area")]
    assert names(run("find_symbol", name_path="/Polygon/area")) == []
    assert names(run("find_symbol", name_path="/geo/Polygon/area", path="src/shapes.cpp")) == [
        ("src/shapes.cpp", "geo/Polygon/area"), ("src/shapes.cpp", "geo/Polygon/area")]  # fmt: skip
    assert names(run("find_symbol", name_path="Shop.Billing")) == [("src/Scoped.cs", "Shop.Billing")]
    found = run("find_symbol", name_path="POLY", substring=True, kinds=["class"])
    assert names(found) == [("src/shapes.cpp", "geo/Polygon")]
    assert found["text"].splitlines() == [
        'find_symbol "POLY" (class) in the workspace · 1 match in 1 file · stage: locations',
        "src/shapes.cpp:8-23  class geo/Polygon",
    ]
    assert run("find_symbol", name_path="generated")["matches"] == []  # in an ignored folder
    assert run("find_symbol", name_path="nothing_like_this")["text"].endswith(
        "no matches (try substring=true, or outline a file with symbols path=FILE).")  # fmt: skip


def test_find_symbol_body_pages_exactly_the_symbol(project):
    ctx = Context(Workspace([project]))
    args = {"name_path": "Bank/Account", "include_body": True, "max_chars": 260}
    lines, pages = [], 0
    while True:
        answer = call(ctx, "find_symbol", args)
        assert len(answer["text"]) <= 260 and answer["stage"] == "body"
        lines += [line for line in answer["text"].splitlines() if re.match(r"^\s*\d+  ", line)]
        pages += 1
        if not answer["next"]:
            break
        args = {**args, **answer["next"]}
    source = (project / "src" / "account.rb").read_text().splitlines()
    assert pages > 1
    assert [line.split("  ", 1)[1] for line in lines] == source[4:25]


def test_find_symbol_bodies_of_several_matches(project, run):
    answer = run("find_symbol", name_path="price", include_body=True)
    assert answer["stage"] == "bodies"
    assert "── src/Cart.php:29-35  method App\\Shop/Cart/price" in answer["text"]
    assert "34          return array_reduce($this->items, $sum, 0.0);" in answer["text"]
    small = run("find_symbol", name_path="price", include_body=True, max_chars=350)
    assert small["stage"] == "locations" and "read path=FILE symbol=NAME_PATH" in small["text"]


def test_find_symbol_over_budget_counts_per_file(project, run):
    answer = run("find_symbol", name_path="a", substring=True, max_chars=400)
    assert answer["stage"] == "counts per file" and len(answer["text"]) <= 400
    assert "src/geometry.rs: 4 matches" in answer["text"]
    assert answer["text"].endswith("more files not listed: narrow with path=FOLDER or FILE, kinds=, or a longer name path]")


# --- read symbol= ---------------------------------------------------------------------


def test_read_symbol_pages_with_symbol_kept(project):
    ctx = Context(Workspace([project]))
    args = {"path": "src/Library.java", "symbol": "Library.map", "max_chars": 300}
    first = call(ctx, "read", args)
    assert first["text"].splitlines()[:2] == [
        "src/Library.java · lines 20-21 of 40 · version " + first["version"],
        "note: method Library/map, lines 20-24",
    ]
    assert first["next"] == {"start": 22, "symbol": "Library.map"}
    second = call(ctx, "read", {**args, **first["next"]})
    assert second["next"] is None and second["end"] == 24
    assert second["symbol"] == {"name_path": "Library/map", "kind": "method", "start_line": 20, "end_line": 24}


def test_read_symbol_refusals_and_ambiguity(project, run):
    missing = run("read", path="src/shapes.py", symbol="Nope")
    assert missing["error"]["code"] == "no_symbol" and "Point" in missing["text"]
    assert run("read", path="src/notes.txt", symbol="x")["error"]["code"] == "no_grammar"
    both = run("read", path="src/shapes.cpp", symbol="Polygon/area")
    assert "1 more symbol" in both["text"] and both["start"] == 13
    outside = run("read", path="src/shapes.py", symbol="Point", start=2)
    assert outside["error"]["code"] == "out_of_range"
