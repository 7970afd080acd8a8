"""The symbol index on disk, so that a restart parses only the files that changed.

One file per workspace (its roots) and position encoding, in a cache folder outside the
workspace: `$LSP_AGENT_CACHE_DIR`, else `$XDG_CACHE_HOME/lsp-agent`, else
`~/.cache/lsp-agent`. A record is reused when its file's size and mtime_ns are unchanged
(a record its stat cannot vouch for has size -1, see index.trusted_stat) and its language's
grammar version (the grammar wheel's version and the query text) is the one that made it.

The file is the format line, each file's record (a pickle of its fields, then its use table's
bytes) one after the other, then a table: the paths, where each record lies and its checksum, the grammar
versions and the record's field names. The table's length and its own checksum end the file, so
a record can be read alone: a one-shot command reads the table and the few records it asks
for, not the whole file. Every checksum is keyed by a per-user secret (`secret`, a file only
its owner can read): anyone else who can write the cache folder cannot make a table or a
record this process takes, so a forged record (a kind code past the table, rows in the
billions, invented names) is refused before it is unpickled. The pickles hold plain values
(loading refuses any class but arrays). A file over MAX_FILE bytes is not read at all; each
record is checked against its bounds too. Any failure means the index is built afresh; a
record table of other fields (FileRecord changed) is another format, rebuilt, never misread.

Writing is atomic (a temporary file renamed over the old one), so concurrent servers never
see half a file: the last writer wins (a reader keeps the file it opened).

Use tables stay in the file: a record's pickle holds its table's stamp, length and checksum,
and a record loaded or saved keeps where its table is (uses.Stored), read and checked when
references looks in it. The file they are read from is the one opened (TableFile keeps it
open), not whatever has the index's name since; one changed in place since is not read.

A record also keeps its file's ctime and inode when saved: after a restart, a file rewritten
with its size and mtime kept (`touch -r`, a checkout within the second) has another ctime,
and its record is not loaded (as Workspace.text decides a text's identity).
"""

from __future__ import annotations

import io
import os
import pickle
import stat
import sys
from array import array
from dataclasses import fields
from functools import cache
from operator import attrgetter
from pathlib import Path

from ..errors import logger
from ..workspace import blake2b
from .languages import GRAMMARS, installed_version, query_source
from .outline import KINDS
from .records import FileRecord
from .uses import STAMP_BYTES, Stored, TableBytes

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Any, ClassVar

# 3: keyed checksum, ctime and inode; 4: the names used; 5: records read one by one (a table);
# 6: use tables apart from the names used, read a word at a time; 7: use tables after the
# pickles, read when looked in
FORMAT = b"lsp-agent symbol index 7\n"
DIGEST = 32  # the table's checksum
RECORD_DIGEST = 16  # each record's
TRAILER = 8 + DIGEST  # the table's length and checksum end the file
SECRET_BYTES = 32
MAX_FILE = 1 << 30  # a larger index file is not read (an index of 1,000,000 files is ~300 MB)
WINDOW = 1 << 22  # bytes of records read at once when all are loaded
MAX_ROW = 1 << 28  # rows and columns in a range beyond this are no file's (256 MiB texts at most)
FIELDS = tuple(f.name for f in fields(FileRecord))  # a record's pickle: ctime, inode, flat(record)
TABLE = 1 + FIELDS.index("use_table")  # where flat(record) has the use table
MAX_TABLE = 1 << 28  # a longer use table is no file's
_fields_of = attrgetter(*FIELDS)


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
    return folder / "index" / f"{blake2b(key, digest_size=12).hexdigest()}.symbols"


@cache
def grammar_version(language: str) -> str:
    """What an outline depends on besides the source: the grammar wheel's version and the query."""
    version = installed_version(GRAMMARS[language].package)
    query = blake2b(query_source(language).encode("utf-8"), digest_size=8).hexdigest()
    return f"{version}/{query}"


