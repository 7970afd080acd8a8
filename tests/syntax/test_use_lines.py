"""Where references looks (issue 28 item 2): ripgrep only names the files; the lines of a
name's uses come from the file's use table when its record is current, else from one scan of
its text, and the enclosing symbols from the record without building its segments. Each
must give exactly what the slower way gave: the answer's text does not change."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.syntax.index import fresh_parse, make_record, outline_rows, read_record
from lsp_agent.syntax.languages import language_for
from lsp_agent.syntax.references import (
    TOKEN,
    _classify,
    occurrences,
    record_labels,
    table_lines,
    table_stamp,
    word_lines,
    word_pattern,
)
from lsp_agent.tools.references import text_width, widths_at
from lsp_agent.workspace import Text

FIXTURES = Path(__file__).parents[1] / "fixtures"


def seen(uses) -> list[tuple]:
    return [(u.line, u.column, u.role, u.qualified) for u in uses]


def lines_with(text: Text, name: str) -> list[int]:
    """The lines classify finds uses of `name` on: those where it occurs as a whole word."""
    return [n for n in range(1, text.line_count + 1) if word_pattern(name).search(text.line(n))]


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list("ab$_ .(9\n\r\té\u0301ё")), max_size=80),
    st.sampled_from(["a", "ab", "aa", "$a", "a$", "b_", "é", "_"]),
)
def test_word_lines_are_the_lines_holding_the_name_as_a_word(content, name):
    """Property: any text (CRLF, a lone CR, marks, `$`, a name inside a longer one, one
    repeated), any name: the scan's lines are those a line-by-line search of the whole-word
    pattern finds, and each line's columns are its matches."""
    for text in (Text.from_str(content), Text.from_bytes(content.encode("utf-8", "surrogatepass"))):
        assert word_lines(text, name) == lines_with(text, name)
        for n in range(1, text.line_count + 1):
            line = text.line(n)
            assert occurrences(line, name) == [m.start() for m in word_pattern(name).finditer(line)]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for part in ("grammars", "navigation", "precision", "semantic"):
        shutil.copytree(FIXTURES / part, root / part)
    return root


def source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and language_for(p) is not None)


def test_a_tables_lines_give_every_use_of_each_word(corpus):
    """Every word of every fixture file (every grammar): classify on the lines the table
    names gives what it gives on every line of the file, and the lines are the scan's."""
    words = 0
    for path in source_files(corpus):
        language = language_for(path)
        record = read_record(str(path), language, "utf-16", [str(corpus)], table=True)
        assert record is not None
        table = record.table(table_stamp(language))
        if table is None:
            continue
        text = Text.from_bytes(path.read_bytes())
        every_line = list(range(1, text.line_count + 1))
        for name in sorted(set(TOKEN.findall(text.content))):
            if name[0].isdigit():
                continue
            lines = table_lines(table, name)
            assert lines == word_lines(text, name), (path, name)
            assert seen(_classify(path, text, name, lines)) == seen(_classify(path, text, name, every_line))
            words += 1
    assert words > 800
    assert table_lines(table, "not-a-word") is None and table_lines(table, "nowhere_in_it") == []


def test_record_labels_are_the_records_line_symbols(corpus):
    """Every line of every fixture file (and past its end): the one-pass labels are what the
    record's segments say."""
    checked = 0
    for path in source_files(corpus):
        language = language_for(path)
        record = read_record(str(path), language, "utf-16", [str(corpus)])
        assert record is not None
        text = Text.from_bytes(path.read_bytes())
        lines = list(range(1, text.line_count + 3))
        around = record.line_symbols().around
        assert record_labels(record, lines) == {n: around(n) for n in lines}, path
        checked += bool(record.kinds)
    assert checked > 30


NESTED = st.sampled_from(
    [
        "class C{n}:",
        "def f{n}(): pass",
        "def g{n}():",
        "x{n} = 1",
        "a{n}, b{n} = 1, 2",  # two definitions of one range: siblings
        "class D{n}: pass; y = 2",
        "async def h{n}(a,",
        "    b): return a",
        "@decorated",
        "",
    ]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(NESTED, st.integers(0, 3)), min_size=1, max_size=25), st.data())
def test_record_labels_on_any_nesting(pieces, data):
    """Property: nested, sibling, one-line and broken definitions: any sorted lines get the
    labels the record's segments give them."""
    content = "\n".join("    " * depth + piece.format(n=n) for n, (piece, depth) in enumerate(pieces)) + "\n"
    text = Text.from_str(content, from_editor=False)
    path = Path("/nowhere/nested.py")
    record = make_record(text, "python", outline_rows(path, text), "utf-16", -1, 0, "nested.py", fresh_parse("python", content.encode()))  # fmt: skip
    lines = sorted(data.draw(st.sets(st.integers(1, text.line_count + 2))))
    around = record.line_symbols().around
    assert record_labels(record, lines) == {n: around(n) for n in lines}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.sampled_from(list("ab \t\x1b[m")), max_size=30)), st.integers(0, 40))
def test_widths_at_adds_up_each_texts_cut(texts, width):
    """Property: the widths found by bisection are the cut texts' widths added up."""
    assert widths_at(texts)(width) == sum(text_width(t, width) for t in texts)
