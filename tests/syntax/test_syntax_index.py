"""The symbol index (compact records, find_symbol and read symbol= from it, worker processes,
the copy on disk) and outlines updated after an edit."""

from __future__ import annotations

import gc
import importlib
import os
import re
import threading
import time
from array import array
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import GRAMMARS, KINDS, outline, store
from lsp_agent.syntax import index as index_module
from lsp_agent.syntax.files import source_files
from lsp_agent.syntax.languages import installed_version, language_for, query, query_source
from lsp_agent.syntax.outline import OUTLINES, build, name_path_matcher
from lsp_agent.syntax.parsing import PARSES, Parsed
from lsp_agent.syntax.records import FileRecord
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Text, Workspace
from tests.support.grammar_fixtures import GRAMMARS_DIR, copy_fixtures, fixture_files

outline_module = importlib.import_module("lsp_agent.syntax.outline")  # the package exports outline()


@pytest.fixture
def project(tmp_path):
    copy_fixtures(tmp_path / "src")
    (tmp_path / "src" / "more").mkdir()
    (tmp_path / "src" / "more" / "extra.py").write_text(
        "class Account:\n    def deposit(self):\n        pass\n"
    )
    (tmp_path / "top.py").write_text("def deposit():\n    pass\n")
    backdate(tmp_path)
    return tmp_path


def backdate(root: Path) -> None:
    """Files written an hour ago, as a project's are: a record of a file written within the
    last seconds is not trusted by its stat (see test_a_record_of_a_file_written_just_now_...)."""
    old = time.time_ns() - 3_600 * 10**9
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, ns=(old, old))


def built(root: Path, cache: Path | None = None, encoding: str = "utf-16") -> index_module.SymbolIndex:
    index = index_module.SymbolIndex(Workspace([root]), encoding, cache=cache)
    index.build()
    return index


def indexed(project: Path) -> tuple[Workspace, Context]:
    """A workspace, and a tool context holding its built index."""
    index = built(project)
    return index.workspace, Context(index.workspace, index=index)


def test_every_kind_a_query_captures_is_known():
    for language in GRAMMARS:
        for kind in re.findall(r"@definition\.([a-z]+)", query_source(language)):
            assert kind in KINDS, (language, kind)


FIND_CALLS = [
    {"name_path": "deposit"},
    {"name_path": "Account.deposit"},
    {"name_path": "/Bank/Account/deposit"},
    {"name_path": "acc", "substring": True},
    {"name_path": "area", "kinds": ["method"]},
    {"name_path": "Shop.Inventory"},
    {"name_path": "area", "path": "src"},
    {"name_path": "deposit", "path": "src/more"},
    {"name_path": "deposit", "include_body": True, "max_chars": 2000},
    {"name_path": "nothing_has_this_name"},
]


def test_find_symbol_from_the_index_is_what_a_targeted_parse_finds(project):
    ws = Workspace([project])
    index = index_module.SymbolIndex(ws)
    index.build()
    for arguments in FIND_CALLS:
        with_index = call(Context(ws, index=index), "find_symbol", dict(arguments))
        without = call(Context(ws), "find_symbol", dict(arguments))
        assert with_index == without, arguments
    assert [
        m["path"] for m in call(Context(ws, index=index), "find_symbol", {"name_path": "deposit"})["matches"]
    ] == [
        "top.py",  # a walk's order: a folder's files, then its subfolders
        "src/account.rb",
        "src/more/extra.py",
    ]


def test_find_symbol_sees_a_file_changed_since_it_was_indexed(project):
    _, ctx = indexed(project)
    extra = project / "src" / "more" / "extra.py"
    extra.write_text(
        "class Account:\n    def deposit(self):\n        pass\n\n    def deposit_all(self):\n        pass\n"
    )
    os.utime(extra, ns=(1, 1))  # a different mtime, whatever the clock's resolution
    found = call(ctx, "find_symbol", {"name_path": "Account/deposit", "substring": True})
    assert [m["name_path"] for m in found["matches"]] == [
        "Bank/Account/deposit",
        "Account/deposit",
        "Account/deposit_all",
    ]