# Per path, the record's use table when written and where it is now (None: it could not be read)
Saved = dict[Path, tuple[TableBytes | None, Stored | None]]


def save(folder: Path, roots: list[Path], encoding: str, files: dict[Path, FileRecord]) -> Saved:
    """Write the records; per record with a use table, that table and where it now lies in
    the file written ({} when it could not be written)."""
    target = index_file(folder, roots, encoding)
    key = secret(folder)
    if not key:
        logger(__name__).warning("symbol index not saved: no secret in %s", folder)
        return {}
    import tempfile  # here: a one-shot command that only reads the index does not pay its imports

    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=target.name, suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                source = TableFile(os.open(temporary, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0)), key)
                saved = write_index(out, key, files, source)
            os.replace(temporary, target)
            source.settle()
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as exc:
        logger(__name__).warning("symbol index not saved to %s: %s", target, exc)
        return {}
    return saved


def write_index(out: io.BufferedWriter, key: bytes, files: dict[Path, FileRecord], source: TableFile) -> Saved:  # fmt: skip
    """The records one by one (each its own pickle and its use table: Python code between
    them, where other threads may take the interpreter), then their table."""
    out.write(FORMAT)
    spans, digests, paths = array("Q"), bytearray(), []
    saved: Saved = {}
    offset = len(FORMAT)
    for path, record in files.items():
        row = flat(record)
        written = row[TABLE]  # read once: make_tables may give the record another meanwhile
        table = written.read() if isinstance(written, Stored) else written
        if table:
            where = blake2b(table, digest_size=RECORD_DIGEST, key=key).digest()
            row = (*row[:TABLE], (table[:STAMP_BYTES], len(table), where), *row[TABLE + 1 :])
        else:
            row, table = (*row[:TABLE], None, *row[TABLE + 1 :]), b""
        blob = pickle.dumps((*identity_of(path), *row), protocol=pickle.HIGHEST_PROTOCOL)
        out.write(blob)
        out.write(table)
        spans.extend((offset, len(blob)))
        digests += blake2b(blob, digest_size=RECORD_DIGEST, key=key).digest()
        paths.append(str(path))
        if table:
            saved[path] = (written, Stored(source, offset + len(blob), len(table), table[:STAMP_BYTES]))
        elif written is not None:  # a table that could not be read: made again by make_tables
            saved[path] = (written, None)
        offset += len(blob) + len(table)
    languages = {r.language for r in files.values()}
    table = pickle.dumps(
        {
            "grammars": {lang: grammar_version(lang) for lang in languages},
            "fields": FIELDS,
            "paths": paths,
            "spans": spans.tobytes(),
            "digests": bytes(digests),
        },
        protocol=pickle.HIGHEST_PROTOCOL,
    )
    out.write(table)
    out.write(len(table).to_bytes(8, "little"))
    out.write(blake2b(table, digest_size=DIGEST, key=key).digest())
    return saved


def flat(record: FileRecord) -> tuple:
    """A record's fields as a pickle of plain values holds them: an array as its bytes, the
    typecodes of those fields first (an array pickled as itself costs the unpickler a class
    lookup, twice the time of all the rest)."""
    values = _fields_of(record)
    codes = "".join([v.typecode if isinstance(v, array) else " " for v in values])
    return (codes, *[v.tobytes() if isinstance(v, array) else v for v in values])


def unflat(codes: str, values: list) -> FileRecord:
    if len(codes) != len(values) or len(values) != len(FIELDS):
        raise ValueError("a record of another shape")
    fields: list[Any] = [v if c == " " else array(c, v) for c, v in zip(codes, values, strict=True)]
    return FileRecord(*fields)


