"""No stale answer: a file rewritten with the same size and modification time is read anew,
whether its change shows in ctime (the usual case) or only by content (a racily clean
entry, as git calls it: cached within the timestamps' granularity of being changed)."""

from __future__ import annotations

import os
import time
from types import SimpleNamespace

import pytest

from lsp_agent import workspace as workspace_module
from lsp_agent.errors import Refusal
from lsp_agent.workspace import Workspace


def rewrite_keeping_size_and_mtime(path, content: str) -> None:
    before = os.stat(path)
    path.write_text(content)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


@pytest.fixture
def reads(monkeypatch):
    """Count the disk reads the workspace makes."""
    counted = []
    original = Workspace._read_text

    def counting(self, path, *through):  # through: the descriptor it reads
        counted.append(path)
        return original(self, path, *through)

    monkeypatch.setattr(Workspace, "_read_text", counting)
    return counted


def test_same_size_and_mtime_is_seen_through_ctime(tmp_path, monkeypatch, reads):
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)  # every entry trusted by its stat
    path = tmp_path / "a.py"
    path.write_text("alpha = 1\n")
    ws = Workspace([tmp_path])
    assert ws.text(path).content == "alpha = 1\n"
    assert ws.text(path).content == "alpha = 1\n"
    assert len(reads) == 1  # the second answer came from the cache
    time.sleep(0.02)  # past the coarse clock's tick, so ctime moves
    rewrite_keeping_size_and_mtime(path, "omega = 2\n")
    assert ws.text(path).content == "omega = 2\n"


def test_racily_clean_entry_is_verified_by_content(tmp_path, monkeypatch, reads):
    # A file system whose timestamps cannot show the second write (coarse or unchanged
    # ctime): only size and mtime identify the file.
    monkeypatch.setattr(workspace_module, "file_identity", lambda info: (info.st_size, info.st_mtime_ns))
    path = tmp_path / "a.py"
    path.write_text("alpha = 1\n")
    ws = Workspace([tmp_path])
    assert ws.text(path).content == "alpha = 1\n"
    rewrite_keeping_size_and_mtime(path, "omega = 2\n")
    assert ws.text(path).content == "omega = 2\n"  # racy: re-read and compared
    assert len(reads) == 2


def test_old_files_are_served_from_the_cache(tmp_path, reads):
    path = tmp_path / "a.py"
    path.write_text("alpha = 1\n")
    old = time.time_ns() - 3_600 * 10**9
    os.utime(path, ns=(old, old))
    ws = Workspace([tmp_path])
    first = ws.text(path)
    # ctime is recent (utime just set it): racy, so the next use verifies by content once
    # more, and keeps the text whose line index may already be built.
    assert ws.text(path) is first
    assert len(reads) == 2
    ws._disk_cache[path] = workspace_module.Cached(ws._disk_cache[path].identity, first, racy=False)
    assert ws.text(path) is first
    assert len(reads) == 2  # a clean entry is trusted without reading


def test_racy_entry_becomes_clean_once_old(tmp_path, monkeypatch, reads):
    path = tmp_path / "a.py"
    path.write_text("alpha = 1\n")
    info = os.stat(path)
    changed = max(info.st_mtime_ns, info.st_ctime_ns)
    # The workspace's clock, set against the file's own timestamps: a stall of the test
    # process between the write and the read (a loaded CI) cannot age the entry.
    clock = SimpleNamespace(time_ns=lambda: changed + 1_000_000)  # read 1 ms after the write
    monkeypatch.setattr(workspace_module, "time", clock)
    ws = Workspace([tmp_path])
    ws.text(path)
    assert ws._disk_cache[path].racy
    clock.time_ns = lambda: changed + workspace_module.RACY_WINDOW_NS
    ws.text(path)  # verified by content, now past the window
    assert not ws._disk_cache[path].racy
    ws.text(path)
    assert len(reads) == 2


# --- search's symbol labels, kept by the same stat identity -----------------------------------


def searched(ws: Workspace, pattern: str) -> str:
    from lsp_agent.tools import Context, call

    return call(Context(ws), "search", {"pattern": pattern})["text"]


