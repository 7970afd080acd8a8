"""references reads only the files its page shows (issue 28, item 2): a file whose index
record is current and settled gives its uses from the record's use table unread, a file
without a grammar from its bytes; the text, columns and enclosing symbols of a use are read
when a drawing needs them. The answer must be the one reading every file gives, whatever
the budget and page, and never stale."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent import workspace as workspace_module
from lsp_agent.config import Settings
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.syntax.references import USE_TABLES, occurrences, word_lines, word_places
from lsp_agent.tools import Context, run
from lsp_agent.tools import references as references_module
from lsp_agent.workspace import Text, Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures"
AGED = 1_000_000_000  # 2001: every file's times far from now


def aged(root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(AGED, AGED))


@pytest.fixture
def settled(monkeypatch):
    """Files trusted by their stat at once (ctime moves on every write, so a test's files
    would otherwise stay racy, and read, for two seconds)."""
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)
    USE_TABLES._tables.clear()  # no answer kept from another test's files of the same paths


@pytest.fixture
def corpus(tmp_path) -> Path:
    root = tmp_path / "corpus"
    for part in ("navigation", "precision"):
        shutil.copytree(FIXTURES / part, root / part)
    (root / "NOTES.md").write_text(
        "# total and items\nThe cart's `total` sums items; total, total.\n$total is not total$ nor total_x\n"
    )
    (root / "crlf.txt").write_bytes(b"total\r\nname  total\r\n\xff total \xff\r\n")
    aged(root)
    return root


def indexed(root: Path, cache: Path) -> Context:
    ws = Workspace([root])
    index = SymbolIndex(ws, cache=cache)
    index.build()
    assert index.make_tables() > 10
    return Context(ws, Settings(precision="syntax"), index=index)


CALLS = [
    {"name": n, **extra}
    for n in ("total", "name", "items", "get", "save", "Cart/total", "Model/save", "value", "from")
    for extra in ({}, {"max_chars": 700}, {"max_chars": 1500, "limit": 3}, {"offset": 2, "limit": 4})
]


def answers(context: Context) -> list[dict]:
    out = []
    for call in CALLS:
        try:
            out.append(run(context, "references", dict(call)))
        except Exception as error:  # a refusal (budget too small, offset past the end) is an answer too
            out.append({"refused": str(error)})
    return out


def test_the_answer_is_the_one_reading_every_file_gives(corpus, tmp_path, settled, monkeypatch):
    """Text and structured answer alike, for common names, members by name path, small
    budgets and pages: from the tables unread as from every file read (no index: each file
    read, classified from its tree)."""
    unread = answers(indexed(corpus, tmp_path / "cache"))
    read = answers(Context(Workspace([corpus]), Settings(precision="syntax")))
    assert unread == read
    assert any("uses in" in a.get("text", "") for a in unread)
    assert any(a.get("stage") == "one line per use" for a in unread)


def files_read(monkeypatch) -> list[Path]:
    """The paths the workspace reads from now on (its text or bytes), in order."""
    read: list[Path] = []
    for method in ("text", "data"):
        original = getattr(Workspace, method)

        def counting(self, path, _original=original):
            read.append(path)
            return _original(self, path)

        monkeypatch.setattr(Workspace, method, counting)
    return read


def test_only_the_pages_files_are_read(tmp_path, settled, monkeypatch):
    """A name used in 400 files: its first page of 5 reads the files of that page and of the
    next one's size, not 400; every use is still counted."""
    root = tmp_path / "many"
    root.mkdir()
    (root / "core.py").write_text("def run():\n    return 1\n")
    for i in range(400):
        (root / f"m{i:03}.py").write_text(
            f"from core import run\n\n\ndef job{i}():\n    return run() + {i}\n"
        )
    aged(root)
    context = indexed(root, tmp_path / "cache")
    read = files_read(monkeypatch)
    answer = run(context, "references", {"name": "run", "limit": 5, "max_chars": 2000})
    assert answer["total"] == 801 and answer["files"] == 401
    assert [r["symbol"] for r in answer["references"]] == ["run", None, "job0", None, "job1"]
    assert answer["next"] == {"offset": 5, "limit": answer["next"]["limit"]}
    assert 5 < answer["next"]["limit"] < 80
    assert len(set(read)) < 2 * answer["next"]["limit"], len(set(read))


def test_a_changed_file_is_read_not_answered_from_its_record(corpus, tmp_path, settled):
    """A file rewritten with the same size and mtime since it was indexed (`touch -r`, `cp -p`)
    changed its ctime: its record no longer stands for it, even past the racy window (here
    none), so its uses come from its new text."""
    context = indexed(corpus, tmp_path / "cache")
    path = corpus / "precision/py/app/models.py"
    before = os.stat(path)
    time.sleep(0.02)
    content = path.read_text()
    changed = content.replace("save", "keep", 1)
    assert changed != content and len(changed) == len(content)
    path.write_text(changed)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    answer = run(context, "references", {"name": "keep"})
    assert [(r["path"], r["line"]) for r in answer["references"]] == [
        ("precision/py/app/models.py", 1 + content[: content.index("save")].count("\n"))
    ]


def test_a_file_gone_before_its_page_is_read_is_no_error(corpus, tmp_path, settled):
    context = indexed(corpus, tmp_path / "cache")
    collected = references_module.collect(context, "total", None, references_module.Target(False), None)
    assert collected.refs and all(r.origin is not None for r in collected.refs)
    for path in {context.workspace.resolve(r.path) for r in collected.refs}:
        path.unlink()
    shown = references_module.realized(context.workspace, collected.refs)
    assert [(r.path, r.line, r.role) for r in shown] == [(r.path, r.line, r.role) for r in collected.refs]
    assert all(r.origin is None and r.text == "" for r in shown)


