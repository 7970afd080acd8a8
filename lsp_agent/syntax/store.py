"""The symbol index on disk, so that a restart parses only the files that changed.

One file per workspace (its roots) and position encoding, in a cache folder outside the
workspace: `$LSP_AGENT_CACHE_DIR`, else `$XDG_CACHE_HOME/lsp-agent`, else
`~/.cache/lsp-agent`. A record is reused when its file's size and mtime_ns are unchanged
(a record its stat cannot vouch for has size -1, see index.trusted_stat) and its language's
grammar version (the grammar wheel's version and the query text) is the one that made it.

Writing is atomic (a temporary file renamed over the old one), so concurrent servers never
see half a file: the last writer wins. The payload is a pickle of plain values only (loading
refuses any class) under a checksum keyed by a per-user secret (`secret`, a file only its
owner can read): anyone else who can write the cache folder cannot make a file this server
takes, so a forged record (a kind code past the table, rows in the billions, invented
names) is refused before it is unpickled. A file over MAX_FILE bytes is not read at all;
each record is checked against its bounds too. Any failure means the index is built afresh.

A record also keeps its file's ctime and inode when saved: after a restart, a file rewritten
with its size and mtime kept (`touch -r`, a checkout within the second) has another ctime,
and its record is not loaded (as Workspace.text decides a text's identity).
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import stat
import tempfile
from array import array
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import BinaryIO

from .languages import GRAMMARS, query_source
from .outline import KINDS
from .records import FileRecord

log = logging.getLogger(__name__)

FORMAT = b"lsp-agent symbol index 4\n"  # 3: keyed checksum, ctime and inode; 4: the names used
DIGEST = 32
SECRET_BYTES = 32
MAX_FILE = 1 << 30  # a larger index file is not read (an index of 1,000,000 files is ~300 MB)
MAX_ROW = 1 << 28  # rows and columns in a range beyond this are no file's (256 MiB texts at most)


def cache_folder() -> Path:
    if folder := os.environ.get("LSP_AGENT_CACHE_DIR"):
        return Path(folder)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lsp-agent"


def secret(folder: Path) -> bytes:
    """This user's key for the index files' checksums: made once (random, in a file only its
    owner can read or write), then read. A key that cannot be read or made is None-like (b""):
    nothing is loaded, and nothing saved can be loaded."""
    path = folder / "secret"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "wb") as out:
                out.write(os.urandom(SECRET_BYTES))
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as file:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
                return b""  # another's, or readable by others: not a secret
            key = file.read(SECRET_BYTES + 1)
    except OSError:
        return b""
    return key if len(key) == SECRET_BYTES else b""


def index_file(folder: Path, roots: list[Path], encoding: str) -> Path:
    key = "\n".join([encoding, *map(str, roots)]).encode("utf-8", "surrogatepass")
    return folder / "index" / f"{hashlib.blake2b(key, digest_size=12).hexdigest()}.symbols"


@cache
def grammar_version(language: str) -> str:
    """What an outline depends on besides the source: the grammar wheel's version and the query."""
    try:
        version = metadata.version(GRAMMARS[language].package)
    except metadata.PackageNotFoundError:
        version = "?"
    query = hashlib.blake2b(query_source(language).encode("utf-8"), digest_size=8).hexdigest()
    return f"{version}/{query}"


def save(folder: Path, roots: list[Path], encoding: str, files: dict[Path, FileRecord]) -> None:
    target = index_file(folder, roots, encoding)
    key = secret(folder)
    if not key:
        log.warning("symbol index not saved: no secret in %s", folder)
        return
    rows = [
        (
            str(path),
            *identity_of(path),
            r.size,
            r.mtime_ns,
            r.version,
            r.language,
            r.names,
            r.containers,
            r.kinds,
            r.ranges.tobytes(),
            r.uses,
            r.generated,
            r.heads.tobytes(),
        )
        for path, r in files.items()
    ]
    languages = {r.language for r in files.values()}
    saved = {"grammars": {lang: grammar_version(lang) for lang in languages}, "files": rows}
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(FORMAT + bytes(DIGEST))  # the checksum follows the payload's last frame
                payload = _Frames(out, key)
                pickle.dump(saved, payload, protocol=pickle.HIGHEST_PROTOCOL)
                out.seek(len(FORMAT))
                out.write(payload.checksum.digest())
            os.replace(temporary, target)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        log.warning("symbol index not saved to %s: %s", target, exc)


class _Frames:
    """The payload's file as the pickler writes it or the unpickler reads it: a frame (64 KiB)
    a call, each call Python code where other threads may take the GIL. In one call, the
    pickle of a monorepo's index held it for 70 ms, the server's requests waiting."""

    def __init__(self, file: BinaryIO, key: bytes = b""):
        self.file = file
        self.checksum = hashlib.blake2b(digest_size=DIGEST, key=key)

    def write(self, data: bytes) -> int:
        self.checksum.update(data)
        return self.file.write(data)

    def read(self, size: int = -1) -> bytes:
        return self.file.read(size)

    def readline(self) -> bytes:
        return self.file.readline()