class TableFile:
    """An index file, open, that use tables are read from (uses.Stored): the file written or
    loaded, kept while a record's table lies in it, even once another has its name. Its
    tables were checked once; a file changed since (rewritten in place: its stat differs) is
    not read."""

    def __init__(self, fd: int, key: bytes):
        self.fd, self.key = fd, key
        self.stat: tuple | None = None  # the file's, once whole (settle)

    def settle(self) -> None:
        """The file is whole: its stat from now on vouches that it is unchanged."""
        self.stat = self.identity()

    def identity(self) -> tuple | None:
        try:
            info = os.fstat(self.fd)
        except OSError:
            return None
        return info.st_ino, info.st_size, info.st_mtime_ns  # not ctime: another save unlinks it

    def table_at(self, offset: int, length: int) -> bytes | None:
        if self.stat is None or self.identity() != self.stat:
            return None
        try:
            data = os.pread(self.fd, length, offset)
        except OSError:
            return None
        return data if len(data) == length else None

    def digest(self, data: bytes | memoryview) -> bytes:
        return blake2b(data, digest_size=RECORD_DIGEST, key=self.key).digest()

    def __del__(self) -> None:
        try:
            os.close(self.fd)
        except OSError:
            pass


class _PlainValues(pickle.Unpickler):
    ARRAYS: ClassVar = {("array", "array"), ("array", "_array_reconstructor")}  # how an array pickles

    def find_class(self, module: str, name: str):
        if (module, name) in self.ARRAYS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the index file holds a {module}.{name}: refused")


def plain(blob: bytes) -> object:
    return _PlainValues(io.BytesIO(blob)).load()


def identity_of(path: Path | str) -> tuple[int, int]:
    """(ctime_ns, inode) of a file, (-1, -1) when it cannot be stat'ed."""
    try:
        info = os.stat(path)
    except OSError:
        return -1, -1
    return info.st_ctime_ns, info.st_ino


def load(folder: Path, roots: list[Path], encoding: str) -> dict[Path, FileRecord]:
    """The saved records whose grammar is unchanged and whose file is the one indexed;
    {} when there is no usable file."""
    saved = load_lazily(folder, roots, encoding)
    if saved is None:
        return {}
    try:
        return saved.take_all()
    except ValueError as exc:
        logger(__name__).warning("symbol index not usable (%s): rebuilding it", exc)
        return {}
    finally:
        saved.close()


def load_lazily(folder: Path, roots: list[Path], encoding: str) -> SavedRecords | None:
    """The saved records as `load` would give them, each checked and made when first asked
    for (a one-shot command looks at a few files of thousands); None without a usable file."""
    source = index_file(folder, roots, encoding)
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    key = secret(folder)
    try:
        saved = SavedRecords(fd, key) if key else None
    except OtherVersion as exc:  # as after an upgrade: no fault to warn of
        logger(__name__).info("symbol index %s was saved by another version (%s): made again by the next build", source, exc)  # fmt: skip
        saved = None
    except Exception as exc:  # not an index file, damaged, not keyed by this user's secret
        logger(__name__).warning("symbol index %s is not usable (%s): rebuilding it", source, exc)
        saved = None
    if saved is None:
        os.close(fd)
    return saved


class OtherVersion(ValueError):
    """A saved index that another version of lsp-agent wrote (its format line, its records'
    fields): expected after an upgrade, and made again by the next build, not damage."""


