"""The symbol index cache can be wrong without harm: a file anyone could write (with a valid
unkeyed checksum) is refused, an oversized one is not read, any damage rebuilds, and after a
restart a file rewritten with its size and mtime kept is not served from its old record."""

from __future__ import annotations

import hashlib
import os
import pickle
import time
import tracemalloc
from array import array
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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


def forge(saved: Path, change, key: bytes = b"") -> None:
    """Rewrite the index file as someone without the secret could (or, with `key`, as this
    user could): each record changed, the checksums recomputed with that key (unkeyed: as
    the format before keyed checksums)."""
    data = saved.read_bytes()
    length = int.from_bytes(data[-store.TRAILER : -store.DIGEST], "little")
    table = pickle.loads(data[-store.TRAILER - length : -store.TRAILER])
    spans = array("Q", table["spans"])
    records, digests = bytearray(), bytearray()
    for offset, size in zip(spans[::2], spans[1::2], strict=True):
        row = list(pickle.loads(data[offset : offset + size]))
        change(row)
        blob = pickle.dumps(tuple(row))
        spans[len(digests) // 8], spans[len(digests) // 8 + 1] = len(store.FORMAT) + len(records), len(blob)
        records += blob
        digests += hashlib.blake2b(blob, digest_size=store.RECORD_DIGEST, key=key).digest()
    table |= {"spans": spans.tobytes(), "digests": bytes(digests)}
    table_bytes = pickle.dumps(table)
    digest = hashlib.blake2b(table_bytes, digest_size=store.DIGEST, key=key).digest()
    saved.write_bytes(store.FORMAT + records + table_bytes + len(table_bytes).to_bytes(8, "little") + digest)


def set_field(name: str, value):
    """Set one field of every record (a record's pickle: ctime, inode, the typecodes of its
    arrays, then store.FIELDS)."""

    def change(row):
        i = store.FIELDS.index(name)
        codes = row[2]
        row[2] = codes[:i] + (value.typecode if isinstance(value, array) else " ") + codes[i + 1 :]
        row[3 + i] = value.tobytes() if isinstance(value, array) else value

    return change


@pytest.mark.parametrize(
    "change",
    [
        set_field("kinds", bytes([250])),  # a kind code past the table
        set_field("ranges", array("I", [0, 4_000_000_000, 0, 0, 0, 0, 0, 0])),  # a row in the billions
        set_field("names", "invented_name"),  # names nobody wrote
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


def test_a_record_holding_an_object_is_refused_even_under_the_secret(project, tmp_path):
    cache = tmp_path / "cache"
    built(project, cache)
    saved = store.index_file(cache, [project], "utf-8")
    forge(saved, set_field("names", Path("original_name")), key=store.secret(cache))
    assert store.load(cache, [project], "utf-8") == {}


def test_records_of_other_fields_are_not_read_as_these(project, tmp_path, monkeypatch):
    """A FileRecord with a field more or fewer is another format: rebuilt, never misread."""
    cache = tmp_path / "cache"
    built(project, cache)
    assert store.load(cache, [project], "utf-8")
    monkeypatch.setattr(store, "FIELDS", (*store.FIELDS, "another"))
    assert store.load(cache, [project], "utf-8") == {}
    assert store.load_lazily(cache, [project], "utf-8") is None


def test_an_index_saved_by_another_version_is_no_fault_to_warn_of(project, tmp_path, monkeypatch, caplog):
    """After an upgrade each one-shot command would find the saved index of the version
    before (until a build makes it again): said in the log, not as a warning on stderr. A
    damaged one is still warned of."""
    cache = tmp_path / "cache"
    built(project, cache)
    saved = store.index_file(cache, [project], "utf-8")
    monkeypatch.setattr(store, "FIELDS", (*store.FIELDS, "another"))
    with caplog.at_level("INFO", logger=store.__name__):
        assert store.load_lazily(cache, [project], "utf-8") is None
    assert [r.levelname for r in caplog.records] == ["INFO"] and "another version" in caplog.text
    monkeypatch.undo()
    content = saved.read_bytes()
    saved.write_bytes(content.replace(store.FORMAT, store.FORMAT.rstrip(b"\n") + b"9\n", 1))  # a later one
    caplog.clear()
    with caplog.at_level("INFO", logger=store.__name__):
        assert store.load_lazily(cache, [project], "utf-8") is None
    assert [r.levelname for r in caplog.records] == ["INFO"]
    saved.write_bytes(b"garbage" + content)
    caplog.clear()
    assert store.load_lazily(cache, [project], "utf-8") is None
    assert [r.levelname for r in caplog.records] == ["WARNING"]


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


BOUNDS = st.sampled_from([store.MAX_ROW - 1, store.MAX_ROW, store.MAX_ROW + 1, 0, -1, 2**31 - 1])


@given(
    st.sampled_from(["I", "i"]), st.lists(st.integers(-(2**31), 2**32 - 1) | BOUNDS, min_size=1, max_size=20)
)
def test_the_bounds_check_of_a_records_rows_is_max_s(code, values):
    """A forged record's rows past MAX_ROW are refused by their top bytes as max() would."""
    values = [v for v in values if (0 if code == "I" else -(2**31)) <= v < (2**32 if code == "I" else 2**31)]
    if values:
        assert store.at_most_max_row(array(code, values)) == (max(values) <= store.MAX_ROW)


def test_every_record_is_loaded_a_window_at_a_time(tmp_path, monkeypatch):
    """Loading reads the file a window at a time (a monorepo's index is over 100 MiB, which
    read whole was the peak of every process loading it): with windows smaller than the
    file, the records are those of one read, and the memory held at once is a window's."""
    root = tmp_path / "ws"
    root.mkdir()
    old = time.time_ns() - 3_600 * 10**9  # not changed just now: its record is kept
    for n in range(120):
        (root / f"m{n}.py").write_text("".join(f"def f{n}_{k}(x):\n    return x + {k}\n" for k in range(60)))
        os.utime(root / f"m{n}.py", ns=(old, old))
    cache = tmp_path / "cache"
    built(root, cache).save()
    size = store.index_file(cache, [root], "utf-8").stat().st_size

    def loaded(window: int) -> tuple[dict, int]:
        monkeypatch.setattr(store, "WINDOW", window)
        tracemalloc.start()
        try:
            return store.load(cache, [root], "utf-8"), tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    whole, whole_peak = loaded(size)
    windowed, peak = loaded(size // 7)
    assert len(whole) == 120
    assert windowed == whole and list(windowed) == list(whole)
    assert peak < whole_peak - size // 2, (peak, whole_peak, size)
