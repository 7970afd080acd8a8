"""Paging exactly once: from any first answer, following `next` delivers every matched line
once, in order, each page within its budget and naming the symbols of its lines; a match too
long for the budget comes alone, cut, with the read that shows it whole; no loop."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.syntax import enclosing_symbols, outline, walk
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Text, Workspace

TOP_LEVEL = "<module>"
LINE = st.sampled_from(["needle", "x = needle(1)", "hay", "needle needle", "pass", "return needle  # needle"])
LONG = st.integers(50, 3_000).map(lambda n: "needle " + "y" * n)


@st.composite
def python_file(draw) -> str:
    """Top-level lines, functions and classes with methods, some lines matching."""
    out = []
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["line", "def", "class"]))
        body = [draw(st.one_of(LINE, LONG) if draw(st.integers(0, 9)) == 0 else LINE) for _ in range(3)]
        if kind == "line":
            out += body
        elif kind == "def":
            out += [f"def f{i}():", *(f"    {b}" for b in body)]
        else:
            out += [f"class C{i}:", f"    def m{i}(self):", *(f"        {b}" for b in body)]
    return "\n".join(out) + "\n"


TREES = st.dictionaries(
    st.sampled_from(["a.py", "b.py", "pkg/c.py", "pkg/deep/d.py", "notes.txt"]), python_file(), min_size=1
)


def page_lines(text: str) -> list[tuple[str, int, str]]:
    """(file, line, label) of each match line a stage-1 page shows: `LINE[ SYMBOL]:TEXT`, the
    symbol named when it changes (a file starts at the top level)."""
    found, file, label = [], None, TOP_LEVEL
    for line in text.split("\n")[1:]:
        if line.startswith("more: ") or line == "--" or re.match(r"\d+-", line):
            continue
        if m := re.match(r"(\d+)(?: ([^:\s]+))?:", line):
            label = m.group(2) or label
            found.append((file, int(m.group(1)), label))
        else:
            file, label = line.removesuffix(" (editor buffer, unsaved changes included)"), TOP_LEVEL
    return found


def follow(root: Path, arguments: dict, budget: int) -> None:
    ws = Workspace([root])
    ctx = Context(ws, Settings())
    every = call(ctx, "search", {**arguments, "max_chars": 10_000_000})
    if "error" in every:
        return
    truth = [(loc["path"], loc["line"]) for loc in every["locations"]]
    answer = call(ctx, "search", {**arguments, "max_chars": budget})
    assert "error" not in answer, answer["text"]
    assert len(answer["text"]) <= budget
    if answer["next"] is None:
        assert answer["stage"] == 1 and [(loc["path"], loc["line"]) for loc in answer["locations"]] == truth
        return
    assert answer["next"]["offset"] == 0
    delivered: list[tuple[str, int]] = []
    for _ in range(len(truth) + 1):  # never a loop: every page moves on
        if answer["next"] is None:
            break
        before = len(delivered)
        answer = call(ctx, "search", {**arguments, **answer["next"], "max_chars": budget})
        assert "error" not in answer, answer["text"]
        assert len(answer["text"]) <= budget, answer["text"]
        shown = [(loc["path"], loc["line"]) for loc in answer["locations"]]
        delivered += shown
        assert len(delivered) > before
        if answer["stage"] == 1:
            on_page = page_lines(answer["text"])
            assert [(f, n) for f, n, _ in on_page] == shown
            assert_symbols(ws, on_page)
        else:  # one match too long for the budget: alone, cut (or shorter still), with the read
            assert len(shown) == 1
            path, line = shown[0]
            assert f'read it whole with read path="{path}" start={line}' in answer["text"]
    else:
        raise AssertionError("following next did not end")
    assert delivered == truth


def assert_symbols(ws: Workspace, on_page: list[tuple[str, int, str]]) -> None:
    for file in {f for f, _, _ in on_page}:
        if not file.endswith(".py"):
            continue
        path = ws.roots[0] / file
        lines = [n for f, n, _ in on_page if f == file]
        text = Text.from_str(path.read_text())
        expected = enclosing_symbols(path, text, lines)
        named_on = {s.selection[0] + 1: s.name_path for s in walk(outline(path, text))}
        for n, name in expected.items():  # a line naming its symbol is labelled with the one around it
            if name is not None and named_on.get(n) == name:
                expected[n] = name.rsplit("/", 1)[0] if "/" in name else None
        assert [label for f, _, label in on_page if f == file] == [expected[n] or TOP_LEVEL for n in lines]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    files=TREES,
    pattern=st.sampled_from(["needle", r"\bneedle\b", "ne+dle|hay", "e", "y{40}", "return"]),
    budget=st.integers(300, 4_000),
    context=st.integers(0, 2),
)
def test_following_next_delivers_every_matched_line_exactly_once(files, pattern, budget, context):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        for name, body in files.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(body)
        follow(root, {"pattern": pattern, "context_before": context, "context_after": context}, budget)


def test_a_match_longer_than_the_budget_comes_cut_and_paging_goes_on(tmp_path):
    lines = ["def short():", "    needle", "def long():", "    x = 'needle" + "z" * 5_000 + "'"]
    lines += [f"def after{i}():\n    needle {i}" for i in range(30)]
    (tmp_path / "m.py").write_text("\n".join(lines) + "\n")
    follow(tmp_path.resolve(), {"pattern": "needle"}, 600)
    ctx = Context(Workspace([tmp_path]), Settings())
    cut = call(ctx, "search", {"pattern": "needle", "offset": 1, "limit": 5, "max_chars": 600})
    assert cut["stage"] == 3 and cut["next"] == {"offset": 2, "limit": cut["next"]["limit"]}
    assert cut["text"].startswith("32 matches in 1 file, showing matches 2-2 · stage 3/7: ")
    assert cut["text"].split("\n")[-1].startswith("4 long:x = 'needle") and cut["text"].endswith("…")
    assert 'more: read it whole with read path="m.py" start=4; offset=2 limit=' in cut["text"]