def test_search_labels_follow_a_rewrite_with_same_size_and_mtime(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)  # every entry trusted by its stat
    texts = []
    original = Workspace.text
    monkeypatch.setattr(Workspace, "text", lambda self, path: texts.append(path) or original(self, path))
    path = tmp_path / "a.py"
    path.write_text("class Alpha:\n    v = 1\n")
    ws = Workspace([tmp_path])
    assert "2 Alpha:    v = 1" in searched(ws, "v = 1")
    assert "2 Alpha:    v = 1" in searched(ws, "v = 1")
    assert len(texts) == 1  # the second search used the labels kept for the unchanged file
    time.sleep(0.02)  # past the coarse clock's tick, so ctime moves
    rewrite_keeping_size_and_mtime(path, "class Omega:\n    v = 1\n")
    assert "2 Omega:    v = 1" in searched(ws, "v = 1")


def test_search_labels_of_a_racy_file_are_not_kept(tmp_path, reads):
    path = tmp_path / "a.py"
    path.write_text("class Alpha:\n    v = 1\n")  # just written: within the racy window
    ws = Workspace([tmp_path])
    searched(ws, "v = 1")
    searched(ws, "v = 1")
    assert len(reads) == 2  # verified by content each time (the workspace reads it again)


def test_labels_made_ahead_while_rg_runs_are_those_a_search_keeps(tmp_path, monkeypatch, reads):
    """search prefetches a file's labels while rg writes nothing (LineSymbolsCache.warm): only
    where they will be kept, so that a file is read as often whether or not rg paused."""
    from lsp_agent.tools.search import LineSymbolsCache

    path = tmp_path / "a.py"
    path.write_text("class Alpha:\n    v = 1\n")  # just written: within the racy window
    ws, cache = Workspace([tmp_path]), LineSymbolsCache()
    cache.warm(ws, path)
    assert reads == []  # a racy file's labels are made when asked, each time
    ws.open_document(path, "class Omega:\n    v = 1\n")
    cache.warm(ws, path)
    assert reads == []  # nor an editor's buffer's
    ws.close_document(path)
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)
    cache.warm(ws, path)
    assert len(reads) == 1
    assert cache.get(ws, path).around(2) == "Alpha/v" and len(reads) == 1  # kept: not read again


def test_search_labels_follow_the_editor_buffer_then_the_disk(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)
    path = tmp_path / "a.py"
    path.write_text("class Alpha:\n    v = 1\n")
    ws = Workspace([tmp_path])
    assert "2 Alpha:" in searched(ws, "v = 1")
    ws.open_document(path, "class Omega:\n    v = 1\n")
    assert "2 Omega:" in searched(ws, "v = 1")
    ws.close_document(path)
    assert "2 Alpha:" in searched(ws, "v = 1")


def test_a_cached_text_is_served_by_one_lstat_but_never_through_a_link_swapped_in(
    tmp_path, monkeypatch, reads
):
    """A clean cached text is served after one lstat says the path still names the same
    file version (no open beneath the root); a link put in the file's place, or in a folder's
    place on the way, shows nothing from where it leads: refused, or the text read before."""
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)  # every entry trusted by its stat
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    (outside / "pkg").mkdir(parents=True)
    (outside / "pkg" / "a.py").write_text("SECRET = 1\n")
    (outside / "secret.py").write_text("SECRET = 2\n")
    path = root / "pkg" / "a.py"
    path.write_text("alpha = 1\n")
    ws = Workspace([root])
    assert ws.text(path).content == "alpha = 1\n"

    opened = []
    original = workspace_module.open_beneath
    monkeypatch.setattr(workspace_module, "open_beneath", lambda *a: opened.append(a) or original(*a))
    assert ws.text(path).content == "alpha = 1\n"
    assert (len(reads), opened) == (1, [])  # the second answer: one lstat, nothing opened

    path.rename(root / "pkg" / "moved.py")
    path.symlink_to(outside / "secret.py")  # a link in the file's own place
    with pytest.raises(Refusal):
        ws.text(path)

    path.unlink()
    (root / "pkg" / "moved.py").rename(path)
    assert ws.text(path).content == "alpha = 1\n"
    (root / "pkg").rename(tmp_path / "kept")
    (root / "pkg").symlink_to(outside / "pkg")  # a folder on the way swapped for a link out
    with pytest.raises(Refusal):
        ws.text(path)


def test_a_cached_text_of_a_root_removed_since_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(workspace_module, "RACY_WINDOW_NS", 0)  # every entry trusted by its stat
    kept, removed = tmp_path / "kept", tmp_path / "removed"
    kept.mkdir()
    removed.mkdir()
    path = removed / "a.py"
    path.write_text("alpha = 1\n")
    ws = Workspace([kept, removed])
    assert ws.text(path).content == "alpha = 1\n"
    ws.set_roots([kept])
    with pytest.raises(Refusal) as refused:
        ws.text(path)
    assert refused.value.code == "outside_workspace"