PIECES = st.sampled_from(
    [
        "ab",
        "ab",
        "a",
        "b",
        "x",
        "_",
        "1",
        "$",
        " ",
        ".",
        "\n",
        "\r\n",
        "\r",
        "é",
        "ab\u00e9",
        "\u00e9ab",
        "\xff",
    ]
)


@settings(max_examples=400, deadline=None)
@given(
    st.lists(PIECES, max_size=40),
    st.sampled_from(["ab", "a", "b_1", "$x", "ab\u00e9", "", "a.b"]),
    st.booleans(),
)
def test_word_places_are_word_lines_and_occurrences(pieces, name, broken):
    """The uses found in a file's bytes are those of its text: the lines word_lines finds,
    each use's rank among occurrences() of its line (a letter not ASCII next to it, or bytes
    not UTF-8, judged as the decoded text judges them); or None (then the text is decoded)."""
    data = "".join(pieces).encode("utf-8", "surrogateescape")
    if broken:
        data = data.replace("é".encode(), b"\xe9")  # not UTF-8: decoded with replacements
    text = Text.from_bytes(data)
    expected = [(n, k) for n in word_lines(text, name) for k in range(len(occurrences(text.line(n), name)))]
    found = word_places(data, name)
    if name in ("ab", "a", "b_1", "$x"):  # ASCII words: always found in the bytes, whatever is next to them
        assert found == expected
    else:
        assert found is None or found == expected


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """(unread, read): a settled, indexed corpus and the same read file by file."""
    saved = workspace_module.RACY_WINDOW_NS
    workspace_module.RACY_WINDOW_NS = 0
    root = tmp_path_factory.mktemp("both")
    for part in ("navigation", "precision"):
        shutil.copytree(FIXTURES / part, root / part)
    (root / "NOTES.md").write_text("total items total\n`name` get, save; value.\n" * 40)
    aged(root)
    try:
        yield indexed(root, tmp_path_factory.mktemp("cache")), Context(Workspace([root]), Settings(precision="syntax"))  # fmt: skip
    finally:
        workspace_module.RACY_WINDOW_NS = saved


NAMES = st.sampled_from(
    ["total", "name", "items", "get", "save", "value", "Cart/total", "Model/save", "from", "self"]
)
ROLES_ASKED = st.one_of(st.none(), st.lists(st.sampled_from(["definition", "call", "use", "text", "comment", "import"]), min_size=1, max_size=3, unique=True))  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(
    NAMES,
    st.integers(200, 6000),
    st.one_of(st.none(), st.integers(1, 60)),
    st.integers(0, 80),
    ROLES_ASKED,
)
def test_any_page_of_any_budget_is_the_read_ones(both, name, budget, limit, offset, roles):
    unread, read = both
    USE_TABLES._tables.clear()
    call = {"name": name, "max_chars": budget, "offset": offset}
    if limit is not None:
        call["limit"] = limit
    if roles is not None:
        call["roles"] = roles

    def answer(context: Context) -> dict:
        try:
            return run(context, "references", dict(call))
        except Exception as error:  # a refusal: the same one
            return {"refused": str(error)}

    assert answer(unread) == answer(read)


def test_files_of_no_grammar_are_left_out_unread(tmp_path, settled, monkeypatch):
    """Beside a name's definitions, the uses in files of no grammar are left out: counted as
    ripgrep counts the name as a whole word (what search finds: `$total` counts there), and
    not read. A name defined nowhere keeps them, read (where `$` counts as a letter)."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "cart.py").write_text("def total(items):\n    return sum(items)\n\n\nprint(total([1]))\n")
    (root / "NOTES.md").write_text(
        "total and items\nThe `total` sums items; total, total.\n$total is not total$ nor total_x\n"
    )
    aged(root)
    context = indexed_small(root, tmp_path / "cache")
    read = files_read(monkeypatch)
    answer = run(context, "references", {"name": "total"})
    assert (
        "left out: 6 uses in files of other languages than the definitions' (no grammar 6)" in answer["text"]
    )
    assert answer["total"] == 2 and root / "NOTES.md" not in read
    defined_nowhere = run(context, "references", {"name": "items"})
    assert [(r["path"], r["line"]) for r in defined_nowhere["references"] if r["path"] == "NOTES.md"] == [("NOTES.md", 1), ("NOTES.md", 2)]  # fmt: skip
    assert root / "NOTES.md" in read


def indexed_small(root: Path, cache: Path) -> Context:
    ws = Workspace([root])
    index = SymbolIndex(ws, cache=cache)
    index.build()
    index.make_tables()
    return Context(ws, Settings(precision="syntax"), index=index)


def test_a_name_that_is_no_word_has_its_text_files_read(tmp_path, settled):
    """ripgrep cannot find `$total` as a whole word (it finds it in `$totalX` too): such a
    name's files of no grammar are read, and counted as the scan of a text counts them."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.js").write_text("function $total(items) { return items.length; }\n$total([1]);\n")
    (root / "NOTES.md").write_text("$total and $totalX\n")
    aged(root)
    answer = run(indexed_small(root, tmp_path / "cache"), "references", {"name": "$total"})
    assert "(no grammar 1)" in answer["text"], answer["text"]