class _PlainValues(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        raise pickle.UnpicklingError(f"the index file holds a {module}.{name}: refused")


def identity_of(path: Path | str) -> tuple[int, int]:
    """(ctime_ns, inode) of a file, (-1, -1) when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except OSError:
        return -1, -1
    return info.st_ctime_ns, info.st_ino


def read_index(source: Path) -> bytes | None:
    """The index file's bytes, if it is a regular file of at most MAX_FILE bytes (checked
    before reading: a 2 GiB sparse file is not read whole to find it is not an index)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE:
            log.warning(
                "symbol index %s is not a regular file under %d bytes: rebuilding it", source, MAX_FILE
            )
            return None
        return file.read(MAX_FILE + 1)


def load(folder: Path, roots: list[Path], encoding: str) -> dict[Path, FileRecord]:
    """The saved records whose grammar is unchanged and whose file is the one indexed;
    {} when there is no usable file."""
    saved = saved_payload(folder, roots, encoding)
    return {} if saved is None else records_of(saved)


def load_lazily(folder: Path, roots: list[Path], encoding: str) -> SavedRecords | None:
    """The saved records as `load` would give them, each checked and made when first asked
    for (a one-shot command looks at a few files of thousands); None without a usable file."""
    saved = saved_payload(folder, roots, encoding)
    return None if saved is None else SavedRecords(saved)


def saved_payload(folder: Path, roots: list[Path], encoding: str) -> dict | None:
    """The saved index's plain values, if its file is whole and keyed by this user's secret."""
    source = index_file(folder, roots, encoding)
    data = read_index(source)
    key = secret(folder)
    if data is None or not key:
        return None
    head, digest, payload = (
        data[: len(FORMAT)],
        data[len(FORMAT) : len(FORMAT) + DIGEST],
        data[len(FORMAT) + DIGEST :],
    )
    if head != FORMAT or hashlib.blake2b(payload, digest_size=DIGEST, key=key).digest() != digest:
        log.warning("symbol index %s is not usable: rebuilding it", source)
        return None
    try:
        saved = _PlainValues(_Frames(io.BytesIO(payload))).load()
        return saved if isinstance(saved["grammars"], dict) and isinstance(saved["files"], list) else None
    except Exception as exc:  # a valid checksum over a payload of another shape
        log.warning("symbol index %s is not usable (%s): rebuilding it", source, exc)
        return None


def current_grammars(saved: dict) -> set[str]:
    """The languages whose grammar made the saved records as it would make them now."""
    return {
        lang
        for lang, version in saved["grammars"].items()
        if lang in GRAMMARS and grammar_version(lang) == version
    }


def records_of(saved: dict) -> dict[Path, FileRecord]:
    current = current_grammars(saved)
    records = {}
    rows = saved["files"]
    for n, row in enumerate(rows):
        # each row dropped once made a record: the next record's arrays and path take the
        # memory its parts held (freed at the end, they left 30-40 MiB of holes resident)
        rows[n] = None
        try:
            record = record_of(row, current)
        except Exception as exc:  # a valid checksum over a row of another shape
            log.warning("symbol index not usable (%s): rebuilding it", exc)
            return {}
        if record is not None:
            records[Path(row[0])] = record
    return records


def record_of(row: tuple, current: set[str]) -> FileRecord | None:
    """A saved row's record, if its grammar is current, its file the one indexed and its
    parts whole."""
    path, ctime, inode, size, mtime, version, language, names, containers, kinds, ranges, *used = row
    if language not in current or identity_of(path) != (ctime, inode):
        return None  # another grammar, or the file changed in a way its size and mtime hide
    uses, generated, heads = used
    record = FileRecord(size, mtime, version, language, names, containers, kinds, array("I", ranges), uses, generated, array("i", heads))  # fmt: skip
    return record if _whole(record) else None


class SavedRecords:
    """A saved index's rows by path, made into records one at a time (see load_lazily)."""

    def __init__(self, saved: dict):
        self.current = current_grammars(saved)
        self.rows = {row[0]: row for row in saved["files"] if isinstance(row, tuple) and row}

    def take(self, path: Path) -> FileRecord | None:
        """The record of `path`, once (the caller keeps it); None when none is usable."""
        row = self.rows.pop(str(path), None)
        try:
            return None if row is None else record_of(row, self.current)
        except Exception:  # a valid checksum over a row of another shape
            return None


def _whole(record: FileRecord) -> bool:
    """Whether a record's parts agree on its number of definitions and stay in bounds."""
    n = len(record.kinds)
    lines = record.names.count("\n") + 1 if n else 0
    return (
        isinstance(record.names, str)
        and isinstance(record.containers, str)
        and isinstance(record.version, str)
        and len(record.ranges) == 8 * n
        and lines == n
        and record.containers.count("\n") + 1 == max(n, 1)
        and (not n or (max(record.kinds) < len(KINDS) and max(record.ranges) <= MAX_ROW))
        and isinstance(record.uses, bytes)
        and isinstance(record.generated, bool)
        and len(record.heads) in (0, 2 * n)
        and (not record.heads or max(record.heads) <= MAX_ROW)
    )