def test_a_record_of_a_file_written_just_now_is_not_trusted_by_its_stat(project):
    top = project / "top.py"
    top.write_text("def alpha():\n    pass\n")
    _, ctx = indexed(project)
    assert ctx.index is not None
    assert ctx.index.is_current(project / "src" / "more" / "extra.py")
    assert not ctx.index.is_current(top)  # its mtime is within the racy window
    # written again within the same mtime tick, at the same size: a stat could not tell
    info = os.stat(top)
    top.write_text("def gamma():\n    pass\n")
    os.utime(top, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert call(ctx, "find_symbol", {"name_path": "alpha"})["matches"] == []
    assert [m["path"] for m in call(ctx, "find_symbol", {"name_path": "gamma"})["matches"]] == ["top.py"]


def test_read_symbol_uses_the_index_only_for_the_text_it_indexed(project):
    ws, ctx = indexed(project)
    assert ctx.index is not None
    index = ctx.index
    path = project / "src" / "more" / "extra.py"
    assert index.definitions(path, ws.text(path)) is not None
    ws.open_document(path, "def other():\n    pass\n\ndef deposit():\n    return 1\n")
    assert index.definitions(path, ws.text(path)) is None  # the buffer is not what was indexed
    answer = call(ctx, "read", {"path": "src/more/extra.py", "symbol": "deposit"})
    assert answer["symbol"] == {"name_path": "deposit", "kind": "function", "start_line": 4, "end_line": 5}


def test_records_are_compact_and_give_back_the_outline(project):
    index = built(project, encoding="utf-8")
    path = project / "src" / "shapes.py"
    record = index.files[path]
    assert isinstance(record.names, str) and isinstance(record.kinds, bytes) and record.ranges.typecode == "I"
    symbols = [s for s in _walk(outline(path, Text.from_bytes(path.read_bytes())))]
    assert [(e.name_path, e.kind, e.start_line, e.end_line, e.range) for e in record.entries()] == [
        (s.name_path, s.kind, s.start_line, s.end_line, s.range) for s in symbols
    ]


def _walk(symbols):
    for s in symbols:
        yield s
        yield from _walk(s.children)


def test_the_walk_as_ripgrep_lists_it_has_the_files_of_the_ordered_walk(project):
    ws = Workspace([project])
    ordered = list(source_files(ws, project))
    assert len(ordered) > 10
    assert sorted(source_files(ws, project, in_order=False)) == sorted(ordered)


def test_worker_processes_index_what_this_process_does(project, monkeypatch):
    alone = built(project)
    monkeypatch.setattr(index_module, "PROCESS_MIN_FILES", 1)
    monkeypatch.setattr(index_module, "CHUNK", 3)
    reports = []
    workers = index_module.SymbolIndex(Workspace([project]))
    assert workers.build(lambda message, percentage: reports.append(message)) == len(alone.files)
    assert workers.files == alone.files
    n = len(alone.files)
    assert reports[0] == f"indexing 1 of {n:,} files" and reports[-1] == f"indexing {n:,} of {n:,} files"


def test_a_restart_reuses_the_saved_index_and_parses_only_changed_files(
    project, tmp_path_factory, monkeypatch
):
    cache = tmp_path_factory.mktemp("cache")
    first = built(project, cache)
    (project / "top.py").write_text("def deposit():\n    pass\n\ndef withdraw():\n    pass\n")
    os.utime(project / "top.py", ns=(1, 1))
    (project / "src" / "list.c").unlink()
    parsed = []

    def counting(path, text):
        parsed.append(path.name)
        return outline(path, text)

    monkeypatch.setattr(index_module, "outline", counting)
    second = built(project, cache)
    assert parsed == ["top.py"]
    assert set(second.files) == set(first.files) - {project / "src" / "list.c"}
    assert [e.name for _, e in second.query("withdraw")] == ["withdraw"]
    assert second.files[project / "src" / "shapes.py"] == first.files[project / "src" / "shapes.py"]
    # another encoding is another file: its columns differ
    assert store.index_file(cache, [project], "utf-8") != store.index_file(cache, [project], "utf-16")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:-5] + bytes(5),  # bytes changed
        lambda data: b"something else entirely",
        lambda data: b"",
    ],
)
def test_a_damaged_index_file_is_ignored(project, tmp_path_factory, damage):
    cache = tmp_path_factory.mktemp("cache")
    first = built(project, cache)
    saved = store.index_file(cache, [project], "utf-16")
    saved.write_bytes(damage(saved.read_bytes()))
    assert store.load(cache, [project], "utf-16") == {}
    assert built(project, cache).files == first.files


