"""The shortening chain: each stage by hand, the fitting rule as a property, and the overflow
case that motivated it (1,300 classes holding the same matched line)."""

from __future__ import annotations

import re
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from lsp_agent.budget import Overflow, most_that_fit
from lsp_agent.errors import Refusal
from lsp_agent.search import Match
from lsp_agent.tools import chain
from lsp_agent.tools.chain import MIN_WIDTH, Search, fit, render, widest
from tests.support.search_helpers import located, outcome, symbols_from

ROWS = {
    "a.py": [(3, "    return x  # first"), (4, "    return y"), (10, "print(x)")],
    "notes.txt": [(1, "x marks the spot…")],
}
SYMBOLS = symbols_from({"a.py": {3: "A/f", 4: "A/f", 10: None}, "notes.txt": None})
TOTALS = "4 matches in 2 files"
MORE = 'more: full matches with offset=0 limit=4; paths=["a.py"] (3 matches)'


def search(**kwargs) -> Search:
    context = kwargs.pop("context", None)
    return Search(outcome(ROWS, context=context), SYMBOLS, **kwargs)


def stage(n: int, width: int | None = None, **kwargs) -> str:
    return render(search(**kwargs), n, width)[0]


def test_stage_1_full_matches_ripgrep_style_with_the_symbol_where_it_changes():
    s = search(context={"a.py": {2: "  def f(self):", 5: "", 9: "x = 1"}}, before=1, after=1)
    assert render(s, 1)[0] == "\n".join(
        [
            TOTALS,  # nothing shortened, nothing paged: the totals are the whole header
            "a.py",
            "2-  def f(self):",
            "3 A/f:    return x  # first",
            "4:    return y",  # still in A/f: not named again
            "5-",
            "--",
            "9-x = 1",
            "10 <module>:print(x)",  # back at the top level after a symbol
            "notes.txt",
            "1:x marks the spot\\u2026",  # a literal … at the end is escaped: only cut lines end in …
        ]
    )


def test_a_line_that_defines_its_symbol_is_labelled_with_the_symbol_around_it():
    rows = {"m.py": [(1, "class A:"), (2, "    def f(self):"), (3, "        f = 1"), (5, "    def g(self):")]}
    names = {"m.py": {1: "A", 2: "A/f", 3: "A/f", 5: "A/g"}}
    defines = {("m.py", 1), ("m.py", 2), ("m.py", 5)}
    s = Search(outcome(rows), symbols_from(names, defines))
    assert render(s, 1)[0].split("\n")[1:] == [
        "m.py",
        "1:class A:",  # names A itself, at the top level: no label
        "2 A:    def f(self):",  # names f: the label says where f is
        "3 A/f:        f = 1",
        "5 A:    def g(self):",
    ]
    # without the text (stage 4) the line no longer names its symbol: the label does
    assert render(s, 4)[0].split("\n")[-4:] == ["1 A", "2 A/f", "3", "5 A/g"]


def test_stage_2_one_line_per_match():
    assert stage(2) == "\n".join(
        [
            f"{TOTALS} · stage 2/7: one line per match, without indentation",
            MORE,
            "a.py",
            "3 A/f:return x  # first",
            "4:return y",
            "10 <module>:print(x)",
            "notes.txt",
            "1:x marks the spot\\u2026",
        ]
    )


def test_stage_3_states_its_width_and_marks_exactly_the_cut_lines():
    assert stage(3, 16) == "\n".join(
        [
            f"{TOTALS} · stage 3/7: one line per match cut to 16 characters (a cut line ends with …), "
            "without indentation",
            MORE,
            "a.py",
            "3 A/f:return x  # fir…",
            "4:return y",
            "10 <module>:print(x)",
            "notes.txt",
            "1:x marks the spo…",
        ]
    )


def test_stage_3_cuts_around_a_match_far_into_the_line():
    far = "a" * 40 + "NEEDLE" + "b" * 40
    s = Search(outcome({"f.txt": [(7, far)]}), symbols_from({}))
    s.files[0].matches[0] = type(s.files[0].matches[0])(7, (far,), 40, 46)
    assert render(s, 3, 20)[0].split("\n")[-1] == "7:…aaaNEEDLEbbbbbbbbb…"


def test_stage_4_line_numbers_with_symbols():
    assert stage(4) == "\n".join(
        [
            f"{TOTALS} · stage 4/7: line numbers and symbols, without the text",
            MORE,
            *["a.py", "3 A/f", "4", "10 <module>", "notes.txt", "1"],
        ]
    )


def test_stage_5_line_numbers_per_file_explains_its_ranges():
    assert stage(5) == "\n".join(
        [
            f"{TOTALS} · stage 5/7: line numbers per file, without the text and symbols"
            " · N-M: a match on each line from N to M",
            MORE,
            "a.py: 3-4, 10",
            "notes.txt: 1",
        ]
    )


