"""The SCIP source: precise navigation from indexes built elsewhere (CI, another machine).

An index is a file named `index.scip` or `index.<name>.scip` found in the workspace (or
named in `scip_indexes`); its documents' paths are relative to the folder it is in. It is
loaded on the first question about a file under that folder, into an on-disk table
(sqlite, in the user's cache, shared by every process that reads the same index file):
occurrences keyed by symbol and by document, symbols with their documentation, and
implementation relationships. Nothing but the table's page cache stays in memory.

Never stale: at load each document's file is hashed (the workspace's content version)
and a file written after the index was is marked stale from the start; a question about a
stale file is refused (`Stale`, the live or syntax source answers and says why), and uses
found in stale files are left out of an answer and named. A damaged index is refused
whole (`Refused`), with the byte where it stops being SCIP.

Cheap at scale: each file an answer names is checked once per call, by one stat; its
content is hashed again only when that stat changed (or was too young to trust) since it
was last hashed — at load, whose stats the table keeps, or by this process — so an answer
over thousands of files reads none of them. A document that was ASCII when
indexed keeps its line count in the table: its positions are characters already and are
turned into locations without reading the file.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import Refusal
from ..workspace import MAX_TEXT_BYTES, Workspace, content_version, file_identity, is_racy, read_all
from .scip_format import DEFINITION, Damaged, Document, Range, read_index

STORE_VERSION = "3"
SKIP_FOLDERS = {"node_modules", "__pycache__", "site-packages", "dist", "build", "target"}
MOST_FOLDERS = 20_000  # a discovery walk stops here: name the indexes in settings past it
PAGE_CACHE_KIB = 256  # sqlite's own cache of an open table's pages
REDISCOVER = 30.0  # seconds a discovery is trusted (an index may be written meanwhile)

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE documents(id INTEGER PRIMARY KEY, path TEXT UNIQUE, version TEXT, utf8 INTEGER,
  lines INTEGER, stat TEXT);
CREATE TABLE symbols(id INTEGER PRIMARY KEY, name TEXT UNIQUE, documentation TEXT);
CREATE TABLE occurrences(symbol INTEGER, document INTEGER, line INTEGER, col INTEGER,
  end_line INTEGER, end_col INTEGER, roles INTEGER);
CREATE TABLE implements(symbol INTEGER, target INTEGER);
"""
INDEXES = """
CREATE INDEX occurrences_by_symbol ON occurrences(symbol);
CREATE INDEX occurrences_by_document ON occurrences(document, line);
CREATE INDEX implements_by_target ON implements(target);
"""


class Refused(Exception):
    """An index that cannot be read; the message says which and why."""


class Stale(Exception):
    """The file asked about changed since the index was built; the message says so."""


@dataclass
class Hits:
    """What an index answers: occurrences of ASCII documents as 1-based (path, line, column,
    end line, end column), ready; the others as (path, 0-based range, positions in UTF-8),
    to be converted from the file's text; those outside the roots or past a file's end
    counted."""

    tool: str
    index: str  # the index file, as shown
    exact: list[tuple[Path, int, int, int, int]] = field(default_factory=list)
    others: list[tuple[Path, Range, bool]] = field(default_factory=list)
    outside: int = 0
    invalid: int = 0
    stale: list[Path] = field(default_factory=list)  # files whose occurrences were left out
    documentation: list[str] = field(default_factory=list)

    @property
    def found(self) -> int:
        return len(self.exact) + len(self.others) + self.outside + self.invalid


@dataclass(frozen=True)
class Seen:
    """A document's file when last checked: its stat identity, where it resolves (None:
    outside the roots or unreadable), its content version on disk, and whether its stat
    was too young to vouch for the next check."""

    identity: tuple[int, ...]
    resolved: Path | None
    version: str
    racy: bool


def cache_folder() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "lsp-agent" / "scip"