def test_an_index_file_holding_objects_is_refused(project, tmp_path_factory):
    import hashlib
    import pickle

    cache = tmp_path_factory.mktemp("cache")
    built(project, cache)
    saved = store.index_file(cache, [project], "utf-16")
    payload = pickle.dumps({"grammars": {}, "files": [Path("x")]})  # a class, not plain values
    saved.write_bytes(store.FORMAT + hashlib.blake2b(payload, digest_size=store.DIGEST).digest() + payload)
    assert store.load(cache, [project], "utf-16") == {}


def test_records_of_another_grammar_version_are_not_reused(project, tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.mktemp("cache")
    built(project, cache)
    assert store.load(cache, [project], "utf-16")
    monkeypatch.setattr(store, "grammar_version", lambda language: "another")
    assert store.load(cache, [project], "utf-16") == {}


def test_a_grammar_version_is_the_one_importlib_metadata_finds():
    """The dist-info folder's name (read without importlib.metadata's imports) says the
    version that importlib.metadata reads from its METADATA, for every grammar."""
    from importlib import metadata

    from lsp_agent.syntax.languages import GRAMMARS

    for language in GRAMMARS.values():
        assert installed_version(language.package) == metadata.version(language.package)
    assert installed_version("no-such-distribution-anywhere") == "?"


def test_saving_is_atomic_and_leaves_no_temporary_file(project, tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    index = built(project, cache)
    folder = store.index_file(cache, [project], "utf-16").parent
    for _ in range(3):  # as several servers would, one after another
        index.save()
    assert [p.name for p in folder.iterdir()] == [store.index_file(cache, [project], "utf-16").name]


def test_cache_folder_is_outside_the_workspace_and_overridable(monkeypatch, tmp_path):
    monkeypatch.delenv("LSP_AGENT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert store.cache_folder() == tmp_path / "xdg" / "lsp-agent"
    monkeypatch.setenv("LSP_AGENT_CACHE_DIR", str(tmp_path / "mine"))
    assert store.cache_folder() == tmp_path / "mine"


# --- outlines after an edit ------------------------------------------------------------

SOURCES = {name: path.read_text() for name, path in fixture_files().items()}
PIECES = ["x", "\n", "    ", "def f():\n    pass\n", "}", "{", "class C:\n", "(", ")", "'", '"', "/*", "*/", "#", "fn a() {}\n", "@dec\n", "namespace N;\n", ""]  # fmt: skip


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(SOURCES)),
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(PIECES)), min_size=1, max_size=6
    ),
)
def test_an_outline_after_edits_is_the_outline_of_the_whole_tree(name, edits):
    """Reusing the definitions outside the edited top-level one gives what querying the
    whole (incrementally parsed) tree gives."""
    path = GRAMMARS_DIR / "edited" / name  # never on disk: only its texts are parsed
    OUTLINES._entries.pop(path, None)
    PARSES._trees.pop(path, None)
    content = SOURCES[name]
    for where, length, piece in edits:
        outline(path, Text.from_str(content))
        at = int(where * len(content))
        content = content[:at] + piece + content[at + length :]
        text = Text.from_str(content)
        assert _shape(outline(path, text)) == _shape(build(PARSES._trees[path]))


def _shape(symbols):
    return [
        (s.kind, s.name_path, s.start_line, s.end_line, s.range, s.selection, _shape(s.children))
        for s in symbols
    ]


