"""The syntax core: language table, outlines, enclosing symbols, the parse cache."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import enclosing_symbol, enclosing_symbols, language_for, outline, walk
from lsp_agent.syntax.outline import build
from lsp_agent.syntax.parsing import ParseCache, common_prefix, common_suffix, encode, input_edit
from lsp_agent.workspace import Text, Workspace

PYTHON = '''\
import os

MAX_SIZE = 10
other = 3


@dataclass
class Message:
    """Doc."""

    def to_dict(self):
        def inner():
            return 1
        return inner()

    @property
    def size(self):
        return 2


def top():
    pass
'''


def shape(symbols):
    return [(s.kind, s.name_path, s.start_line, s.end_line, shape(s.children)) for s in symbols]


def test_language_table():
    assert language_for("a/b.py") == "python"
    assert language_for("x.TSX") == "tsx"
    assert language_for("lib.h") == "cpp"
    assert language_for("Rakefile") == "ruby"
    assert language_for("notes.txt") is None
    assert language_for("Makefile") is None


def test_python_outline_nesting_and_ranges(tmp_path):
    path = tmp_path / "m.py"
    assert shape(outline(path, Text.from_str(PYTHON))) == [
        ("constant", "MAX_SIZE", 3, 3, []),
        ("variable", "other", 4, 4, []),
        ("class", "Message", 7, 18, [
            ("method", "Message/to_dict", 11, 14, [("function", "Message/to_dict/inner", 12, 13, [])]),
            ("method", "Message/size", 16, 18, []),
        ]),
        ("function", "top", 21, 22, []),
    ]  # fmt: skip


def test_enclosing_symbol_inside_between_outside(tmp_path):
    path, text = tmp_path / "m.py", Text.from_str(PYTHON)
    assert enclosing_symbol(path, text, 1) is None
    assert enclosing_symbol(path, text, 7) == "Message"  # the decorator belongs to the class
    assert enclosing_symbol(path, text, 9) == "Message"
    assert enclosing_symbol(path, text, 13) == "Message/to_dict/inner"
    assert enclosing_symbol(path, text, 14) == "Message/to_dict"
    assert enclosing_symbol(path, text, 15) == "Message"  # blank line between two methods
    assert enclosing_symbol(path, text, 19) is None
    assert enclosing_symbol(path, text, 22) == "top"
    assert enclosing_symbol(path, text, 999) is None


def test_unknown_language_has_no_symbols(tmp_path):
    text = Text.from_str("def f():\n  pass\n")
    assert outline(tmp_path / "notes.txt", text) == []
    assert enclosing_symbols(tmp_path / "notes.txt", text, [1, 2]) == {1: None, 2: None}


def test_outline_is_cached_by_version(tmp_path):
    path = tmp_path / "m.py"
    first = outline(path, Text.from_str(PYTHON))
    assert outline(path, Text.from_str(PYTHON)) is first
    changed = outline(path, Text.from_str(PYTHON.replace("def top", "def bottom")))
    assert changed is not first and changed[-1].name == "bottom"


def test_importing_the_syntax_package_loads_no_grammar():
    code = "import sys, lsp_agent.server, lsp_agent.syntax; print([m for m in sys.modules if m.startswith('tree_sitter')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


# --- enclosing_symbols agrees with a brute-force search over the outline ---------------


def brute_force(symbols, line):
    best = None
    for s in walk(symbols):
        if s.start_line <= line <= s.end_line:
            best = s.name_path  # walk is pre-order: later hits are deeper or later siblings
    return best


def test_enclosing_symbols_matches_brute_force(tmp_path):
    source = Path(__file__).read_text()
    path, text = tmp_path / "copy.py", Text.from_str(source)
    symbols = outline(path, text)
    lines = range(text.line_count + 3)
    assert enclosing_symbols(path, text, lines) == {n: brute_force(symbols, n) for n in lines}


# --- incremental re-parse ---------------------------------------------------------------


@given(st.binary(max_size=60), st.binary(max_size=60))
def test_common_prefix_and_suffix(a, b):
    p = common_prefix(a, b)
    assert a[:p] == b[:p] and (p == min(len(a), len(b)) or a[p] != b[p])
    limit = min(len(a), len(b)) - p
    s = common_suffix(a, b, limit)
    assert s <= limit and a[len(a) - s :] == b[len(b) - s :]
    assert s == limit or a[len(a) - s - 1] != b[len(b) - s - 1]


def test_input_edit_never_splits_a_character():
    edit = input_edit("é".encode(), "è".encode())  # same first byte 0xC3
    assert edit["start_byte"] == 0 and edit["old_end_byte"] == 2


pieces = st.sampled_from(["def f(x):\n", "    return x\n", "class A:\n", "    def m(self):\n",
                          "        pass\n", "\n", "é = 1\n", "@deco\n", ")", "  # 𝄞\n", "X = 2\n"])  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(pieces, max_size=25), min_size=1, max_size=6))
def test_incremental_reparse_equals_a_fresh_parse(tmp_path_factory, versions):
    path = tmp_path_factory.mktemp("inc") / "m.py"
    cache = ParseCache()
    for pieces_of_version in versions:
        text = Text.from_str("".join(pieces_of_version))
        incremental = cache.parse(path, text, "python")
        fresh = ParseCache().parse(path, text, "python")
        assert str(incremental.tree.root_node) == str(fresh.tree.root_node)
        assert shape(build(incremental)) == shape(build(fresh))
    # each version after the first from the one before (an incremental parse redone afresh
    # where it kept an error the edit may have undone: see parsing.stale_error)
    assert cache.counts["incremental"] + cache.counts["cached"] + cache.counts["afresh"] == len(versions) - 1


def test_parse_cache_reuses_and_reparses(tmp_path):
    cache, path = ParseCache(), tmp_path / "m.py"
    cache.parse(path, Text.from_str(PYTHON), "python")
    cache.parse(path, Text.from_str(PYTHON), "python")
    cache.parse(path, Text.from_str(PYTHON + "\ndef more():\n    pass\n"), "python")
    assert cache.counts == {"cold": 1, "cached": 1, "incremental": 1, "afresh": 0}
    assert encode(Text.from_str("a\udcff")) == b"a\xed\xb3\xbf"  # lone surrogates survive


@settings(max_examples=60)
@given(st.integers(0, 30_000), st.integers(0, 50), st.binary(max_size=40), st.integers(0, 2**32))
def test_prefix_and_suffix_on_large_texts(position, removed, inserted, seed):
    """Past the galloping chunk sizes: the edit found is exactly the one made."""
    old = random.Random(seed).randbytes(30_000)
    new = old[:position] + inserted + old[position + removed :]
    p = common_prefix(old, new)
    s = common_suffix(old, new, min(len(old), len(new)) - p)
    assert old[:p] == new[:p] and old[len(old) - s :] == new[len(new) - s :]
    assert p == min(len(old), len(new)) or old[p] != new[p]
    assert p + s == min(len(old), len(new)) or old[len(old) - s - 1] != new[len(new) - s - 1]


# --- untrusted input --------------------------------------------------------------------


def nested_js(depth: int) -> str:
    return "".join(f"function f{i}() {{\n" for i in range(depth)) + "}\n" * depth


def test_thousands_of_nested_definitions_are_cut_at_max_nesting(tmp_path, run):
    from lsp_agent.syntax.outline import MAX_NESTING

    (tmp_path / "deep.js").write_text(nested_js(5000))
    path, text = tmp_path / "deep.js", Text.from_str(nested_js(5000))
    symbols = outline(path, text)
    depth, node = 1, symbols[0]
    while node.children:
        depth, node = depth + 1, node.children[0]
    assert depth == MAX_NESTING and node.name == f"f{MAX_NESTING - 1}"
    # the innermost lines belong to the deepest symbol kept
    assert enclosing_symbol(path, text, 5000) == "/".join(f"f{i}" for i in range(MAX_NESTING))
    answer = run("symbols", path="deep.js", max_chars=600)
    assert answer["stage"].startswith("depth") and len(answer["text"]) <= 600
    assert run("find_symbol", name_path=f"f{MAX_NESTING - 1}")["matches"][0]["start_line"] == MAX_NESTING
    assert run("find_symbol", name_path="f4999")["matches"] == []
    json.dumps([s.to_dict() for s in symbols])  # no recursion limit hit


def test_index_skips_a_file_it_cannot_outline(tmp_path, monkeypatch):
    from lsp_agent.syntax import index

    (tmp_path / "bad.py").write_text("def bad():\n    pass\n")
    (tmp_path / "good.py").write_text("def good():\n    pass\n")

    def outline_or_fail(path, text):
        if path.name == "bad.py":
            raise RuntimeError("a parser bug")
        return outline(path, text)

    monkeypatch.setattr(index, "outline", outline_or_fail)
    symbols = index.SymbolIndex(Workspace([tmp_path]))
    assert symbols.build() == 2
    assert [entry.name for _, entry in symbols.query("")] == ["good"]


def test_tree_cache_is_bounded_by_source_bytes(tmp_path):
    from lsp_agent.syntax.parsing import ParseCache
    from lsp_agent.workspace import Text

    cache = ParseCache(size=100, max_bytes=10_000)
    texts = {tmp_path / f"m{i}.py": Text.from_str(f"def f{i}():\n    return {i}\n" * 200) for i in range(5)}
    for path, text in texts.items():  # each about 5,000 bytes: two fit
        assert cache.parse(path, text, "python") is not None
    assert len(cache._trees) == 2 and cache._bytes <= 10_000
    assert list(cache._trees) == list(texts)[-2:]  # the most recent are kept
    huge = tmp_path / "huge.py"
    cache.parse(huge, Text.from_str("x = 1\n" * 5_000), "python")  # alone over the limit: still kept
    assert list(cache._trees) == [huge]


def test_index_leaves_out_huge_files(tmp_path, monkeypatch):
    from lsp_agent.syntax import index as index_module
    from lsp_agent.workspace import Workspace

    (tmp_path / "small.py").write_text("def kept():\n    pass\n")
    (tmp_path / "bundle.py").write_text("def skipped():\n    pass\n" + "# filler\n" * 200)
    monkeypatch.setattr(index_module, "INDEX_MAX_BYTES", 1000)
    symbols = index_module.SymbolIndex(Workspace([tmp_path]))
    symbols.build()
    assert [e.name for _, e in symbols.query("kept")] == ["kept"]
    assert symbols.query("skipped") == []


def test_indexing_reports_n_of_n_files_with_a_percentage(tmp_path):
    from lsp_agent.syntax import index

    for n in range(4):
        (tmp_path / f"m{n}.py").write_text(f"def f{n}():\n    pass\n")
    reports: list[tuple[str, int | None]] = []
    assert index.SymbolIndex(Workspace([tmp_path])).build(lambda m, p: reports.append((m, p))) == 4
    assert reports[0] == ("indexing 1 of 4 files", 25) and reports[-1] == ("indexing 4 of 4 files", 100)
    for n in range(4, 1000):
        (tmp_path / f"m{n}.py").write_text("x = 1\n")
    reports.clear()
    started = time.monotonic()
    index.SymbolIndex(Workspace([tmp_path])).build(lambda m, p: reports.append((m, p)))
    seconds = time.monotonic() - started
    percents = [p for _, p in reports]
    assert percents == sorted(set(percents)) and reports[-1] == ("indexing 1,000 of 1,000 files", 100)
    assert len(reports) <= 2 + seconds / 0.25  # a few a second, never one per file


def test_index_progress_is_a_few_reports_a_second_however_fast_the_build():
    from lsp_agent.syntax.index import Reporter

    now = [0.0]
    reports: list[tuple[float, str, int | None]] = []
    reporter = Reporter(lambda m, p: reports.append((now[0], m, p)), 1_000, 0, clock=lambda: now[0])
    for _ in range(1_000):  # a file every 10 ms: a percent every 0.1 s, 10 s in all
        now[0] += 0.01
        reporter.step()
    reporter.done()
    times, percents = [t for t, _, _ in reports], [p for _, _, p in reports]
    assert percents[0] == 0 and reports[-1][1:] == ("indexing 1,000 of 1,000 files", 100)
    assert percents == sorted(set(percents))
    gaps = [b - a for a, b in pairwise(times[:-1])]  # the last report may follow closer
    assert all(gap >= 0.25 - 1e-9 for gap in gaps)  # never more than four a second
    assert all(gap <= 0.25 + 0.1 + 1e-9 for gap in gaps)  # nor silent longer than needed
    reports.clear()
    slow = Reporter(lambda m, p: reports.append((now[0], m, p)), 4, 0, clock=lambda: now[0])
    for _ in range(4):
        now[0] += 1.0
        slow.step()
    assert [r[1:] for r in reports] == [
        (f"indexing {n} of 4 files", n * 25) for n in range(1, 5)
    ]  # slow: every percent