def test_stage_6_counts_per_file():
    assert stage(6) == "\n".join(
        [
            f"{TOTALS} · stage 6/7: match counts per file, without line numbers",
            MORE,
            "a.py: 3",
            "notes.txt: 1",
        ]
    )


def test_stage_7_summary():
    assert stage(7) == "\n".join(
        [
            f"{TOTALS} · stage 7/7: a summary, without the list of files",
            MORE,
            "by folder: . 4 (2 files)",
            "by type: *.py 3 (1 file); *.txt 1 (1 file)",
        ]
    )


def test_more_offers_the_likely_next_call_first():
    many = {f"d{n % 3}/f{n}.py": [(k, f"x = {k}") for k in range(1, 40)] for n in range(12)}
    s = Search(outcome(many), symbols_from({}), budget=800)
    more = render(s, 6)[0].split("\n")[1]
    # many pages of full matches: narrowing to the busiest folder comes first, paging stays offered
    assert more.startswith('more: paths=["d0"] (156 matches); full matches with offset=0 limit=')
    few = Search(outcome({"a.py": [(30, "x = 1")], "b.py": [(4, "y = 2")]}), symbols_from({}))
    # one or two matches: the likely next step is reading around one
    assert render(few, 5)[0].split("\n")[1].startswith('more: read path="a.py" start=25; full matches')


def test_binary_files_are_counted_in_every_stage():
    s = Search(outcome(ROWS, binary=["img.png"]), SYMBOLS)
    for n in range(1, 8):
        assert "binary files with matches, skipped: 1 (img.png)" in render(s, n, 16)[0].split("\n")[1]


def test_fit_takes_the_first_stage_that_fits():
    s = search()
    sizes = {n: len(render(s, n, MIN_WIDTH if n == 3 else None)[0]) for n in range(1, 8)}
    for budget in sorted({*sizes.values(), *(v - 1 for v in sizes.values())}):
        fitting = [n for n in range(1, 8) if sizes[n] <= budget]
        if not fitting:
            with pytest.raises(Refusal):
                fit(s, budget)
            continue
        answer = fit(s, budget)
        assert answer["stage"] == fitting[0] and len(answer["text"]) <= budget


def test_budget_too_small_for_the_summary_says_the_minimum():
    s = search()
    with pytest.raises(Refusal) as refused:
        fit(s, 100)
    minimum = refused.value.fields["minimum"]
    assert f"the smallest budget for this search is {minimum}" in refused.value.message
    assert len(fit(s, minimum)["text"]) == minimum  # and that minimum is enough
    with pytest.raises(Refusal):
        fit(s, minimum - 1)


def test_paging_shows_the_requested_matches_and_the_next_page():
    s = Search(outcome(ROWS), SYMBOLS, offset=1, limit=2)
    answer = fit(s, 10_000)
    assert answer["stage"] == 1 and answer["next"] == {"offset": 3, "limit": 2}
    assert answer["text"].split("\n")[:2] == [
        "4 matches in 2 files, showing matches 2-3",
        "more: offset=3 limit=2 for the next page",
    ]
    assert "4 A/f:    return y" in answer["text"] and "10 <module>:print(x)" in answer["text"]
    assert "3:" not in answer["text"] and "notes.txt" not in answer["text"]


# --- the property ------------------------------------------------------------------------------

line_text = st.tuples(
    st.integers(0, 6),
    st.text(
        st.characters(min_codepoint=32, max_codepoint=0x2026, exclude_categories=("Cs",)),
        min_size=10,
        max_size=120,
    ),
).map(lambda t: "    " * t[0] + t[1])  # indented, as code is
files_strategy = st.dictionaries(
    st.from_regex(r"[a-c]{1,3}/[a-z]{1,6}\.(py|txt)", fullmatch=True),
    st.lists(st.tuples(st.integers(1, 3000), line_text), min_size=10, max_size=40, unique_by=lambda r: r[0]),
    min_size=1,
    max_size=4,
)