@pytest.fixture(scope="module")
def fixture_index(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    copy_fixtures(root)
    return built(root)


@settings(max_examples=200, deadline=None)
@given(
    query=st.text(alphabet="abcdeilnorstuAPSGİ_/.[]^-\\ \n", max_size=6), limit=st.sampled_from([1, 5, 500])
)
def test_workspace_symbol_query_is_every_name_ranked(fixture_index, query, limit):
    """The scan by regular expressions answers what ranking every indexed name would."""
    everything = [(path, entry) for path, record in fixture_index.files.items() for entry in record.entries()]
    ranked = [(index_module.rank(query, e.name), len(e.name), str(p), e.range, p, e) for p, e in everything]
    expected = sorted((h for h in ranked if h[0] is not None), key=lambda h: h[:4])[:limit]
    assert fixture_index.query(query, limit) == [(h[4], h[5]) for h in expected]


# --- the cold index's shortcuts give what the outline gives ----------------------------------

ROOT = Path(__file__).parents[2]
REAL_FILES = sorted([*(ROOT / "lsp_agent").rglob("*.py"), *(ROOT / "tests").glob("*/*.py"), *(ROOT / "benchmarks").glob("*.py")])  # fmt: skip
SKIPPING = sorted(language for language in GRAMMARS if outline_module._skipping(language))
BYTE_PIECES = [p.encode() for p in PIECES] + [b"\r\n", "é".encode(), "😀".encode(), "名前 = 1\n".encode(), b"\xff", b"\x80"]  # fmt: skip


def _match_keys(matches) -> list:
    return sorted(
        (pattern, sorted((name, [(n.start_byte, n.end_byte, n.type) for n in nodes]) for name, nodes in captures.items()))
        for pattern, captures in matches
    )  # fmt: skip


def _every_match(parsed) -> list:
    import tree_sitter

    return tree_sitter.QueryCursor(query(parsed.language)).matches(parsed.tree.root_node)


def _skipped_matches(parsed) -> list:
    import tree_sitter

    return outline_module._matches(parsed, tree_sitter.QueryCursor(query(parsed.language)))


def test_python_skips_its_expressions():
    assert "python" in SKIPPING
    starts, opaque = outline_module._skipping("python")
    assert {"function_definition", "class_definition", "module"} <= starts
    assert {"call", "lambda", "string", "expression_statement"} <= opaque  # subtypes of supertypes too


def test_skipping_opaque_subtrees_finds_every_match_in_real_files():
    for path in [p for p in REAL_FILES if language_for(p) in SKIPPING]:
        data = path.read_bytes()
        language = language_for(path)
        assert language is not None
        parsed = Parsed(language, "", data, PARSES.parser(language).parse(data))
        assert _match_keys(_skipped_matches(parsed)) == _match_keys(_every_match(parsed)), path


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(n for n, p in fixture_files().items() if language_for(p) in SKIPPING)),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(BYTE_PIECES)), max_size=6),
)
def test_skipping_opaque_subtrees_finds_every_match_in_broken_code(name, edits):
    """Syntax errors nest anything anywhere: their subtrees are walked."""
    data = fixture_files()[name].read_bytes()
    for where, length, piece in edits:
        at = int(where * len(data))
        data = data[:at] + piece + data[at + length :]
    language = language_for(name)
    assert language is not None
    parsed = Parsed(language, "", data, PARSES.parser(language).parse(data))
    assert _match_keys(_skipped_matches(parsed)) == _match_keys(_every_match(parsed))


def _both_records(path: Path, encoding: str) -> tuple:
    """A worker's record of `path` and this process's (from the cached outline)."""
    language = language_for(path)
    assert language is not None
    OUTLINES._entries.pop(path, None)
    PARSES._trees.pop(path, None)
    in_process = index_module.index_file(Workspace([path.parent]), path, language, encoding)
    return index_module.read_record(str(path), language, encoding, [str(path.parent)]), in_process


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_a_workers_records_are_the_outlines_of_real_files(encoding):
    files = [p for p in REAL_FILES if language_for(p)] + list(fixture_files().values())
    for path in files:
        worker, in_process = _both_records(path.resolve(), encoding)
        assert worker is not None and worker == in_process, path


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(sorted(fixture_files())),
    edits=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12), st.sampled_from(BYTE_PIECES)), max_size=6),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_a_workers_records_are_the_outline_of_any_file(tmp_path_factory, name, edits, encoding):
    """Non-ASCII names, CRLF lines, bytes that are not UTF-8 and syntax errors included."""
    data = fixture_files()[name].read_bytes()
    for where, length, piece in edits:
        at = int(where * len(data))
        data = data[:at] + piece + data[at + length :]
    path = tmp_path_factory.mktemp("edited", numbered=True).resolve() / name
    path.write_bytes(data)
    worker, in_process = _both_records(path, encoding)
    assert worker is not None and worker == in_process


@pytest.mark.parametrize("in_workers", [True, False])
def test_a_build_steps_aside_between_files_and_leaves_its_records_out_of_the_collectors_view(
    project, monkeypatch, in_workers
):
    """Light requests run first (the build steps aside between any two files it lists or
    parses), and records live as long as the index: a full collection must not walk them."""
    monkeypatch.setattr(index_module, "PROCESS_MIN_FILES", 1 if in_workers else 10**6)
    index = index_module.SymbolIndex(Workspace([project]))
    steps: list[int] = []
    count = index.build(step_aside=lambda: steps.append(len(index.files)))
    assert len(steps) == 2 * count  # after each file listed (and checked against the index), parsed
    assert steps[count : count + 2] == [1, 2]  # parsing: one file more each time
    records = {id(record) for record in index.files.values()}
    assert records and not any(id(o) in records for o in gc.get_objects())