class SavedRecords:
    """A saved index file's table, whose records are read, checked and made one at a time
    (see load_lazily). Raises ValueError when the file is no index keyed by `key`."""

    def __init__(self, fd: int, key: bytes):
        self.fd = -1  # until the table is read: the caller closes it
        info = os.fstat(fd)
        size = info.st_size
        if not stat.S_ISREG(info.st_mode) or size > MAX_FILE:  # a 2 GiB sparse file is not read
            raise ValueError(f"not a regular file under {MAX_FILE} bytes")
        head = os.pread(fd, len(FORMAT), 0)
        if head != FORMAT and head.startswith(FORMAT[: FORMAT.rindex(b" ") + 1]):
            raise OtherVersion("another format")
        if size < len(FORMAT) + TRAILER or head != FORMAT:
            raise ValueError("another format")
        trailer = os.pread(fd, TRAILER, size - TRAILER)
        length, digest = int.from_bytes(trailer[:8], "little"), trailer[8:]
        end = size - TRAILER - length  # where the records end
        if not len(FORMAT) <= end:
            raise ValueError("a table longer than the file")
        table = os.pread(fd, length, end)
        if blake2b(table, digest_size=DIGEST, key=key).digest() != digest:
            raise ValueError("not keyed by this user's secret")
        self.key, self.end = key, end
        self.grammars, self.paths, self.spans, self.digests = self.parts(plain(table))
        self.rows = {path: i for i, path in enumerate(self.paths)}  # a path's record not taken yet
        self.current: dict[str, bool] = {}  # per language, whether its grammar made the records
        self.tables: TableFile | None = None  # what the records' use tables are read from, once one has one
        self.fd = fd  # whole: this object closes it

    def parts(self, table: object) -> tuple[dict, list[str], array, bytes]:
        """The table's parts, if they are whole and of these records' fields."""
        if not isinstance(table, dict):
            raise ValueError("a table of another shape")
        if table.get("fields") != FIELDS:
            raise OtherVersion("records of other fields")
        grammars, paths, digests = table["grammars"], table["paths"], table["digests"]
        spans = array("Q", table["spans"])
        n = len(paths)
        if not (isinstance(grammars, dict) and isinstance(paths, list) and isinstance(digests, bytes)):
            raise ValueError("a table of another shape")
        if len(spans) != 2 * n or len(digests) != RECORD_DIGEST * n:
            raise ValueError("a table of another shape")
        return grammars, paths, spans, digests

    def take(self, path: Path) -> FileRecord | None:
        """The record of `path`, once (the caller keeps it); None when none is usable."""
        i = self.rows.pop(str(path), None)
        if i is None:
            return None
        offset, length = self.spans[2 * i], self.spans[2 * i + 1]
        if not len(FORMAT) <= offset <= offset + length <= self.end:
            return None
        return self.record(i, os.pread(self.fd, length, offset))

    def take_all(self) -> dict[Path, FileRecord]:
        """Every usable record, by path; {} when any is damaged (the file is not to be trusted).
        The file is read a window at a time: a monorepo's is over 100 MiB, which read whole
        was the peak of every process loading it."""
        records = {}
        window, start = memoryview(b""), 0

        def read(offset: int, length: int) -> memoryview:
            nonlocal window, start
            if not start <= offset <= offset + length <= start + len(window):
                window, start = memoryview(os.pread(self.fd, max(length, WINDOW), offset)), offset
            return window[offset - start : offset - start + length]

        for path, i in self.rows.items():
            offset, length = self.spans[2 * i], self.spans[2 * i + 1]
            if not len(FORMAT) <= offset <= offset + length <= self.end:
                raise ValueError("a record outside the file's records")
            record = self.record(i, read(offset, length), strict=True)
            if record is not None:
                table = record.use_table
                if isinstance(table, Stored) and not table.checked(read(table.offset, table.length)):
                    raise ValueError("a damaged use table")
                records[Path(path)] = record
        self.rows = {}
        return records

    def record(self, i: int, blob: bytes | memoryview, *, strict: bool = False) -> FileRecord | None:
        """Record `i` from its pickle, if its checksum is its, its grammar current, its file
        the one indexed and its parts whole; `strict`: ValueError for a damaged one."""
        digest = blake2b(blob, digest_size=RECORD_DIGEST, key=self.key).digest()
        try:
            if digest != self.digests[RECORD_DIGEST * i : RECORD_DIGEST * (i + 1)]:
                raise ValueError("a record whose checksum is not its")
            return self.usable(i, plain(bytes(blob)))
        except Exception as exc:  # a valid checksum over a row of another shape
            if strict:
                raise ValueError(f"a damaged record ({exc})") from None
            return None

    def usable(self, i: int, row: object) -> FileRecord | None:
        if not isinstance(row, tuple) or len(row) < 3 or not isinstance(row[2], str):
            raise ValueError("a record of another shape")
        ctime, inode, codes, *values = row
        if len(values) == len(FIELDS):
            values[TABLE - 1] = self.stored(i, values[TABLE - 1])
        record = unflat(codes, values)
        if not self.is_current(record.language) or identity_of(self.paths[i]) != (ctime, inode):
            return None  # another grammar, or the file changed in a way its size and mtime hide
        return record if _whole(record) else None

    def stored(self, i: int, saved: object) -> Stored | None:
        """Where record i's use table lies: after its pickle, as long as the pickle says."""
        if saved is None:
            return None
        if not (isinstance(saved, tuple) and len(saved) == 3 and isinstance(saved[0], bytes) and isinstance(saved[1], int) and isinstance(saved[2], bytes)):  # fmt: skip
            raise ValueError("a use table of another shape")
        stamp, length, digest = saved
        start = self.spans[2 * i] + self.spans[2 * i + 1]
        if not (len(stamp) == STAMP_BYTES and 0 < length <= MAX_TABLE and start + length <= self.end):
            raise ValueError("a use table outside the file's records")
        if self.tables is None:
            self.tables = TableFile(os.dup(self.fd), self.key)
            self.tables.settle()
        return Stored(self.tables, start, length, stamp, digest)

    def is_current(self, language: str) -> bool:
        """Whether the language's grammar made the saved records as it would make them now
        (asked once per language, and only for the languages of the records taken)."""
        if language not in self.current:
            saved = self.grammars.get(language)
            self.current[language] = language in GRAMMARS and grammar_version(language) == saved
        return self.current[language]

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        self.close()