@settings(max_examples=100, deadline=None)
@given(files=files_strategy, data=st.data())
def test_property_within_budget_earliest_stage_covering_every_match(files, data):
    rows = {path: sorted(r) for path, r in files.items()}
    table = {}
    for path, r in rows.items():
        if path.endswith(".py"):
            table[path] = {line: data.draw(st.sampled_from([None, "A", "A/f", "B/g"])) for line, _ in r}
    s = Search(outcome(rows), symbols_from(table))
    budget = data.draw(st.integers(200, max(200, len(render(s, 1)[0]) + 200)), label="budget")
    try:
        answer = fit(s, budget)
    except Refusal as refusal:
        assert len(render(s, 7, lists=False)[0]) > budget
        assert refusal.fields["minimum"] > budget
        return
    text, chosen = answer["text"], answer["stage"]
    event(f"stage {chosen}")
    assert len(text) <= budget
    # the earliest stage that fits: every earlier stage is over the budget
    for earlier in range(1, chosen):
        width = MIN_WIDTH if earlier == 3 else None
        if earlier == 3 and widest(s) - 1 < MIN_WIDTH:
            continue  # no line is wider than the narrowest cut: stage 3 would be stage 2
        assert len(render(s, earlier, width)[0]) > budget, earlier
    assert (f"stage {chosen}/7" in text.split("\n")[0]) == (chosen > 1)
    # covers every match
    body = text.split("\n")
    if chosen <= 5:
        shown = lines_per_file(text, [f.shown for f in s.files])
        for f in s.files:
            assert {m.line for m in f.matches} <= shown[f.shown]
    elif chosen == 6:
        counts = dict(re.findall(r"^(\S+): ([\d,]+)$", text, re.MULTILINE))
        assert {p: int(c.replace(",", "")) for p, c in counts.items()} == {p: len(r) for p, r in rows.items()}
    else:
        assert f"{sum(len(r) for r in rows.values()):,} match" in body[0]
    # only cut lines end with …
    if chosen in (2, 3):
        originals = {(f.shown, m.line): m.lines[0].strip() for f in s.files for m in f.matches}
        current = None
        for line in body[2:]:
            if any(line == f.shown for f in s.files):
                current = line
                continue
            m = re.match(r"(\d+)(?: [^:\s]+)?:(.*)$", line)
            original = originals[(current, int(m.group(1)))]
            shown = m.group(2)
            if shown.endswith("…"):
                assert shown != original and shown.strip("…") in original
                assert chosen == 3 or original.endswith("…")
            else:
                assert shown == original.removesuffix("…") + ("\\u2026" if original.endswith("…") else "")


NOTES = ("more:", "binary files", "left out:")


def lines_per_file(text: str, paths: list[str]) -> dict[str, set[int]]:
    """The line numbers an answer of stages 1-5 gives for each file."""
    found: dict[str, set[int]] = {p: set() for p in paths}
    current = None
    for line in text.split("\n")[1:]:
        if line.startswith(NOTES):
            continue
        head, _, rest = line.partition(": ")
        if line in paths or head in paths:
            current = line if line in paths else head
            numbers = rest if head in paths else ""
        elif re.match(r"\d", line):  # stages 1-4: "12:text", "12 Symbol:text", "12 Symbol", "12"
            numbers = (
                re.match(r"\d+(?:-\d+)?(?=[: ]|$)", line).group(0)
                if re.match(r"\d+(-\d+)?([: ]|$)", line)
                else ""
            )
        elif line == "--":
            continue
        else:
            raise AssertionError(f"not a line of stages 1-5: {line!r}")
        for n in re.findall(r"\d+(?:-\d+)?", numbers):
            a, _, b = n.partition("-")
            found[current].update(range(int(a), int(b or a) + 1))
    return found


# --- the overflow case ------------------------------------------------------------------------


def messages_file(root: Path, classes: int = 1300) -> Path:
    lines = []
    for n in range(1, classes + 1):
        lines += [
            f"class Message{n}:",
            "    def __init__(self):",
            f"        self.id = {n}",
            "",
            "    def to_dict(self):",
            '        return {"id": self.id, "kind": "message"}',
            "",
            "",
        ]
    path = root / "messages.py"
    path.write_text("\n".join(lines))
    return path


def test_message777_is_located_from_the_answer_alone(tmp_path, run):
    path = messages_file(tmp_path)
    truth = path.read_text().split("\n").index("class Message777:") + 6  # its return line
    answer = run("search", pattern='return {"id": self.id', fixed_strings=True, max_chars=60_000)
    assert answer["total_matches"] == 1300
    assert answer["stage"] > 1  # the full matches do not fit
    assert len(answer["text"]) <= 60_000
    assert located(answer["text"])["Message777/to_dict"] == [truth]


def test_readme_states_the_figures_per_10000_characters(tmp_path):
    from benchmarks.bench_search import message_figures

    readme = (Path(__file__).parents[2] / "README.md").read_text()
    figures = {stage: (chars, per_10k) for stage, chars, per_10k in message_figures(tmp_path)}
    assert [figures[n][1] for n in range(1, 8)] == [135, 151, 243, 413, 0, 0, 0]
    for stage in (1, 2, 3, 4, 5):
        chars, per_10k = figures[stage]
        row = next(
            line for line in readme.split("\n") if line.startswith(f"| {stage} ") and f"| {chars:,} |" in line
        )
        assert row.rstrip().endswith(f"| {per_10k} |") or f"| {per_10k} (" in row