def two_folders(tmp_path: Path) -> tuple[Path, Path]:
    """Two workspace folders: one file in the first, two in the second."""
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    (first / "a.py").write_text("def alpha():\n    pass\n")
    (second / "b.py").write_text("def beta():\n    pass\n")
    (second / "c.py").write_text("def gamma():\n    pass\n")
    backdate(tmp_path)
    return first, second


def paused_build(index: index_module.SymbolIndex, pause_when: Callable[[], bool]):
    """index.build() in a thread of its own (as the server's heavy lane runs it), paused at
    its first step aside where `pause_when()`: (the thread, set this to go on)."""
    paused, go_on = threading.Event(), threading.Event()

    def step_aside() -> None:
        if not paused.is_set() and pause_when():
            paused.set()
            assert go_on.wait(30)

    thread = threading.Thread(target=index.build, kwargs={"step_aside": step_aside})
    thread.start()
    assert paused.wait(30)
    return thread, go_on


def test_a_build_superseded_by_one_for_an_added_folder_keeps_the_folders_records(tmp_path):
    """The server builds again when folders change, in another worker thread, while the
    build of the old folders may still run: walking only those, that one dropped the
    records of the added folder when it ended."""
    first, second = two_folders(tmp_path)
    index = index_module.SymbolIndex(Workspace([first]))
    older, go_on = paused_build(index, lambda: True)  # in its walk of the first folder
    index.workspace.set_roots([first, second])
    index.build()
    go_on.set()
    older.join()
    assert sorted(p.name for p in index.files) == ["a.py", "b.py", "c.py"]
    assert [e.name for _, e in index.query("beta")] == ["beta"]


def test_a_build_superseded_by_one_for_a_removed_folder_puts_back_none_of_its_records(tmp_path, monkeypatch):
    """The removed folder's files, parsed by worker processes for the older build, are not
    put back after the newer build dropped them."""
    monkeypatch.setattr(index_module, "PROCESS_MIN_FILES", 1)
    monkeypatch.setattr(index_module, "MANY_CORES", True)
    first, second = two_folders(tmp_path)
    index = index_module.SymbolIndex(Workspace([first, second]))
    # paused once a record of the second folder is in, the other still to come
    older, go_on = paused_build(index, lambda: any(p.parent == second for p in index.files))
    index.workspace.set_roots([first])
    index.build()
    go_on.set()
    older.join()
    assert sorted(p.name for p in index.files) == ["a.py"]
    assert index.query("gamma") == index.query("beta") == []


def test_find_symbol_while_the_index_is_built_again_for_an_added_folder_finds_its_definitions(tmp_path):
    """Until the build for the new folders ends, the index lacks the added folder's files:
    find_symbol looks in the files, as before the first build ended."""
    first, second = two_folders(tmp_path)
    index = built(first)
    index.workspace.set_roots([first, second])
    rebuild, go_on = paused_build(index, lambda: True)
    try:
        answer = call(Context(index.workspace, index=index), "find_symbol", {"name_path": "beta"})
    finally:
        go_on.set()
        rebuild.join()
    assert [m["path"] for m in answer["matches"]] == ["second/b.py"]


def older_reindex(
    index: index_module.SymbolIndex, path: Path, buffer: str, monkeypatch
) -> Callable[[], None]:
    """`buffer` opened and re-indexed in a thread of its own (a heavy thread of the server),
    paused once it has read the buffer, as a slow parse: the function that lets it end."""
    made, go_on = threading.Event(), threading.Event()
    index_file = index_module.index_file

    def slow(*args):
        record = index_file(*args)
        made.set()
        assert go_on.wait(30)
        return record

    monkeypatch.setattr(index_module, "index_file", slow)
    index.workspace.open_document(path, buffer)
    older = threading.Thread(target=index.update, args=(path,))
    older.start()
    assert made.wait(30)
    monkeypatch.setattr(index_module, "index_file", index_file)

    def end() -> None:
        go_on.set()
        older.join()

    return end