class Index:
    """One loaded index file: its table, opened read-only, shared by threads under a lock."""

    def __init__(self, path: Path, table: Path) -> None:
        self.path = path
        self.root = path.parent
        self.db = sqlite3.connect(f"file:{table}?mode=ro", uri=True, check_same_thread=False)
        # a small page cache per index (a monorepo has dozens open): the kernel's caches the file
        self.db.execute(f"PRAGMA cache_size=-{PAGE_CACHE_KIB}")
        self.lock = threading.Lock()
        self.tool = self.query("SELECT value FROM meta WHERE key='tool'")[0][0] or "a SCIP indexer"
        self.seen: dict[tuple[tuple[Path, ...], Path], Seen] = {}  # by workspace roots and file
        self.files: dict[str, Path] = {}  # a document's path under the root, made once

    def file(self, relative: str) -> Path:
        if relative not in self.files:
            self.files[relative] = self.root / relative
        return self.files[relative]

    def current(
        self, ws: Workspace, file: Path, loaded: tuple[str, str] = ("", ""), folders: dict | None = None
    ) -> tuple[Path | None, str]:
        """Where a document's file resolves and its content version now (an open editor
        buffer's, if any): one stat, and a read and hash only when the stat changed since
        this process or the load (`loaded`: the stat and version the table keeps) hashed it.
        `folders` holds the folders resolved during one call."""
        key = (tuple(ws.roots), file)
        read_at = time.time_ns()  # before the stat, as the workspace's cache does
        try:
            info = os.stat(file)
        except OSError:
            return None, ""
        identity = file_identity(info)
        seen = self.seen.get(key)
        if seen is None and loaded[0] and loaded[0] == stat_key(identity):
            seen = Seen(identity, resolve_in(ws, file, folders), loaded[1], False)
            self.seen[key] = seen
        if seen is None or seen.identity != identity or seen.racy:
            seen = Seen(identity, *disk_version(ws, file), is_racy(info, read_at))
            self.seen[key] = seen
        if seen.resolved is not None and (buffer := ws.open_text(seen.resolved)) is not None:
            return seen.resolved, buffer.version
        return seen.resolved, seen.version

    def query(self, sql: str, *args: object) -> list[tuple]:
        with self.lock:
            return self.db.execute(sql, args).fetchall()

    def document(self, relative: str) -> tuple[int, str] | None:
        rows = self.query("SELECT id, version FROM documents WHERE path=?", relative)
        return (rows[0][0], rows[0][1]) if rows else None

    def utf8(self, document: int) -> bool:
        return bool(self.query("SELECT utf8 FROM documents WHERE id=?", document)[0][0])

    def symbols_at(self, document: int, line: int, column: int) -> list[tuple[int, str]]:
        """The symbols of the narrowest occurrence covering a 0-based position: all of them
        when several share it (a property that is a member of two types)."""
        sql = (
            "SELECT o.symbol, s.name, o.col, o.end_line, o.end_col FROM occurrences o "
            "JOIN symbols s ON s.id = o.symbol WHERE o.document=? AND o.line=? AND o.col<=? "
            "AND (o.end_line>o.line OR o.end_col>=?) ORDER BY o.end_col=?, o.end_col-o.col"
        )
        rows = self.query(sql, document, line, column, column, column)
        return [(row[0], row[1]) for row in rows if rows and row[2:] == rows[0][2:]]

    def occurrences(self, symbol: int, only: int | None, definitions: bool) -> list[tuple]:
        sql = (
            "SELECT d.path, d.version, d.utf8, d.lines, d.stat, o.line, o.col, o.end_line, o.end_col "
            "FROM occurrences o JOIN documents d ON d.id = o.document WHERE o.symbol=?"
        )
        args: list[object] = [symbol]
        if only is not None:  # a local symbol is one document's
            sql, args = sql + " AND o.document=?", [*args, only]
        if definitions:
            sql += f" AND o.roles & {DEFINITION}"
        return self.query(sql, *args)

    def symbol(self, name: str) -> int | None:
        rows = self.query("SELECT id FROM symbols WHERE name=?", name)
        return rows[0][0] if rows else None

    def implementations(self, symbol: int) -> list[int]:
        return [row[0] for row in self.query("SELECT symbol FROM implements WHERE target=?", symbol)]

    def documentation(self, symbol: int) -> list[str]:
        rows = self.query("SELECT documentation FROM symbols WHERE id=?", symbol)
        return rows[0][0].split("\x00") if rows and rows[0][0] else []