def drawn_pages(s: Search, offset: int, most: int):
    """The straightforward page sizer: every page tried is drawn whole."""

    def fits(n: int) -> bool:
        try:
            render(s.page_of(offset, n), 1, budget=s.budget - chain.NEXT_LINE, guide=False)
            return True
        except Overflow:
            return False

    return fits


def answer_or_refusal(s: Search, budget: int):
    try:
        return fit(s, budget)
    except Refusal as refusal:
        return refusal.code, refusal.message


@settings(max_examples=150, deadline=None)
@given(files=files_strategy, data=st.data())
def test_property_sizing_shortcuts_change_no_answer(files, data):
    """Pages sized from one drawing, stages ruled out by their lines alone and stage 3's width
    guessed from its lines' sizes give the answers of the straightforward chain, which draws
    every page, stage and width it tries."""
    rows = {path: sorted(r) for path, r in files.items()}
    before, after = data.draw(st.integers(0, 2), label="before"), data.draw(st.integers(0, 2), label="after")
    context: dict[str, dict[int, str]] = {}
    for path, r in rows.items():
        matched = {line for line, _ in r}
        around = {n for line, _ in r for n in range(max(1, line - before), line + after + 1)} - matched
        context[path] = {n: f"ctx {n}" for n in around}
    o = outcome(rows, context=context)
    for f in o.files:  # some matches go on over the next line (multiline), where it is free
        lines = {m.line for m in f.matches} | set(f.context)
        f.matches = [
            Match(m.line, (*m.lines, "go on"), m.col, m.end)
            if m.line + 1 not in lines and data.draw(st.booleans())
            else m
            for m in f.matches
        ]
    table, defines = {}, set()
    for path, r in rows.items():
        if path.endswith(".py"):
            table[path] = {line: data.draw(st.sampled_from([None, "A", "A/f", "B/g"])) for line, _ in r}
            defines |= {(path, line) for line, _ in r if data.draw(st.booleans())}
    paging = data.draw(st.booleans(), label="paging")
    offset = data.draw(st.integers(0, o.total - 1), label="offset") if paging else 0
    limit = data.draw(st.none() | st.integers(1, o.total + 5), label="limit") if paging else None
    notes = data.draw(st.lists(st.sampled_from(["left out: x", "only matches in code"]), max_size=2))

    def new_search() -> Search:
        s = Search(o, symbols_from(table, defines), before, after, offset, limit)
        s.extra_notes = list(notes)
        return s

    s = new_search()
    sizes = [len(render(s, k, MIN_WIDTH if k == 3 else None)[0]) for k in range(1, 8)]
    sizes.append(len(render(s, 3, max(MIN_WIDTH, widest(s) // 2))[0]))
    near = data.draw(st.sampled_from(sizes), label="near the size of")  # where stages win or lose
    budget = max(100, near + data.draw(st.integers(-40, 40), label="off by"))
    widths: list[int | None] = []  # stage 3's drawings within the budget, by width

    def counted(s: Search, stage: int, width: int | None = None, *args, **kwargs):
        widths.extend([width] if stage == 3 and (args or "budget" in kwargs) else [])
        return render(s, stage, width, *args, **kwargs)

    with patch.object(chain, "render", counted):
        shortcut = answer_or_refusal(new_search(), budget)
    if isinstance(shortcut, dict) and shortcut["stage"] == 3 and not paging:  # no width drawn twice
        assert len(widths) == len(set(widths)) and shortcut["width"] in widths
    with (
        patch.object(chain, "page_fits", drawn_pages),
        patch.object(chain, "least_size", lambda s, w: 0),
        patch.object(chain, "width_guess", lambda *arguments: None),
    ):
        straightforward = answer_or_refusal(new_search(), budget)
    event(f"stage {shortcut['stage']}" if isinstance(shortcut, dict) else "refused")
    assert shortcut == straightforward
    if isinstance(shortcut, dict) and shortcut["stage"] == 3 and not paging:  # the guess is the width
        s = new_search()
        s.budget = budget  # as fit sets it: its "more" line's page size depends on it
        assert chain.width_guess(s, widest(s) - 1, budget) == shortcut["width"]


def test_most_that_fit_takes_the_largest_count_and_refuses_naming_one_items_size():
    def render(k: int) -> list[str]:
        return ["head", *(f"item {n}" for n in range(k))]  # 4 characters, then 7 more an item

    assert most_that_fit(10, render, 4 + 7 * 3, "item") == 3
    assert most_that_fit(10, render, 4 + 7 * 4 - 1, "item") == 3
    assert most_that_fit(2, render, 10_000, "item") == 2
    with pytest.raises(Refusal) as refused:
        most_that_fit(10, render, 10, "item")
    assert refused.value.code == "budget_too_small"
    assert str(refused.value) == "max_chars=10 is too small for one item; use at least 11."