def test_a_slow_reindex_of_an_older_buffer_does_not_replace_the_newer_buffers_record(tmp_path, monkeypatch):
    """Each change of an editor's buffer re-indexes it in a heavy thread; one of a large
    file may end after the next one's: its record, of the older text, is not put."""
    (tmp_path / "a.py").write_text("def on_disk():\n    pass\n")
    index = index_module.SymbolIndex(Workspace([tmp_path]))
    path = index.workspace.resolve("a.py")
    end = older_reindex(index, path, "def older():\n    pass\n", monkeypatch)
    index.workspace.open_document(path, "def newer():\n    pass\n")
    index.update(path)
    end()
    assert [e.name for _, e in index.query("newer")] == ["newer"] and index.query("older") == []
    assert index.current(path) is not None


def test_a_record_of_an_older_buffer_is_put_where_the_index_has_none(tmp_path, monkeypatch):
    """A file the built index has no record of gets the record of its older buffer when the
    buffer changed during the parse: find_symbol makes a stale record again, but would not
    see a file without one (its re-index comes a quarter second after the change)."""
    index = built(tmp_path)  # before the file exists
    path = tmp_path.resolve() / "a.py"
    path.write_text("def greet():\n    pass\n")
    end = older_reindex(index, path, "def greet():\n    pass\n", monkeypatch)
    index.workspace.open_document(path, "# edited\ndef greet():\n    pass\n")
    end()
    answer = call(Context(index.workspace, index=index), "find_symbol", {"name_path": "greet"})
    assert [(m["path"], m["start_line"]) for m in answer["matches"]] == [("a.py", 2)]


def record_of(names: list[str]) -> FileRecord:
    """A record holding `names` as top-level functions, one a line."""
    ranges = array("I", [v for n in range(len(names)) for v in (n, 0, n, 9, n, 4, n, 4 + len(names[n]))])
    return FileRecord(0, 0, "v", "python", "\n".join(names), "\n".join("" for _ in names), bytes(len(names)), ranges)  # fmt: skip


# Letters whose lowercase is longer (İ: i and a combining dot) or hangs on its neighbours
# (Σ: ς ending a word, else σ), letters a case-insensitive regular expression takes for others
# (ı and ſ for i and s), and characters special to regular expressions.
LETTERS = "abeGT_éİiı\u0307ΣσςſsS.$"
NAMES = st.lists(st.text(alphabet=LETTERS, min_size=1, max_size=8), max_size=12)
QUERIES = st.text(alphabet=LETTERS + "/[]^-\\*\n\ud800", max_size=4)


@settings(max_examples=200, deadline=None)
@given(
    changes=st.lists(st.tuples(st.integers(0, 7), st.one_of(st.none(), NAMES)), max_size=30),
    block_chars=st.sampled_from([1, 16, 64, 1 << 20]),
    queries=st.lists(QUERIES, min_size=1, max_size=4),
    limit=st.sampled_from([1, 5, 500]),
)
@example(changes=[(0, ["İs", "is", "i\u0307s"])], block_chars=1 << 20, queries=["İs", "i", "s"], limit=500)
@example(changes=[(0, ["G.Σ"])], block_chars=1 << 20, queries=["G.Σ"], limit=500)  # ς, in find's scan σ
def test_names_in_blocks_answer_what_one_string_of_all_names_would(changes, block_chars, queries, limit):
    """Files added, replaced and dropped one at a time, in blocks of any size: every query
    answers what ranking every indexed name would, find what matching every name path
    would, and each block is made again only when its names changed."""
    old, index_module.BLOCK_CHARS = index_module.BLOCK_CHARS, block_chars
    try:
        root = Path(__file__).parent  # the files need not exist: records are put directly
        index = index_module.SymbolIndex(Workspace([root]))
        for n, names in changes:
            index._put(root / f"f{n}.py", None if names is None else record_of(names))
            made = {id(block) for block in index.names()}
        everything = [(p, e) for p, record in index.files.items() for e in record.entries()]
        for query in queries:
            ranked = [
                (index_module.rank(query, e.name), len(e.name), str(p), e.range, p, e) for p, e in everything
            ]
            expected = sorted((h for h in ranked if h[0] is not None), key=lambda h: h[:4])[:limit]
            assert index.query(query, limit) == [(h[4], h[5]) for h in expected]
            for substring in (False, True) if query else ():
                matches = name_path_matcher(query, substring=substring)
                found = index.find(query, substring=substring, under=[root])
                assert sorted(found, key=str) == sorted(
                    ((p, e) for p, e in everything if matches(e.name_path)), key=str
                )
        if changes:
            assert {id(block) for block in index.names()} == made  # nothing changed since
    finally:
        index_module.BLOCK_CHARS = old