def stat_key(identity: tuple[int, ...]) -> str:
    return ",".join(map(str, identity))


def resolve_in(ws: Workspace, file: Path, folders: dict | None) -> Path | None:
    """A file resolved inside the roots, its folder resolved once per call (an answer names
    hundreds of files in a few folders); None outside them."""
    folders = {} if folders is None else folders
    try:
        if file.parent not in folders:
            folders[file.parent] = ws.resolve(file.parent)
        if os.path.islink(file):
            return ws.resolve(file)
        return folders[file.parent] / file.name
    except (Refusal, OSError, ValueError):
        folders.setdefault(file.parent, None)
        return None


def disk_version(ws: Workspace, file: Path) -> tuple[Path | None, str]:
    """A file resolved inside the roots and the content version of its bytes on disk."""
    try:
        resolved = ws.resolve(file)
        fd = ws.open_file(resolved)
        try:
            return resolved, content_version(read_all(fd, MAX_TEXT_BYTES))
        finally:
            os.close(fd)
    except (Refusal, OSError, ValueError):
        return None, ""


def table_for(path: Path, info: os.stat_result) -> Path:
    key = f"{STORE_VERSION}\x00{path}\x00{info.st_size}\x00{info.st_mtime_ns}"
    return cache_folder() / f"{hashlib.blake2b(key.encode(), digest_size=10).hexdigest()}.sqlite"


def build(path: Path, table: Path, ws: Workspace, report: Callable[[str], None]) -> None:
    """Read the index file once, streaming, into a new table written beside `table` and
    renamed onto it (another process building the same one meanwhile loses nothing)."""
    table.parent.mkdir(parents=True, exist_ok=True)
    partial = table.with_suffix(f".{os.getpid()}.{threading.get_ident()}.partial")
    partial.unlink(missing_ok=True)
    db = sqlite3.connect(partial)
    try:
        db.executescript("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;" + SCHEMA)
        # read through a descriptor opened beneath the outermost root, no link followed
        with os.fdopen(ws.open_file(path), "rb") as handle:
            written = os.fstat(handle.fileno()).st_mtime_ns
            if os.fstat(handle.fileno()).st_size == 0:
                raise Damaged("empty file")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
                problem = read_into(db, data, path.parent, written, ws, report)
        if problem is not None:
            raise Damaged(problem)
        db.executescript(INDEXES)
        db.commit()
        db.close()
        os.replace(partial, table)
    except BaseException:
        db.close()
        partial.unlink(missing_ok=True)
        raise


def read_into(
    db: sqlite3.Connection,
    data: mmap.mmap,
    root: Path,
    written: int,
    ws: Workspace,
    report: Callable[[str], None],
) -> str | None:
    """Fill the table from a mapped index file; the reason it is not SCIP, or None. The
    view is released before the map closes (a traceback would keep it alive)."""
    view = memoryview(data)
    try:
        fill(db, read_index(view), root, written, ws, report)
        return None
    except Damaged as exc:
        return str(exc)
    finally:
        view.release()


