"""The symbols and find_symbol tools, and read by symbol, through the registry."""

from __future__ import annotations

import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.grammar_fixtures import copy_fixtures


@pytest.fixture
def project(tmp_path):
    """A small project: fixtures in src/, an ignored build/ folder, a hidden folder."""
    copy_fixtures(tmp_path / "src")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("def generated():\n    pass\n")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "secret.py").write_text("def secret():\n    pass\n")
    (tmp_path / "src" / "notes.txt").write_text("def not_code():\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    return tmp_path


def test_outline_of_a_file(project, run):
    answer = run("symbols", path="src/geometry.rs")
    assert answer["text"].splitlines() == [
        "src/geometry.rs · 13 symbols",
        "constant PI  4",
        "trait Shape  6-11",
        "  method area  7",
        "  method name  8-10",
        "struct Circle  13-16",
        "enum Kind  18-21",
        "impl Circle  23-28",
        "  method area  24-27",
        "impl Kind  30-34",
        "  method fmt  31-33",
        "module util  36-43",
        "  function double  37-42",
        "    function helper  38-40",
    ]
    assert (answer["stage"], answer["depth"], answer["max_depth"]) == ("full tree", 3, 3)


def test_outline_names_the_owner_of_a_method_defined_outside_it(project, run):
    go = run("symbols", path="src/server.go")["text"].splitlines()
    assert "method Server/Handle  24-26" in go and "  method Serve  10" in go
    cpp = run("symbols", path="src/shapes.cpp")["text"].splitlines()
    assert "  method Polygon/area  25-28" in cpp and "    method area  13" in cpp


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
    assert "src/shapes.py  (9 symbols)" in text and "  class Point  9-22" in text


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


STAGES = [
    "full tree",
    "depth",
    "ranked map",
    "counts per file",
    "counts per folder",
    "counts per folder, cut",
]


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
    assert (
        answer["text"]
        .splitlines()[0]
        .split(" · stage: ")[1]
        .startswith(stage.split(",")[0].replace(" per ", " by kind per ").split(" of ")[0][:6])
    )
    bigger = call(ctx, "symbols", {"path": ".", "max_chars": budget + 500})

    def rank(s):
        return STAGES.index("depth" if s.startswith("depth") else s)

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
        "1 match in 1 file",
        "src/shapes.cpp",
        "8-23 class geo/Polygon",
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
        body = answer["text"].splitlines()[1 : -1 if answer["next"] else None]  # between header and trailer
        lines += [re.sub(r"^\d+:", "", line) for line in body]  # `N:text`, or a bare line
        pages += 1
        if not answer["next"]:
            break
        assert answer["text"].endswith(f"read on with start={answer['next']['start']} symbol=/Bank/Account]")
        args = {**args, **answer["next"]}
    source = (project / "src" / "account.rb").read_text().splitlines()
    assert pages > 1
    assert lines == source[4:25]


def test_find_symbol_bodies_of_several_matches(project, run):
    answer = run("find_symbol", name_path="price", include_body=True)
    assert answer["stage"] == "bodies"
    assert "── src/Cart.php:29-35  method App\\Shop/Cart/price" in answer["text"]
    assert "34:        return array_reduce($this->items, $sum, 0.0);" in answer["text"]
    small = run("find_symbol", name_path="price", include_body=True, max_chars=350)
    assert small["stage"] == "locations" and "read path=FILE symbol=NAME_PATH" in small["text"]


def test_find_symbol_over_budget_counts_per_file(project, run):
    answer = run("find_symbol", name_path="a", substring=True, max_chars=400)
    assert answer["stage"] == "counts per file" and len(answer["text"]) <= 400
    assert "src/geometry.rs: 4 matches" in answer["text"]
    assert answer["text"].endswith(
        "more files not listed: narrow with path=FOLDER or FILE, kinds=, or a longer name path]"
    )


# --- read symbol= ---------------------------------------------------------------------


def test_read_symbol_pages_with_symbol_kept(project):
    ctx = Context(Workspace([project]))
    args = {"path": "src/Library.java", "symbol": "Library.map", "max_chars": 200}
    first = call(ctx, "read", args)
    end = first["end"]
    assert end < 24 and first["text"].splitlines()[0] == (
        f"method (lines 20-24) · lines 20-{end} of 40 · version " + first["version"]
    )
    assert first["next"] == {"start": end + 1, "symbol": "Library.map"}
    # the text names the same arguments: reading on without symbol= would run past the symbol
    assert first["text"].endswith(f"[read on with start={end + 1} symbol=Library.map]")
    last = first
    while last["next"]:  # pages on to the symbol's end, not past it
        last = call(ctx, "read", {**args, **last["next"]})
    assert last["end"] == 24
    assert last["symbol"] == {
        "name_path": "Library/map",
        "kind": "method",
        "start_line": 20,
        "end_line": 24,
    }


def test_read_symbol_refusals_and_ambiguity(project, run):
    missing = run("read", path="src/shapes.py", symbol="Nope")
    assert missing["error"]["code"] == "no_symbol" and "Point" in missing["text"]
    assert run("read", path="src/notes.txt", symbol="x")["error"]["code"] == "no_grammar"
    both = run("read", path="src/shapes.cpp", symbol="Polygon/area")
    assert "1 more symbol" in both["text"] and both["start"] == 13
    outside = run("read", path="src/shapes.py", symbol="Point", start=2)
    assert outside["error"]["code"] == "out_of_range"


def test_cli_prints_what_an_agent_gets(project):
    import subprocess
    import sys

    def cli(*args):
        done = subprocess.run([sys.executable, "-m", "lsp_agent", *args, "--root", str(project)],
                              capture_output=True, text=True, cwd=project, check=False)  # fmt: skip
        return done.returncode, done.stdout

    code, out = cli("symbols", "src/deploy.sh")
    assert code == 0 and out.splitlines()[1:] == ["function log  6-8", "function build  10-13",
                                                  "function deploy  15-21", "  function rollback  17-19"]  # fmt: skip
    code, out = cli("find-symbol", "rollback", "src", "--kind", "function")
    assert code == 0 and out.splitlines()[1:] == ["src/deploy.sh", "17-19 function deploy/rollback"]
    code, out = cli("read", "src/deploy.sh", "--symbol", "log")
    assert code == 0 and out.splitlines()[0].startswith("function · lines 6-8 of ")
    assert out.splitlines()[1:] == ["6:log() {", '7:  echo "[deploy] $*"', "8:}"]  # every line numbered
    code, out = cli("symbols", "src/notes.txt")
    assert code == 1 and "no symbols for this kind of file" in out


# --- any tree, any budget ---------------------------------------------------------------

symbol_names = st.sampled_from(["a", "run", "Message777", "to_dict", "x" * 40, "Handler", "é"])


@st.composite
def python_trees(draw, depth=0):
    """Python source of random nested classes and functions (name, children)."""
    children = draw(st.lists(python_trees(depth + 1), max_size=3)) if depth < 4 else []
    return (draw(st.sampled_from(["class", "def"])), draw(symbol_names), children)


def render(tree, indent=0):
    keyword, name, children = tree
    head = f"{' ' * indent}{keyword} {name}{'()' if keyword == 'def' else ''}:\n"
    return head + ("".join(render(c, indent + 4) for c in children) or f"{' ' * (indent + 4)}pass\n")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    files=st.lists(st.lists(python_trees(), min_size=1, max_size=4), min_size=1, max_size=5),
    budget=st.integers(min_value=200, max_value=2500),
    pattern=st.sampled_from(["a", "run", "Message777/to_dict", "Handler.run", "/a", "x"]),
    substring=st.booleans(),
    include_body=st.booleans(),
)
def test_symbol_answers_fit_any_budget(tmp_path_factory, files, budget, pattern, substring, include_body):
    root = tmp_path_factory.mktemp("trees")
    for n, trees in enumerate(files):
        folder = root / f"pkg{n % 2}"
        folder.mkdir(exist_ok=True)
        (folder / f"m{n}.py").write_text("".join(render(t) for t in trees))
    ctx = Context(Workspace([root]))
    answers = [
        call(ctx, "symbols", {"path": ".", "max_chars": budget}),
        call(ctx, "symbols", {"path": "pkg0/m0.py", "max_chars": budget}),
        call(ctx, "find_symbol", {"name_path": pattern, "substring": substring, "include_body": include_body,
                                  "max_chars": budget}),
    ]  # fmt: skip
    for answer in answers:
        if "error" in answer:
            assert answer["error"]["code"] == "budget_too_small" and answer["minimum"] > budget
            continue
        assert len(answer["text"]) <= budget
        stage = answer["stage"]
        if stage not in ("full tree", "locations", "bodies", "body"):  # shortened: says how to get more
            assert "path=" in answer["text"] or "depth=" in answer["text"]
        if stage == "body" and answer["next"]:
            assert "read on with start=" in answer["text"]


def test_outlines_and_find_symbol_report_how_far_they_are(project):
    import re

    reports: list[tuple[str, int | None]] = []
    ctx = Context(
        Workspace([project]), report=lambda message, percentage: reports.append((message, percentage))
    )
    scanned = call(ctx, "symbols", {"path": "src"})["files_scanned"]
    call(Context(ctx.workspace, report=ctx.report), "find_symbol", {"name_path": "area", "path": "src"})
    # Under load a later step may be reported too (after the throttle): each report's kind counts
    assert {re.sub(r" \d+ of \d+ files$", "", m) for m, _ in reports} == {"outlining", "looking in"}
    for message, percentage in reports:
        done, total = map(
            int, re.fullmatch(r"(?:outlining|looking in) (\d+) of (\d+) files", message).groups()
        )
        # find_symbol parses only the files whose text holds the name: some of those scanned
        assert total == scanned if message.startswith("outlining") else total <= scanned
        assert percentage == done * 100 // total