def _whole(record: FileRecord) -> bool:
    """Whether a record's parts agree on its number of definitions and stay in bounds."""
    n = len(record.kinds)
    lines = record.names.count("\n") + 1 if n else 0
    return (
        isinstance(record.names, str)
        and isinstance(record.containers, str)
        and isinstance(record.version, str)
        and isinstance(record.kinds, bytes)
        and isinstance(record.ranges, array)
        and record.ranges.typecode == "I"
        and len(record.ranges) == 8 * n
        and lines == n
        and record.containers.count("\n") + 1 == max(n, 1)
        and (not n or (not record.kinds.translate(None, KIND_CODES) and at_most_max_row(record.ranges)))
        and isinstance(record.uses, bytes)
        and (record.use_table is None or isinstance(record.use_table, Stored))
        and isinstance(record.generated, bool)
        and isinstance(record.heads, array)
        and record.heads.typecode == "i"
        and len(record.heads) in (0, 2 * n)
        and (not record.heads or at_most_max_row(record.heads))
        and isinstance(record.docs, str)
        and (record.docs.count("\n") + 1 == n if record.heads else not record.docs)
    )


KIND_CODES = bytes(range(len(KINDS)))  # a record's kinds, with these deleted, are nothing
# The byte of a 4-byte int that says most about its size (its top byte: in memory order, the
# last on a little-endian machine) and, for an array of them, the top bytes allowed when every
# value is below MAX_ROW (2**28: below 0x10; 0xff: a negative int of an "i" array).
TOP = 3 if sys.byteorder == "little" else 0
BELOW_MAX_ROW = bytes(range(MAX_ROW >> 24))


def at_most_max_row(values: array) -> bool:
    """max(values) <= MAX_ROW, for a whole index's millions of values: their top bytes are
    looked at in C (max() would make an int of each), the exact test only when one is large."""
    if values.itemsize == 4:
        tops = values.tobytes()[TOP::4].translate(None, BELOW_MAX_ROW)
        if not tops or (values.typecode == "i" and not tops.translate(None, b"\xff")):
            return True
    return max(values) <= MAX_ROW