def fill(
    db: sqlite3.Connection,
    entries: Iterator[str | Document],
    root: Path,
    written: int,
    ws: Workspace,
    report: Callable[[str], None],
) -> None:
    symbols: dict[str, int] = {}
    tool, count, started = "", 0, time.monotonic()

    def symbol_id(name: str) -> int:
        if name not in symbols:
            symbols[name] = len(symbols) + 1
            db.execute("INSERT INTO symbols(id, name) VALUES (?, ?)", (symbols[name], name))
        return symbols[name]

    for entry in entries:
        if isinstance(entry, str):
            tool = entry
            continue
        count += 1
        document = count
        version, lines, stat = file_version(ws, root / entry.path, written)
        db.execute(
            "INSERT OR IGNORE INTO documents VALUES (?, ?, ?, ?, ?, ?)",
            (document, entry.path, version, entry.utf8_positions, lines, stat),
        )
        db.executemany(
            "INSERT INTO occurrences VALUES (?, ?, ?, ?, ?, ?, ?)",
            [(symbol_id(s), document, *r, roles) for r, s, roles in entry.occurrences],
        )
        for info in entry.symbols:
            if not info.name:
                continue
            sid = symbol_id(info.name)
            if info.documentation:
                db.execute(
                    "UPDATE symbols SET documentation=? WHERE id=?", ("\x00".join(info.documentation), sid)
                )
            db.executemany(
                "INSERT INTO implements VALUES (?, ?)", [(sid, symbol_id(t)) for t in info.implements]
            )
        if count % 500 == 0:
            report(f"loading {root.name}/…scip: {count} documents ({time.monotonic() - started:.0f} s)")
    db.execute("INSERT INTO meta VALUES ('tool', ?)", (tool,))


def file_version(ws: Workspace, path: Path, written: int) -> tuple[str, int, str]:
    """The content version of a document's file as it is on disk at load, its line count
    when it is all ASCII (-1 when not: its positions need its text), and the stat it was
    read under ("" when too young to vouch for it); no version when it was written after
    the index (the index cannot have seen it) or is not a workspace file."""
    read_at = time.time_ns()
    try:
        fd = ws.open_file(ws.resolve(path))  # beneath the outermost root, no link followed
        try:
            info = os.fstat(fd)
            if info.st_mtime_ns > written:
                return "", -1, ""
            data = read_all(fd, MAX_TEXT_BYTES)
        finally:
            os.close(fd)
        if len(data) > MAX_TEXT_BYTES:
            return "", -1, ""
    except (Refusal, OSError, ValueError):
        return "", -1, ""
    stat = "" if is_racy(info, read_at) else stat_key(file_identity(info))
    if not data.isascii() or b"\x00" in data[:8192]:  # the workspace shows no binary file
        return content_version(data), -1, stat
    return content_version(data), data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1), stat


def discover(ws: Workspace, named: list[str]) -> list[Path]:
    """Index files in the workspace (a bounded walk, hidden and dependency folders skipped)
    and those named in settings, resolved inside the roots."""
    found: list[Path] = []
    for name in named:
        try:
            found.append(ws.resolve(name))
        except Refusal:
            continue
    for root in ws.roots:
        if ws.confining_root(root) != root:  # walked from the root holding it (not by its own path)
            continue
        for seen, (folder, subfolders, files) in enumerate(os.walk(root), 1):  # no link followed
            subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in SKIP_FOLDERS]
            found += [
                Path(folder) / f for f in files if is_index_name(f) and not os.path.islink(Path(folder) / f)
            ]
            if seen >= MOST_FOLDERS:
                break
    return sorted(set(found))


def is_index_name(name: str) -> bool:
    return name == "index.scip" or (name.startswith("index.") and name.endswith(".scip"))


