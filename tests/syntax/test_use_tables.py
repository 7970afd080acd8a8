"""Use tables (issue 28 item 2): every word of a file classified in one pass when its index
record is made, so that references on a common name looks its uses up instead of parsing.
A table must give exactly what classifying one name from the tree gives, and ride with the
record: made from the same text, gone when the text changes, saved and loaded with it."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.syntax.index import SymbolIndex, Workers, index_file, read_record
from lsp_agent.syntax.languages import language_for
from lsp_agent.syntax.references import TOKEN, _classify, classify, table_stamp, table_uses, use_table
from lsp_agent.syntax.uses import UseTable, has_table, pack_table
from lsp_agent.tools import Context, run
from lsp_agent.workspace import Text, Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures"


def source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and language_for(p) is not None)


def seen(uses) -> list[tuple]:
    return [(u.line, u.column, u.role, u.qualified) for u in uses]


def whole(uses) -> list[tuple]:
    """Everything classify says of each use: its receiver too."""
    return [(u.line, u.column, u.role, u.qualified, u.receiver) for u in uses]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for part in ("grammars", "navigation", "precision", "semantic"):
        shutil.copytree(FIXTURES / part, root / part)
    return root


def test_a_workers_table_gives_every_words_uses_as_the_tree_does(corpus):
    """Every word of every fixture file (every grammar), on every line: the record's table
    answers what _classify answers from the tree, roles, columns, qualified and receivers
    alike (and without receivers, the same uses without them)."""
    languages, words, receivers = set(), 0, 0
    for path in source_files(corpus):
        language = language_for(path)
        record = read_record(str(path), language, "utf-16", [str(corpus)], table=True)
        assert record is not None
        table = record.table(table_stamp(language))
        if table is None:  # a language whose grammar names nothing "identifier"
            continue
        text = Text.from_bytes(path.read_bytes())
        every_line = range(1, text.line_count + 1)
        for name in sorted(set(TOKEN.findall(text.content))):
            if name[0].isdigit():
                continue
            tree = _classify(path, text, name, list(every_line))
            assert whole(table_uses(table, text, name, every_line, True) or []) == whole(tree), (path, name)
            bare = table_uses(table, text, name, every_line) or []
            assert seen(bare) == seen(tree) and all(u.receiver is None for u in bare)
            words += 1
            receivers += sum(u.receiver is not None for u in tree)
        languages.add(language)
    assert len(languages) >= 11 and words > 800 and receivers > 50


def test_a_record_made_without_a_table_reads_as_before(corpus):
    """A record made in the server's process (an editor's buffer, a changed file) or saved
    by an older version carries no table: references then parses, as it did."""
    ws = Workspace([corpus])
    path = next(p for p in source_files(corpus) if p.suffix == ".py")
    here = index_file(ws, path, "python", "utf-16")
    worker = read_record(str(path), "python", "utf-16", [str(corpus)], table=True)
    assert here is not None and worker is not None
    stamp = table_stamp("python")
    assert here.table(stamp) is None and not has_table(here.use_table, stamp)
    assert worker.table(stamp) is not None and has_table(worker.use_table, stamp)
    # made otherwise (another references query, an older version): never read, made again
    assert worker.table(b"12345678") is None and not has_table(worker.use_table, b"12345678")
    assert here.used() == worker.used()  # overview's names and counts: the same either way


WORDS = st.sampled_from(["total", "items", "self", "Cart", "def", "return", "class", "import", "x"])
PIECES = st.sampled_from(
    [
        "{w}",
        "{w}.{v}",
        "{w}({v})",
        "{w}.{v}()",
        "'{w} {v}'",
        'f"{{{w}}} {v}"',
        "# {w} {v}",
        "class {w}({v}): pass",
        "def {w}({v}): return {v}",
        "from {w} import {v}",
        "import {w}",
        "{w} = {v}[{w}]",
        "x: {w} = {v}",
        "lambda {w}: {v}",
        "{w} éé{v} {v}ü",
    ]
)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(PIECES, WORDS, WORDS, st.integers(0, 3)), min_size=1, max_size=12))
def test_a_table_equals_the_tree_on_any_python(lines):
    """Property: whatever the code (nested, broken, with comments, strings, f-strings and
    keywords spelled like names), the table's uses of each word are the tree's."""
    from lsp_agent.syntax.index import fresh_parse, fresh_rows

    content = "\n".join("    " * depth + piece.format(w=w, v=v) for piece, w, v, depth in lines) + "\n"
    text = Text.from_bytes(content.encode())
    parsed = fresh_parse("python", content.encode())
    assert parsed is not None
    defined: dict[str, set] = {}
    owners: dict[str, set] = {}
    for row in fresh_rows("python", content.encode(), parsed):
        defined.setdefault(row[1], set()).add(row[4][:2])
        if row[2]:
            owners.setdefault(row[1], set()).add(row[2].rsplit("/", 1)[-1])
    found = use_table(parsed, text, defined, owners)
    assert found is not None
    stamp = table_stamp("python")
    table = UseTable.of(pack_table(*found, stamp), stamp)
    assert table is not None
    path = Path("/nowhere/generated.py")
    every_line = range(1, text.line_count + 1)
    for name in set(found[0]):
        assert whole(table_uses(table, text, name, every_line, True) or []) == whole(
            _classify(path, text, name, list(every_line))
        ), (content, name)


WORD = st.text("ab_$é", min_size=1, max_size=6).filter(lambda w: not w[0].isdigit())
USES = st.lists(
    st.tuples(st.integers(0, 70_000), st.integers(0, 255), st.integers(0, 9)), min_size=1, max_size=300
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(WORD, USES), max_size=80, unique_by=lambda t: t[0]),
    st.lists(st.text(max_size=5), max_size=9),
)
def test_a_packed_table_gives_each_word_its_uses_and_nothing_else(words, receivers):
    """Property: whatever the words and however many uses each has (across the buckets and
    blocks of uses), a word looked up is given exactly its uses, in order; a word the file
    lacks, none; the receivers come back line for line."""
    from array import array

    names = [w for w, _ in words]
    counts = array("I", [len(uses) for _, uses in words])
    rows = array("I", [r for _, uses in words for r, _, _ in uses])
    codes = bytes(c for _, uses in words for _, c, _ in uses)
    ids = array("I", [i for _, uses in words for _, _, i in uses])
    stamp = b"stamp-01"
    table = UseTable.of(pack_table(names, counts, rows, codes, "\n".join(receivers), ids, stamp), stamp)
    assert table is not None and UseTable.of(pack_table(names, counts, rows, codes, "", ids, stamp), b"stamp-02") is None  # fmt: skip
    for name, uses in words:
        found = table.find(name)
        assert found is not None
        assert (list(found[0]), found[1], list(found[2])) == ([r for r, _, _ in uses], bytes(c for _, c, _ in uses), [i for _, _, i in uses])  # fmt: skip
    for absent in ("zz", "a" * 7, "b$b$b$b"):
        if absent not in names:
            assert table.find(absent) == (array("I"), b"", array("I"))
    assert table.receivers() == "\n".join(receivers).split("\n")


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_a_damaged_table_is_refused_or_says_so_never_raises(data):
    """Property: a table cut short or with bytes changed (a record is checksummed, so this
    is a defect's doing, not an attacker's) is refused, or a word's uses come back as a
    made table holds them, or None (the file is then read): never an exception."""
    from array import array

    from lsp_agent.syntax.references import QUALIFIED, ROLES, table_places

    names = [f"w{i}" for i in range(300)]
    counts = array("I", [3] * 300)
    codes = bytes((i % len(ROLES)) | (QUALIFIED if i % 2 else 0) for i in range(900))
    rows, ids = array("I", range(900)), array("I", [i % 4 for i in range(900)])
    receivers = "\n".join(["instance\x1fCart\x1f0\x1f", "super\x1fForm\x1f0\x1fBase\x1eModel", "imported\x1fos\x1f1\x1f"])  # fmt: skip
    packed = bytearray(pack_table(names, counts, rows, codes, receivers, ids, b"stamp-01"))
    whole = UseTable.of(bytes(packed), b"stamp-01")
    assert whole is not None and table_places(whole, "w7", True) is not None  # made whole: it answers
    if data.draw(st.booleans()):
        del packed[data.draw(st.integers(9, len(packed) - 1)) :]
    for _ in range(data.draw(st.integers(1, 6))):
        packed[data.draw(st.integers(8, len(packed) - 1))] = data.draw(st.integers(0, 255))
    table = UseTable.of(bytes(packed), b"stamp-01")
    if table is not None:
        text = Text.from_bytes(b"w1 w7 w77\n" * 300)
        for name in (*names[::23], "absent"):
            table.find(name)
            for receivers_too in (False, True):
                found = table_places(table, name, receivers_too)
                assert found is None or all(use.role in ROLES for use, _ in found)
                table_uses(table, text, name, range(1, 301), receivers_too)
        table.receivers()


def test_classify_answers_from_the_table_receivers_and_all(corpus):
    """With a table, classify answers what the tree answers, receivers too (member uses by
    name path are judged by them); without receivers wanted, the same uses."""
    path = corpus / "navigation" / "shop.py"
    if not path.exists():
        path = next(p for p in source_files(corpus) if p.suffix == ".py")
    text = Text.from_bytes(path.read_bytes())
    record = read_record(str(path), "python", "utf-16", [str(corpus)], table=True)
    assert record is not None
    table = record.table(table_stamp("python"))
    assert table is not None
    lines = range(1, text.line_count + 1)
    members = [w for w in sorted(set(TOKEN.findall(text.content))) if f".{w}" in text.content]
    assert members
    for name in members:
        tree = _classify(path, text, name, list(lines))
        assert whole(classify(path, text, name, lines, table=table)) == whole(tree)
        assert seen(classify(path, text, name, lines, table=table, receivers=False)) == seen(tree)
    assert any(
        u.receiver is not None for name in members for u in classify(path, text, name, lines, table=table)
    )


def test_make_tables_gives_the_records_on_disk_theirs_and_a_change_drops_it(tmp_path, index_cache):
    (tmp_path / "a.py").write_text(
        "class Cart:\n    def total(self, items):\n        return sum_all(items)\n"
    )
    (tmp_path / "b.py").write_text("def sum_all(items):\n    return Cart().total(items)\n")
    (tmp_path / "c.py").write_text("x = 1\n")
    ws = Workspace([tmp_path])
    index = SymbolIndex(ws, cache=index_cache)
    index.build()
    for record in index.files.values():  # made just now: their stat does not vouch for them
        record.size, record.mtime_ns = -1, 0
    assert index.make_tables() == 0  # nothing on disk to vouch for
    index = SymbolIndex(ws, cache=index_cache)
    for path in list(ws.roots[0].iterdir()):  # older than the racy window: trusted by stat
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    index.build()
    ws.open_document(tmp_path / "c.py", "y = 2\n")  # an editor's buffer: never tabled
    index.update(tmp_path / "c.py")
    assert index.make_tables() == 2
    stamp = table_stamp("python")
    assert all(has_table(index.files[tmp_path / n].use_table, stamp) for n in ("a.py", "b.py"))
    assert not has_table(index.files[tmp_path / "c.py"].use_table, stamp)
    assert index.make_tables() == 0  # nothing left to make
    loaded = SymbolIndex(ws, cache=index_cache)
    loaded.load()
    assert loaded.files[tmp_path / "a.py"].table(stamp) == index.files[tmp_path / "a.py"].table(stamp)
    (tmp_path / "a.py").write_text("class Cart:\n    pass\n")
    index.update(tmp_path / "a.py")  # the text changed: its record is made again, without one
    assert not has_table(index.files[tmp_path / "a.py"].use_table, stamp)


def test_make_tables_steps_aside_while_it_looks_and_before_each_parse(tmp_path, index_cache, monkeypatch):
    """After a warm start make_tables runs as the first calls come: it looks at the records
    in pieces and makes each table only after stepping aside (for light calls), the first
    included, so a call that came meanwhile goes first."""
    import lsp_agent.syntax.index as index_module

    monkeypatch.setattr(index_module, "TABLES_LOOKED_AT", 2)
    for n in range(5):
        (tmp_path / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n")
        os.utime(tmp_path / f"m{n}.py", ns=(1_000_000_000, 1_000_000_000))
    index = SymbolIndex(Workspace([tmp_path]), cache=index_cache)
    index.build()
    events: list[str] = []
    made = index_module.read_record

    def parsed(*args, **kwargs):
        events.append("parse")
        return made(*args, **kwargs)

    monkeypatch.setattr(index_module, "read_record", parsed)
    assert index.make_tables(step_aside=lambda: events.append("aside")) == 5
    assert events[:3] == ["aside"] * 3  # 5 records looked at, 2 a piece
    assert events[3:] == ["aside", "parse"] * 5


def test_references_answers_the_same_from_the_tables(corpus, index_cache):
    """The answer a references call gives is the same text, tables or not (names common in
    the fixtures, a member by name path)."""
    for path in corpus.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    ws = Workspace([corpus])
    index = SymbolIndex(ws, cache=index_cache)
    index.build()
    calls = [{"name": n} for n in ("total", "self", "items", "name", "value", "get")]
    calls.append({"name": "Cart/total"})
    context = Context(ws, Settings(precision="syntax"), index=index)
    before = [run(context, "references", dict(c))["text"] for c in calls]
    assert index.make_tables() > 20
    after = [run(context, "references", dict(c))["text"] for c in calls]
    assert before == after
    assert any("uses in" in text for text in after)


def test_table_workers_yield_to_the_calls_an_agent_waits_for(tmp_path):
    """Tables are made after the index is ready, beside the calls agents wait for: their
    workers run at the lowest priority, below the index's and the tools' workers (nice 5)."""
    niceness = {}
    for table in (False, True):
        workers = Workers("utf-16", [tmp_path], table=table)
        workers.send([], last=True)  # starts the pool
        try:
            assert workers.pool is not None
            niceness[table] = workers.pool.submit(os.nice, 0).result(timeout=60)
        finally:
            workers.close()
    assert niceness[True] == 19
    assert niceness[True] > niceness[False] or niceness[False] == 19  # a test run at nice 14 or more
