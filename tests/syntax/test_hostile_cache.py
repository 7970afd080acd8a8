"""The symbol index cache can be wrong without harm: a file anyone could write (with a valid
unkeyed checksum) is refused, an oversized one is not read, any damage rebuilds, and after a
restart a file rewritten with its size and mtime kept is not served from its old record."""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import time
import tracemalloc
from pathlib import Path

import pytest

from lsp_agent.syntax import index as index_module
from lsp_agent.syntax import store
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("def original_name():\n    pass\n")
    old = time.time_ns() - 3_600 * 10**9
    os.utime(root / "a.py", ns=(old, old))
    return root


def built(root: Path, cache: Path) -> index_module.SymbolIndex:
    index = index_module.SymbolIndex(Workspace([root]), "utf-8", cache=cache)
    index.build()
    return index


def forge(saved: Path, change) -> None:
    """Rewrite the index file as someone without the secret could: the payload changed, the
    checksum recomputed without a key (as the format before keyed checksums)."""
    payload = saved.read_bytes()[len(store.FORMAT) + store.DIGEST :]
    data = pickle.load(io.BytesIO(payload))
    change(data)
    payload = pickle.dumps(data)
    saved.write_bytes(store.FORMAT + hashlib.blake2b(payload, digest_size=store.DIGEST).digest() + payload)


def set_row(field: int, value):
    """Set one field of every row, counted from the end (names -4, kinds -2, ranges -1)."""

    def change(data):
        rows = [list(row) for row in data["files"]]
        for row in rows:
            row[field] = value
        data["files"] = [tuple(row) for row in rows]

    return change


@pytest.mark.parametrize(
    "change",
    [
        set_row(-2, bytes([250])),  # a kind code past the table
        set_row(-1, bytes(4) + (4_000_000_000).to_bytes(4, "little") + bytes(24)),  # a row in the billions
        set_row(-4, "invented_name"),  # names nobody wrote
    ],
    ids=["kind-250", "huge-row", "invented-name"],
)
def test_a_forged_index_file_is_refused_and_rebuilt(project, tmp_path, change):
    cache = tmp_path / "cache"
    built(project, cache)
    saved = store.index_file(cache, [project], "utf-8")
    forge(saved, change)
    assert store.load(cache, [project], "utf-8") == {}
    index = built(project, cache)
    ctx = Context(index.workspace, index=index)
    answer = call(ctx, "find_symbol", {"name_path": "original_name"})
    assert "error" not in answer and "a.py" in answer["text"]
    assert (
        "invented_name"
        not in call(ctx, "find_symbol", {"name_path": "invented_name"})["text"].split("\n")[1:]
    )


def test_an_oversized_index_file_is_not_read(project, tmp_path):
    cache = tmp_path / "cache"
    built(project, cache)
    saved = store.index_file(cache, [project], "utf-8")
    with open(saved, "r+b") as file:
        file.truncate(store.MAX_FILE + 1)  # sparse: no disk, but read whole it is a GiB of memory
    tracemalloc.start()
    try:
        assert store.load(cache, [project], "utf-8") == {}
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20


def test_a_cache_not_ours_is_not_trusted(project, tmp_path):
    cache = tmp_path / "cache"
    built(project, cache)
    (cache / "secret").chmod(0o644)  # readable by others: anyone could have made it
    assert store.load(cache, [project], "utf-8") == {}


def test_after_a_restart_a_rewrite_keeping_size_and_mtime_is_not_served_stale(project, tmp_path):
    cache = tmp_path / "cache"
    first = built(project, cache)
    first.save()
    path = project / "a.py"
    info = os.stat(path)
    path.write_text("def renamed_names():\n    pass\n")  # the same size
    os.utime(path, ns=(info.st_atime_ns, info.st_mtime_ns))  # and the same mtime
    assert os.stat(path).st_size == info.st_size
    index = built(project, cache)  # a new server: loads the saved index
    ctx = Context(index.workspace, index=index)
    assert "a.py" in call(ctx, "find_symbol", {"name_path": "renamed_names"})["text"]
    assert "a.py" not in call(ctx, "find_symbol", {"name_path": "original_name"})["text"]
