"""Use tables in the saved index. A warm start saves the index again only when it made a use
table: a file whose language has none (a shell script) is not counted as made, so the index
is not written out again at every start, and the tool worker, which loads the saved index
again when it changes, does not load it twice (two indexes at once at monorepo scale) for
the first heavy call. Saved or loaded, the tables stay in the file, read when looked in."""

from __future__ import annotations

import os
import pickle

from lsp_agent.syntax import store
from lsp_agent.syntax.index import SymbolIndex, read_record
from lsp_agent.syntax.references import table_stamp
from lsp_agent.syntax.uses import Stored, has_table
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


def test_a_file_without_a_table_is_not_made_again_at_each_start(tmp_path, index_cache):
    (tmp_path / "a.py").write_text("def total(items):\n    return sum_all(items)\n")
    (tmp_path / "run.sh").write_text('#!/bin/sh\nfor item in "$@"; do echo "$item"; done\n')
    for path in tmp_path.iterdir():  # older than the racy window: trusted by stat
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    ws = Workspace([tmp_path])
    index = SymbolIndex(ws, cache=index_cache)
    index.build()
    assert index.make_tables() == 1  # a.py's; the script's language makes none
    assert not has_table(index.files[tmp_path / "run.sh"].use_table, table_stamp("bash"))
    saved = store.index_file(index_cache, ws.roots, index.encoding)
    written = saved.stat().st_mtime_ns
    warm = SymbolIndex(ws, cache=index_cache)
    warm.build()
    assert warm.make_tables() == 0
    assert saved.stat().st_mtime_ns == written
    assert has_table(warm.files[tmp_path / "a.py"].use_table, table_stamp("python"))


def tabled(root, cache) -> SymbolIndex:
    """An index of two Python files with their use tables made and saved."""
    (root / "a.py").write_text("class Box:\n    def fill(self, items):\n        return self.pack(items)\n")
    (root / "b.py").write_text("from a import Box\n\ndef run():\n    Box().fill([1])\n    Box().fill([2])\n")
    for path in root.iterdir():  # older than the racy window: trusted by stat
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    index = SymbolIndex(Workspace([root]), cache=cache)
    index.build()
    assert index.make_tables() == 2
    return index


def test_use_tables_are_read_from_the_file_they_were_saved_to(tmp_path, index_cache):
    """Saved or loaded, a record keeps where its table lies, not the table (a monorepo's take
    54 MiB); the tables read so answer as the tables made, even once the file that held them
    is gone (the one opened is read)."""
    root = tmp_path / "ws"
    root.mkdir()
    made = tabled(root, index_cache)
    assert all(isinstance(r.use_table, Stored) for r in made.files.values())  # saved: read from there
    warm = SymbolIndex(Workspace([root]), cache=index_cache)
    warm.build()
    stamp = table_stamp("python")
    for name in ("a.py", "b.py"):
        loaded = warm.files[root / name]
        assert isinstance(loaded.use_table, Stored)
        fresh = read_record(str(root / name), "python", warm.encoding, [str(root)], table=True)
        assert fresh is not None and isinstance(fresh.use_table, bytes)
        assert loaded.table(stamp) == fresh.table(stamp) and loaded.use_table == fresh.use_table
    asked = {"name": "Box/fill", "precision": "syntax"}
    answer = call(Context(warm.workspace, index=warm), "references", asked)["text"]
    assert answer.count("Box().fill") == 2
    store.index_file(index_cache, warm.workspace.roots, warm.encoding).unlink()
    assert call(Context(warm.workspace, index=warm), "references", asked)["text"] == answer
    assert warm.files[root / "b.py"].table(stamp).find("fill") == fresh.table(stamp).find("fill")


def test_a_damaged_use_table_is_never_read(tmp_path, index_cache):
    """A table whose bytes are not those saved: loading the whole index refuses it (built
    again), and a record taken alone has no table (its file is read instead)."""
    root = tmp_path / "ws"
    root.mkdir()
    made = tabled(root, index_cache)
    table = made.files[root / "b.py"].use_table
    saved = store.index_file(index_cache, made.workspace.roots, made.encoding)
    data = bytearray(saved.read_bytes())
    data[table.offset + table.length // 2] ^= 0xFF
    saved.write_bytes(bytes(data))
    assert store.load(index_cache, made.workspace.roots, made.encoding) == {}
    alone = store.load_lazily(index_cache, made.workspace.roots, made.encoding)
    assert alone is not None
    record = alone.take(root / "b.py")
    assert record is not None and isinstance(record.use_table, Stored)
    assert record.table(table_stamp("python")) is None and record.use_table.read() is None
    assert alone.take(root / "a.py").table(table_stamp("python")) is not None


def test_an_index_file_changed_in_place_is_not_read_and_its_tables_are_made_again(tmp_path, index_cache):
    """Tables are checked once, when loaded or written: a file rewritten in place since (its
    mtime moves) is read no more, and saving again leaves those records without a table, so
    make_tables makes them again (none is kept pointing at the old file)."""
    root = tmp_path / "ws"
    root.mkdir()
    made = tabled(root, index_cache)
    saved = store.index_file(index_cache, made.workspace.roots, made.encoding)
    warm = SymbolIndex(Workspace([root]), cache=index_cache)
    warm.build()
    stamp = table_stamp("python")
    assert warm.files[root / "a.py"].table(stamp) is not None
    saved.write_bytes(saved.read_bytes())  # the same bytes, written in place
    later = saved.stat().st_mtime_ns + 5_000_000_000  # as a later write moves it
    os.utime(saved, ns=(later, later))
    assert made.files[root / "a.py"].table(stamp) is None and warm.files[root / "a.py"].table(stamp) is None
    warm.save()
    assert all(r.use_table is None for r in warm.files.values())
    assert warm.make_tables() == 2
    assert warm.files[root / "b.py"].table(stamp).find("fill") is not None


def test_saving_again_and_again_keeps_no_old_file_open(tmp_path, index_cache):
    """Each save points the records at the file it wrote; the one before is closed once no
    record's table lies in it."""
    root = tmp_path / "ws"
    root.mkdir()
    index = tabled(root, index_cache)
    index.save()
    open_before = len(os.listdir("/proc/self/fd"))
    for _ in range(10):
        index.save()
    assert len(os.listdir("/proc/self/fd")) <= open_before


def test_a_record_sent_to_another_process_carries_its_tables_bytes(tmp_path, index_cache):
    root = tmp_path / "ws"
    root.mkdir()
    record = tabled(root, index_cache).files[root / "a.py"]
    sent = pickle.loads(pickle.dumps(record))
    assert isinstance(sent.use_table, bytes) and sent.use_table == record.use_table.read()