class Store:
    """Every index file known, loaded on first use; refusals remembered per file version."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.loaded: dict[tuple[Path, int, int], Index | str] = {}
        self.found: dict[tuple, tuple[float, list[Path]]] = {}
        self.walking: set[tuple] = set()  # keys whose discovery runs in the background

    def indexes(self, ws: Workspace, named: list[str]) -> list[Path]:
        """The index files of the workspace: discovered on the first ask; once that is older
        than REDISCOVER, the last discovery is answered while a new one walks in the
        background (a monorepo's walk takes half a second, which a question waited for)."""
        key = (tuple(ws.roots), tuple(named))
        with self.lock:
            when, paths = self.found.get(key, (None, []))
            again = when is not None and time.monotonic() - when > REDISCOVER and key not in self.walking
            if again:
                self.walking.add(key)
        if when is None:
            paths = self.discovered(key, ws, named)
        elif again:
            threading.Thread(target=self.discovered, args=(key, ws, named), daemon=True).start()
        return paths

    def discovered(self, key: tuple, ws: Workspace, named: list[str]) -> list[Path]:
        try:
            paths = discover(ws, named)
            with self.lock:
                self.found[key] = (time.monotonic(), paths)
            return paths
        finally:
            with self.lock:
                self.walking.discard(key)

    def index(self, path: Path, ws: Workspace, report: Callable[[str], None]) -> Index:
        """The loaded index of a file, building its table once; Refused with the reason."""
        try:
            info = os.stat(path)
        except OSError as exc:
            raise Refused(f"{ws.display(path)}: {exc.strerror}") from None
        key = (path, info.st_size, info.st_mtime_ns)
        with self.lock:
            state = self.loaded.get(key)
            if state is None:
                state = self.open(path, info, ws, report)
                self.loaded[key] = state
        if isinstance(state, str):
            raise Refused(state)
        return state

    def open(
        self, path: Path, info: os.stat_result, ws: Workspace, report: Callable[[str], None]
    ) -> Index | str:
        table = table_for(path, info)
        try:
            if not table.exists():
                report(f"loading the SCIP index {ws.display(path)}")
                build(path, table, ws, report)
            return Index(path, table)
        except Damaged as exc:
            return f"{ws.display(path)} is not a readable SCIP index ({exc}): refused"
        except (OSError, sqlite3.Error, OverflowError, IndexError) as exc:
            return f"{ws.display(path)} could not be loaded ({exc}): refused"
        except Refusal as exc:  # not a regular file beneath the roots when opened (a link swapped in)
            return f"{exc.message} (a SCIP index): refused"

    def covering(
        self, ws: Workspace, named: list[str], path: Path, report: Callable[[str], None]
    ) -> tuple[Index, int, str] | None:
        """The index holding a document for `path` (the deepest folder first), with the
        document's id, version and position encoding; Refused when the one that would is
        damaged and no other holds it."""
        refusal = None
        candidates = [p for p in self.indexes(ws, named) if path.is_relative_to(p.parent)]
        for index_path in sorted(candidates, key=lambda p: -len(p.parts)):
            try:
                index = self.index(index_path, ws, report)
            except Refused as exc:
                refusal = refusal or str(exc)
                continue
            document = index.document(path.relative_to(index.root).as_posix())
            if document is not None:
                return (index, *document)
        if refusal is not None:
            raise Refused(refusal)
        return None

    def every(self, ws: Workspace, named: list[str], report: Callable[[str], None]) -> list[Index]:
        """Every readable index of the workspace (a global symbol may be used in any)."""
        found = []
        for path in self.indexes(ws, named):
            try:
                found.append(self.index(path, ws, report))
            except Refused:
                continue
        return found


STORE = Store()


def lookup(
    ws: Workspace, named: list[str], method: str, path: Path, line: int, text: str, column: int,
    report: Callable[[str], None],
) -> Hits | None:  # fmt: skip
    """The index's answer to `method` (references, definition, implementation) at a 0-based
    line and character index `column` of `text` (that line); None when no index holds the
    document or no occurrence is there; Stale or Refused with the reason."""
    try:
        return answer(ws, named, method, path, line, text, column, report)
    except sqlite3.Error as exc:  # the table went away or was damaged under us
        raise Refused(f"the SCIP table could not be read ({exc})") from None


def answer(
    ws: Workspace, named: list[str], method: str, path: Path, line: int, text: str, column: int,
    report: Callable[[str], None],
) -> Hits | None:  # fmt: skip
    covered = STORE.covering(ws, named, path, report)
    if covered is None:
        return None
    index, document, version = covered
    if not version or index.current(ws, path)[1] != version:
        raise Stale(
            f"{ws.display(index.path)} is older than {ws.display(path)} (changed since it was indexed)"
        )
    prefix = text[:column]
    utf8 = prefix.isascii() or index.utf8(document)
    units = len(prefix.encode("utf-8" if utf8 else "utf-16-le", "surrogatepass")) // (1 if utf8 else 2)
    found = index.symbols_at(document, line, units)
    if not found:
        return None
    hits = Hits(index.tool, ws.display(index.path), documentation=index.documentation(found[0][0]))
    for symbol, name in found:
        local = name.startswith("local ")
        for other in [index] if local else STORE.every(ws, named, report):
            sid = symbol if other is index else other.symbol(name)
            if sid is None:
                continue
            targets = other.implementations(sid) if method == "implementation" else [sid]
            for target in targets:
                rows = other.occurrences(target, document if local else None, method != "references")
                add_rows(ws, hits, other, rows)
    return hits


def add_rows(ws: Workspace, hits: Hits, index: Index, rows: list[tuple]) -> None:
    """Occurrences kept where the file is still what was indexed (each file checked once);
    the others' files named."""
    verdicts: dict[str, Path | bool] = {}  # where a fresh file resolves; True outside; False stale
    folders: dict = {}
    for relative, version, utf8, lines, stat, line, col, end_line, end_col in rows:
        if relative not in verdicts:
            verdicts[relative] = verdict(
                ws, hits, index, index.file(relative), (stat or "", version), folders
            )
        file = verdicts[relative]
        if isinstance(file, bool):
            hits.outside += file  # not a workspace file (or gone): counted, never shown
        elif lines < 0:
            hits.others.append((file, (line, col, end_line, end_col), bool(utf8)))
        elif line < lines and end_line >= line:
            hits.exact.append((file, line + 1, col + 1, end_line + 1, end_col + 1))
        else:
            hits.invalid += 1


def verdict(
    ws: Workspace, hits: Hits, index: Index, file: Path, loaded: tuple[str, str], folders: dict
) -> Path | bool:
    """Where a document's file resolves if it is what was indexed; True when it is not a
    workspace file; False (and named in the stale files) when it changed."""
    version = loaded[1]
    resolved, now = index.current(ws, file, loaded, folders)
    if resolved is None:
        return True
    if not version or now != version:
        if file not in hits.stale:
            hits.stale.append(file)
        return False
    return resolved


def describe(ws: Workspace, named: list[str], report: Callable[[str], None]) -> list[str]:
    """For `lsp-agent doctor`: each index found or named in settings, with its documents,
    indexer and age, and how many of its documents changed since it was built (those are
    answered by the other sources); or why it is not read. Loading one builds its table."""
    lines = []
    for name in named:
        try:
            ws.resolve(name)
        except Refusal as exc:
            lines.append(f"{name}: not read (scip_indexes): {exc.message}")
    for path in discover(ws, named):
        try:
            index = STORE.index(path, ws, report)
        except Refused as exc:
            lines.append(str(exc))
            continue
        paths = [row[0] for row in index.query("SELECT path FROM documents ORDER BY id")]
        versions = dict(index.query("SELECT path, version FROM documents"))
        changed = sum(
            1 for p in paths if index.current(ws, index.root / p)[1] != versions[p] or not versions[p]
        )
        hours = max(0.0, time.time() - os.stat(path).st_mtime) / 3600
        age = (
            f"{hours * 60:.0f} min"
            if hours < 1
            else f"{hours:.0f} h"
            if hours < 48
            else f"{hours / 24:.0f} days"
        )
        fresh = (
            "all as indexed" if not changed else f"{changed} changed since (answered by the other sources)"
        )
        lines.append(f"{ws.display(path)}: {index.tool}, {len(paths)} documents, built {age} ago, {fresh}")
    return lines
