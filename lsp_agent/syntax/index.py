"""The workspace symbol index behind workspace/symbol, find_symbol and read symbol=: every
definition of every source file, built in the background, kept current as documents and
files change, and persisted so that a restart parses only the files that changed.

Records are compact: per file, its symbols' names and containers as two newline-joined
strings, their kinds as bytes and their ranges as one array of integers; a query scans the
name strings with a regular expression (in C) and makes objects only for its answers.
Positions are converted when a file is indexed, in the position encoding the client
negotiated, so a query only filters and sorts.

A cold build parses in worker processes (one per core) when there are many files: parsing
holds the GIL, and a second thread would only slow the server's own requests. They start as
soon as the walk has listed enough files, and parse while it lists the rest; each reads a file
once and makes its record straight from the query's definitions, without outline objects.
"""

from __future__ import annotations

import gc
import heapq
import os
import re
import stat
import threading
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from itertools import accumulate
from pathlib import Path

from ..errors import Refusal, logger
from ..search.walk import walk_order as walk_order_in
from ..workspace import BINARY_SNIFF_BYTES, RACY_WINDOW_NS, Text, Workspace, is_racy, open_beneath, read_all
from .files import source_files
from .languages import language_for
from .outline import (
    KINDS,
    Symbol,
    definitions,
    find_in_file,
    fresh_definitions,
    last_segment,
    name_path_matcher,
    nested,
    outline,
    walk,
)
from .parsing import MAX_PARSE_BYTES, PARSES, Parsed, encode
from .records import Entry, FileRecord, Range
from .uses import file_uses, generated, has_table, pack, pack_table

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

    from .store import SavedRecords


# Larger files (bundles, generated code) are left out of the background index: a 9 MB
# bundle takes over a second and a quarter of a GB to parse. They still get outlines on demand.
INDEX_MAX_BYTES = 2 * 1024 * 1024
# Fewer files than this are parsed in this process: starting worker processes costs more.
PROCESS_MIN_FILES = 300
# Characters of names per block of the names' scan: a regular expression scans a block in
# about a millisecond, well within the interval at which Python switches threads.
BLOCK_CHARS = 32 * 1024
CHUNK = 32  # files per task sent to a worker process: a cancelled build waits for one
# Paths and records live as long as the index: every this many files, those made so far are
# moved out of the cyclic garbage collector's view (gc.freeze). Otherwise each full
# collection walks them all (100,000 objects on a monorepo): 50-100 ms holding the GIL,
# several times during a build, while the user types. They hold no cycles: plain reference
# counting frees them.
FREEZE_EVERY = 256
TABLES_LOOKED_AT = 2_000  # records looked in for a use table between two steps aside

KIND_CODES = {kind: code for code, kind in enumerate(KINDS)}


def column(line: bytes, byte_column: int, encoding: str) -> int:
    """A tree-sitter column (UTF-8 bytes into `line`) in `encoding` ("utf-8", "utf-16" or
    "utf-32", as LSP names them)."""
    if encoding == "utf-8" or byte_column == 0 or line[:byte_column].isascii():
        return byte_column
    prefix = line[:byte_column].decode("utf-8", "replace")
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix.encode("utf-16-le", "surrogatepass")) // 2


NOT_ASCII = re.compile(r"[^\x00-\x7f]")
ASCII_CHUNK = 4096  # characters checked at once by str.isascii before a search looks closer


def non_ascii_lines(content: str, chunk: int = ASCII_CHUNK) -> dict[int, str]:
    """The lines of `content` (split at "\n") that are not ASCII, by 0-based row: found in
    chunks that str.isascii passes over, so a large text with a few of them needs no line
    index (splitting a 9,000-line buffer into lines took longer than outlining it after an
    edit; a search of it all, a third of that)."""
    found: dict[int, str] = {}
    row = counted = at = 0  # the row at offset `counted`; nothing before `at` is left to find
    for lo in range(0, len(content), chunk):
        hi = lo + chunk
        at = max(at, lo)
        if at >= hi or content[at:hi].isascii():
            continue
        while (match := NOT_ASCII.search(content, at, hi)) is not None:
            start = match.start()
            row, counted = row + content.count("\n", counted, start), start
            end = content.find("\n", start)
            at = len(content) if end < 0 else end
            found[row] = content[content.rfind("\n", 0, start) + 1 : at]
    return found


class Columns:
    """Converts the points of one text to `encoding`, each line encoded once (and only a
    line that is not ASCII: every encoding counts ASCII alike)."""

    def __init__(self, text: Text, encoding: str):
        self.text = text
        self.encoding = "utf-8" if text.content.isascii() else encoding
        self.lines: dict[int, bytes | None] = {}  # None: an ASCII line
        self.wide: dict[int, str] | None = None  # the lines that are not ASCII, once scanned
        self.scanned = False

    def convert(self, points: tuple[int, int, int, int]) -> Range:
        if self.encoding == "utf-8":
            return points
        row, col, end_row, end_col = points
        return row, self.column(row, col), end_row, self.column(end_row, end_col)

    def column(self, row: int, byte_column: int) -> int:
        if byte_column == 0:
            return byte_column
        try:
            encoded = self.lines[row]
        except KeyError:
            encoded = self.lines[row] = self._non_ascii(row)
        return byte_column if encoded is None else column(encoded, byte_column, self.encoding)

    def _non_ascii(self, row: int) -> bytes | None:
        """The UTF-8 bytes of line `row`; None when its columns need no conversion (an
        ASCII line, or a row past the end)."""
        if not self.scanned:
            self.scanned = True
            if "\r" not in self.text.content:  # (a Text's lines drop the "\r" of CRLF)
                self.wide = non_ascii_lines(self.text.content)
        if self.wide is not None:
            wide = self.wide.get(row)
            return None if wide is None else wide.encode("utf-8", "surrogatepass")
        if row >= self.text.line_count or (line := self.text.line(row + 1)).isascii():
            return None
        return line.encode("utf-8", "surrogatepass")


# One definition of a record in the making: kind, name, container, range and the range of
# its name (0-based rows and UTF-8 byte columns, as tree-sitter counts them).
Row = tuple[str, str, str, tuple[int, int, int, int], tuple[int, int, int, int]]


def make_record(text: Text, language: str, rows: Iterable[Row], encoding: str, size: int, mtime_ns: int, file_name: str = "", parsed: Parsed | None = None, table: bool = False) -> FileRecord:  # fmt: skip
    """The record of `text` (the file `file_name`, `parsed` its tree): its definitions,
    where their headers end and their doc lines, and the names it uses; with `table`, its
    use table too."""
    from .references import header_and_doc, table_stamp, use_table  # a one-shot reading records needs not

    names, containers, kinds, ranges, heads = [], [], bytearray(), array("I"), array("i")
    docs: list[str] = []
    defined: dict[str, set] = {}  # where each name's definitions start, as tree-sitter points
    owners: dict[str, set[str]] = {}  # the classes defining each name (their last segment)
    convert = Columns(text, encoding).convert
    for kind, name, container, points, selection in rows:
        names.append(name)
        containers.append(container)
        kinds.append(KIND_CODES[kind])
        ranges.extend(convert(points))
        ranges.extend(convert(selection))
        defined.setdefault(name, set()).add(selection[:2])
        if container:
            owners.setdefault(name, set()).add(container.rsplit("/", 1)[-1])
        if parsed is not None:
            head, doc = header_and_doc(parsed, _Spot(points, selection)) or (NO_HEAD, None)
            heads.extend(head)
            docs.append(doc or "")
    uses = pack(*file_uses(text.content))
    tabled = None
    if table and parsed is not None and (found := use_table(parsed, text, defined, owners)) is not None:
        tabled = pack_table(*found, table_stamp(language))
    bundle = generated(file_name, text.content, text.line_count)
    return FileRecord(size, mtime_ns, text.version, language, "\n".join(names), "\n".join(containers), bytes(kinds), ranges, uses, bundle, heads, "\n".join(docs), use_table=tabled)  # fmt: skip


NO_HEAD = (-1, -1)  # a definition whose node the tree lacks: shown by its first line


@dataclass(frozen=True, slots=True)
class _Spot:
    """A definition's range and its name's (UTF-8 columns), as header_end reads a symbol."""

    range: tuple[int, int, int, int]
    selection: tuple[int, int, int, int]


def outline_rows(path: Path, text: Text) -> Iterator[Row]:
    """The rows of the file's cached outline (shared with documentSymbol), parents first."""
    for s in walk(outline(path, text)):
        container = s.name_path[: -len(s.name) - 1] if s.name_path.endswith("/" + s.name) else ""
        yield s.kind, s.name, container, s.range, s.selection


def fresh_rows(language: str, data: bytes, parsed: Parsed | None = None) -> Iterator[Row]:
    """The rows of the outline of `data` parsed afresh (or `parsed`, its tree), without the
    caches nor Symbol objects (for files read once), parents first."""
    found = fresh_definitions(language, data) if parsed is None else definitions(parsed)
    for d, kind, prefix, _ in nested(found):
        yield kind, d.name, prefix[:-1], (*d.start_point, *d.end_point), d.selection


def fresh_parse(language: str, data: bytes) -> Parsed | None:
    """The tree of `data` parsed afresh, without the caches; None for a text too large."""
    if len(data) > MAX_PARSE_BYTES:
        return None
    return Parsed(language, "", data, PARSES.parser(language).parse(data))


def rank(query: str, name: str) -> int | None:
    """How well `name` answers a workspace/symbol query (lower is better; None: not at all).
    Case-insensitive: exact, prefix, substring, then the query's letters in order."""
    if not query:
        return 3
    q, n = query.lower(), name.lower()
    if n == q:
        return 0
    if n.startswith(q):
        return 1
    if q in n:
        return 2
    position = 0
    for ch in q:
        position = n.find(ch, position) + 1
        if position == 0:
            return None
    return 3


class NameBlock:
    """The names of a few files in one string (each file's lines, one name a line), so that
    a regular expression scans them in one call, and where each file's lines start. The
    string starts with a newline, so that a pattern can find a line's start as the newline
    before it: the engine looks for a pattern's first characters in a fast loop, but tries
    "^" at every character. A lowercase copy serves case-insensitive scans: a literal is
    found much faster in it than with re.IGNORECASE, which also folds case otherwise than
    str.lower does (İ lowercases to two characters, i and a combining dot)."""

    def __init__(self, files: list[tuple[Path, FileRecord]]):
        self.files = files
        self.text = "\n" + "\n".join(record.names for _, record in files)
        self.starts = list(accumulate((len(record.names) + 1 for _, record in files), initial=1))
        self.lowered = self.text.lower()
        # Only İ lowercases longer: then the copy's lines start elsewhere, and names are
        # taken from the records' lines
        self.aligned = len(self.lowered) == len(self.text)
        lengths = (len(record.names.lower()) + 1 for _, record in files)
        self.lowered_starts = self.starts if self.aligned else list(accumulate(lengths, initial=1))

    def lines(
        self, pattern: re.Pattern[str], *, ignore_case: bool
    ) -> Iterator[tuple[Path, FileRecord, int, str]]:
        """(path, record, line in that record, the name) of each line where `pattern` matches
        (in the lowercase copy when ignore_case)."""
        searched, starts = (self.lowered, self.lowered_starts) if ignore_case else (self.text, self.starts)
        aligned = self.aligned or not ignore_case
        names: list[str] = []  # the current record's, when not aligned
        n, line, position, last = -1, 0, 0, 0  # last: the start of the line found last (0: none)
        for match in pattern.finditer(searched):
            at = match.start()
            if match.end() > at:  # a match that starts with a newline is in the line after it
                at += 1
            start = searched.rfind("\n", 0, at) + 1
            if start == last:
                continue
            last = start
            if start >= starts[n + 1]:  # a later file
                n = bisect_right(starts, start) - 1
                line, position = 0, starts[n]
                if not aligned:
                    names = self.files[n][1].names.split("\n")
            line += searched.count("\n", position, start)
            position = start
            if aligned:
                end = searched.find("\n", start)
                name = self.text[start : end if end >= 0 else len(searched)]
            else:
                name = names[line]
            yield *self.files[n], line, name


class Names:
    """Every indexed name, in blocks of about BLOCK_CHARS characters: a scan is one
    regular expression call per block, so it never holds the GIL for long (a read sent
    behind a broad workspace/symbol waits at most a block's scan), and a changed file
    makes only its block again, not a string of every name (8 MB on a monorepo).

    Not thread-safe: the index calls it under its lock; the blocks a scan gets are never
    changed after, only replaced."""

    def __init__(self) -> None:
        self.members: list[dict[Path, FileRecord]] = []  # the records of each block
        self.sizes: list[int] = []  # characters of each block's names
        self.block_of: dict[Path, int] = {}
        self.made: list[NameBlock | None] = []  # None: to be made again

    def put(self, path: Path, record: FileRecord | None) -> None:
        """Add, replace (record) or drop (None) the names of `path`."""
        if (i := self.block_of.pop(path, None)) is not None:
            self.sizes[i] -= len(self.members[i].pop(path).names) + 1
            self.made[i] = None
        if record is None or not record.kinds:
            return
        if not self.members or self.sizes[-1] >= BLOCK_CHARS:
            self.members.append({})
            self.sizes.append(0)
            self.made.append(None)
        i = self.block_of[path] = len(self.members) - 1
        self.members[i][path] = record
        self.sizes[i] += len(record.names) + 1
        self.made[i] = None

    def blocks(self) -> list[NameBlock]:
        """Every block, made again where names changed (empty ones left out)."""
        for i, block in enumerate(self.made):
            if block is None:
                self.made[i] = NameBlock(list(self.members[i].items()))
        return [block for block in self.made if block is not None and block.files]


def matching_lines(
    blocks: list[NameBlock], pattern: str, *, ignore_case: bool
) -> Iterator[tuple[Path, FileRecord, int, str]]:
    """NameBlock.lines of every block, one after the other (`pattern` matches no newline
    but the one it starts with)."""
    compiled = re.compile(pattern, re.MULTILINE)
    for block in blocks:
        yield from block.lines(compiled, ignore_case=ignore_case)


# The characters of names, the most frequent first (in Python and JavaScript projects)
FREQUENT = "et_sairnoldcmupgfhbywvkxqzj0123456789"


def rank_patterns(query: str) -> list[tuple[int, str]]:
    """Each rank a name can have for `query`, and a pattern over lowercase names that
    matches from the newline before each line holding a name of that rank (or a better
    one), or within it."""
    if "\n" in query:  # no name holds one (outlines collapse whitespace)
        return []
    if not query:  # every name has the last rank
        return [(3, "\\n")]
    lowered = query.lower()
    q = re.escape(lowered)
    # q at a line's start: the scan looks for a pattern's first characters in a fast loop, and
    # newlines are more frequent than a query's first letters, unless it is one letter
    at_start = f"\\n{q}" if len(lowered) == 1 else f"{q}(?<=\\n{q})"
    # letters in order: each gap is "not the next letter" (no backtracking); first a check
    # that the line holds the rarest of them ("[^\n]*x" runs several times faster)
    rarest = max(lowered, key=lambda ch: FREQUENT.find(ch) if ch in FREQUENT else len(FREQUENT))
    letters = "".join(f"[^{re.escape(ch)}\\n]*{re.escape(ch)}" for ch in lowered)
    return [(0, f"{at_start}$"), (1, at_start), (2, q), (3, f"\\n(?=[^\\n]*{re.escape(rarest)}){letters}")]


SIGMAS = str.maketrans({"σ": "[σς]", "ς": "[σς]"})


def walk_order(roots: list[Path], path: Path) -> tuple:
    """The place of `path` in a walk of the roots, one after the other (within a root: in
    each folder its files by name, then its subfolders)."""
    for n, root in enumerate(roots):
        if path.is_relative_to(root):
            return (n, walk_order_in(path, root))
    return (len(roots), str(path))


class SymbolIndex:
    def __init__(self, workspace: Workspace, encoding: str = "utf-16", cache: Path | None = None):
        self.workspace = workspace
        self.encoding = encoding
        self.cache = cache  # the folder the index persists to (None: not persisted)
        self.files: dict[Path, FileRecord] = {}
        self.ready = threading.Event()
        self._lock = threading.Lock()
        self._loaded = False
        self._saved: SavedRecords | None = None  # saved records not asked for yet (load lazily)
        self._saved_from: Callable[[], SavedRecords | None] | None = None  # … their table, read on first ask
        self._names = Names()
        self._builds = 0  # builds started: only the latest may drop or put records

    # --- building -------------------------------------------------------------------------

    def build(
        self,
        report: Callable[[str, int | None], None] | None = None,
        cancelled: Callable[[], bool] = lambda: False,
        step_aside: Callable[[], None] = lambda: None,
    ) -> int:
        """Index every source file under the roots: files unchanged since the index was saved
        keep their records, the others are parsed; by worker processes when there are many,
        from the moment the walk has listed enough of them. Returns the number of files.
        Between two files it calls `step_aside` (the server's lanes let its light requests
        run first).

        A build started later (the workspace folders changed) supersedes this one: it stops,
        and from then on neither drops nor puts a record. Both run in worker threads, and
        this one walks the old roots: it would drop the records of an added folder, or put
        back those of a removed one."""
        with self._lock:
            self._builds += 1
            build = self._builds
        self.ready.clear()  # tools asking meanwhile look in the files: the index lacks added folders
        stopped, between_files = self._checkpoints(build, cancelled, step_aside)

        if not self._loaded and self.cache is not None:
            self._loaded = True
            self.load()
            gc.freeze()
        workers = Workers(self.encoding, self.workspace.roots)
        try:
            paths, opened, on_disk = self._walk(workers, stopped, between_files)
            wanted = set(paths)
            with self._lock:  # files no longer under a root (a folder was removed) are dropped
                if stopped():  # the walk may have stopped part way
                    return len(paths)
                for path in [p for p in self.files if p not in wanted]:
                    del self.files[path]
                    self._names.put(path, None)
            reporter = Reporter(report, len(paths), len(paths) - len(opened) - len(on_disk))
            self._parse(workers, opened, on_disk, build, reporter, stopped, between_files)
        finally:
            workers.close()
        reporter.done()
        gc.freeze()
        if not stopped():
            self.ready.set()
            if self.cache is not None and (opened or on_disk):
                self.save()
        return len(paths)

    def _checkpoints(
        self, build: int, cancelled: Callable[[], bool], step_aside: Callable[[], None]
    ) -> tuple[Callable[[], bool], Callable[[int], None]]:
        """(whether build `build` is to stop: cancelled, or superseded by a later build; what
        it does between two files: lets light requests run first, and now and then freezes
        what it keeps out of the collector's reach)."""

        def stopped() -> bool:
            return cancelled() or self._builds != build

        def between_files(n: int) -> None:
            step_aside()
            if n % FREEZE_EVERY == 0:
                gc.freeze()

        return stopped, between_files

    def make_tables(
        self,
        cancelled: Callable[[], bool] = lambda: False,
        step_aside: Callable[[], None] = lambda: None,
        report: Callable[[str, int | None], None] | None = None,
    ) -> int:
        """Use tables (references.use_table) for the records on disk made without one, after
        a build (a table costs about three parses of its file: the index is ready first), by
        worker processes when there are many: each file read and parsed again, its record
        given the table where it is still the same text; then saved. A build started
        meanwhile stops it. Returns how many were made."""
        from .references import table_stamp

        with self._lock:  # each record looked in outside the lock: 26,000 take seconds
            build = self._builds
            records = list(self.files.items())
        stopped, between_files = self._checkpoints(build, cancelled, step_aside)
        stamps = {language: table_stamp(language) for language in {r.language for _, r in records}}
        wanted: list[Path] = []
        # in pieces, stepping aside between them: after a warm start this runs as the first
        # calls come, and a monorepo's 26,000 records held the interpreter for 15 ms
        for start in range(0, len(records), TABLES_LOOKED_AT):
            step_aside()
            wanted += [
                p
                for p, r in records[start : start + TABLES_LOOKED_AT]
                if r.size >= 0 and not has_table(r.use_table, stamps[r.language])
            ]
        if report is not None:
            report(f"use tables for {len(wanted):,} files", None)

        made = self._tables(wanted, build, stopped, between_files)
        if made and self.cache is not None and not stopped():
            self.save()
        return made

    def _tables(self, wanted: list[Path], build: int, stopped: Callable[[], bool], between_files: Callable[[int], None]) -> int:  # fmt: skip
        made = 0
        if len(wanted) >= PROCESS_MIN_FILES and MANY_CORES:
            workers = Workers(self.encoding, self.workspace.roots, table=True)
            try:
                workers.send(wanted, last=True)
                for n, (path, record) in enumerate(workers.records(stopped), 1):
                    made += self._put_table(path, record, build)
                    between_files(n)
            finally:
                workers.close()
            return made
        roots = [str(r) for r in self.workspace.roots]
        for n, path in enumerate(wanted):
            between_files(n)  # (first too: a call that came meanwhile goes before the first parse)
            if stopped():
                break
            language = language_for(path)
            record = read_record(str(path), language, self.encoding, roots, table=True) if language else None
            made += self._put_table(path, record, build)
        return made

    def _put_table(self, path: Path, record: FileRecord | None, build: int) -> bool:
        """Give the record of `path` the use table of `record`, made from the same text;
        whether it holds one (a language without a lexicon makes none: not counted, or every
        start would save the index again for it)."""
        from .references import table_stamp

        with self._lock:
            kept = self.files.get(path)
            if record is None or kept is None or build != self._builds or record.size < 0:
                return False
            if (kept.version, kept.size, kept.mtime_ns) != (record.version, record.size, record.mtime_ns):
                return False
            kept.use_table = record.use_table
            return has_table(record.use_table, table_stamp(record.language))

    def _walk(
        self, workers: Workers, stopped: Callable[[], bool], between_files: Callable[[int], None]
    ) -> tuple[list[Path], list[Path], list[Path]]:
        """(every source file under the roots, the stale ones open in the editor, the stale
        ones on disk): the workers start on those on disk while the walk goes on."""
        overlay = self.workspace.open_documents()
        paths: list[Path] = []
        opened: list[Path] = []  # to parse from the editor's buffer
        on_disk: list[Path] = []
        for root in self.workspace.roots:
            for path in source_files(self.workspace, root, in_order=False):
                paths.append(path)
                if not self.is_current(path):
                    (opened if path in overlay else on_disk).append(path)
                    if len(on_disk) >= PROCESS_MIN_FILES and MANY_CORES:
                        workers.send(on_disk)
                between_files(len(paths))
                if stopped():
                    break
        return paths, opened, on_disk

    def _parse(
        self,
        workers: Workers,
        opened: list[Path],
        on_disk: list[Path],
        build: int,
        reporter: Reporter,
        stopped: Callable[[], bool],
        between_files: Callable[[int], None],
    ) -> None:
        """Index the stale files: open ones from their buffers, the rest by the workers
        (when started) or here."""
        for path in opened:
            self.update(path, build)
            reporter.step()
        if workers.started:
            workers.send(on_disk, last=True)
            for n, (path, record) in enumerate(workers.records(stopped), 1):
                if self.workspace.open_text(path) is None:  # opened since: its buffer is indexed
                    self._put(path, record, build)
                reporter.step()
                between_files(n)
        else:
            for n, path in enumerate(on_disk, 1):
                if stopped():
                    break
                self.update(path, build)
                reporter.step()
                between_files(n)

    def update(self, path: Path, build: int | None = None) -> None:
        """(Re-)index one file from the workspace's current text (the editor's buffer when
        open); forget it when it is gone, unreadable or not source."""
        language = language_for(path)
        if language is None or self.workspace.root_of(path) is None:
            return
        self._put(path, index_file(self.workspace, path, language, self.encoding), build)

    def _put(self, path: Path, record: FileRecord | None, build: int | None = None) -> None:
        """Put (None: drop) the record of `path`; for a build, only while it is the latest.
        A record of the open buffer's text is not replaced by one of another text: re-indexing
        runs in heavy threads, and one of an older buffer (a slow parse) could end after the
        next one's. (Any other record is replaced: a stale one is better than none, which
        find_symbol would not see to make again.)"""
        with self._lock:
            if build is not None and build != self._builds:
                return
            if record is not None and (buffer := self.workspace.open_text(path)) is not None:
                kept = self.files.get(path)
                if kept is not None and kept.version == buffer.version != record.version:
                    return
            if record is None:
                self.files.pop(path, None)
            else:
                self.files[path] = record
            self._names.put(path, record)

    def remove(self, path: Path) -> None:
        self._put(path, None)

    def put(self, path: Path, record: FileRecord | None) -> None:
        """The record of `path` made elsewhere from its current text (a worker process's,
        lanes.py), kept as update keeps its own."""
        self._put(path, record)

    def is_current(self, path: Path) -> bool:
        """Whether the record of `path` was made from its current text."""
        return self.current(path) is not None

    def current(self, path: Path, *, settled: bool = False) -> FileRecord | None:
        """The record of `path` if it was made from its current text (the editor's buffer
        when open, else the file on disk, by size and mtime), else None. `settled`: only a
        file on disk whose timestamps are old enough to tell a change (workspace.is_racy), and
        whose ctime and inode are the record's, so that its record may stand for its text
        unread."""
        record = self._record(path)
        if record is None:
            return None
        if (open_text := self.workspace.open_text(path)) is not None:
            return record if record.version == open_text.version and not settled else None
        asked = time.time_ns()
        try:
            info = os.stat(path)
        except OSError:
            return None
        if settled and (
            is_racy(info, asked) or (info.st_ctime_ns, info.st_ino) != (record.ctime_ns, record.inode)
        ):
            return None
        return record if (info.st_size, info.st_mtime_ns) == (record.size, record.mtime_ns) else None

    # --- persistence ---------------------------------------------------------------------

    def load(self, *, lazily: bool = False) -> None:
        """The saved records; `lazily`: each made when first asked for (a one-shot command
        asks for a few of thousands), a build after it loading the others."""
        assert self.cache is not None
        from . import store  # here: pickle and the grammars' metadata are for loading and saving

        if lazily:  # the table too is read when a record is first asked for (an answer of counts asks none)
            self._saved_from = partial(store.load_lazily, self.cache, self.workspace.roots, self.encoding)
            return
        self._loaded, self._saved, self._saved_from = True, None, None
        records = store.load(self.cache, self.workspace.roots, self.encoding)
        with self._lock:
            for path, record in records.items():
                if path not in self.files:
                    self.files[path] = record
                    self._names.put(path, record)

    def save(self) -> None:
        assert self.cache is not None
        with self._lock:
            files = {p: r for p, r in self.files.items() if r.size >= 0}  # not editor buffers
        from . import store

        saved = store.save(self.cache, self.workspace.roots, self.encoding, files)
        with self._lock:  # the tables written are read from the file from now on: not held twice
            for path, (table, stored) in saved.items():  # (one that could not be read: None)
                if (record := self.files.get(path)) is not None and record.use_table is table:
                    record.use_table = stored

    # --- queries -------------------------------------------------------------------------

    def names(self) -> list[NameBlock]:
        """Every indexed name, in blocks; those where names changed are made again."""
        with self._lock:
            return self._names.blocks()

    def query(self, query: str, limit: int = 500) -> list[tuple[Path, Entry]]:
        """workspace/symbol: the best `limit` names for `query` (see rank). The names are
        scanned by regular expressions, one per rank: exact, prefix, substring, letters in
        order; a worse rank is not scanned once the better ones have `limit` names."""
        blocks = self.names()
        hits: list[tuple] = []
        for score, pattern in rank_patterns(query):
            for path, record, line, name in matching_lines(blocks, pattern, ignore_case=True):
                if rank(query, name) == score:  # not already found at a better rank
                    r = record.ranges
                    hits.append((score, len(name), str(path), (r[8 * line], r[8 * line + 1], r[8 * line + 2], r[8 * line + 3]), path, record, line))  # fmt: skip
            if len(hits) >= limit:
                break
        best = heapq.nsmallest(limit, hits, key=lambda h: h[:4])
        split: dict[int, tuple[list[str], list[str]]] = {}  # each record's lines, split once
        answer = []
        for _, _, _, _, path, record, line in best:
            if (lines := split.get(id(record))) is None:
                lines = split[id(record)] = record.names.split("\n"), record.containers.split("\n")
            answer.append((path, record.entry(line, *lines)))
        return answer

    def find(
        self,
        name_path: str,
        *,
        substring: bool = False,
        kinds: Iterable[str] | None = None,
        under: list[Path],
    ) -> list[tuple[Path, Entry]]:
        """find_symbol: the definitions `name_path` names in the files under the folders
        `under`, in the order of a walk of the workspace."""
        matches = name_path_matcher(name_path, substring=substring)
        last = last_segment(name_path)
        if "\n" in last:  # no name holds one
            return []
        # σ for ς too: str.lower makes Σ ς at a word's end, as in the last segment ("Σ" in
        # "A.Σ") but not alone
        pattern = re.escape(last.lower()).translate(SIGMAS) if substring else f"{re.escape(last)}$"
        wanted = set(kinds or ())
        candidates: dict[Path, tuple[FileRecord, list[int]]] = {}
        for path, record, line, _ in matching_lines(self.names(), pattern, ignore_case=substring):
            candidates.setdefault(path, (record, []))[1].append(line)
        found = []
        for path, (record, lines) in candidates.items():
            if not any(path.is_relative_to(u) for u in under):
                continue
            all_names, containers = record.names.split("\n"), record.containers.split("\n")
            for line in lines:
                entry = record.entry(line, all_names, containers)
                if matches(entry.name_path) and (not wanted or entry.kind in wanted):
                    found.append((path, entry))
        roots = self.workspace.roots
        found.sort(key=lambda hit: walk_order(roots, hit[0]))  # stable: outline order in a file
        return found

    def definitions(self, path: Path, text: Text) -> list[Entry] | None:
        """The indexed definitions of `path` if they were made from `text`, else None."""
        record = self.record_of(path, text)
        return None if record is None else record.entries()

    def record_of(self, path: Path, text: Text) -> FileRecord | None:
        """The record of `path` if it was made from `text`, else None."""
        record = self._record(path)
        return record if record is not None and record.version == text.version else None

    def _record(self, path: Path) -> FileRecord | None:
        """The record of `path`, taken from the saved ones on first ask when loaded lazily."""
        record = self.files.get(path)
        if record is None and self._saved_from is not None:
            with self._lock:
                if self._saved_from is not None:
                    self._saved, self._saved_from = self._saved_from(), None
        if record is None and self._saved is not None and (saved := self._saved.take(path)) is not None:
            with self._lock:
                if path not in self.files:
                    self.files[path] = saved
                    self._names.put(path, saved)
                record = self.files[path]
        return record


def index_file(workspace: Workspace, path: Path, language: str, encoding: str) -> FileRecord | None:
    """The record of one file from the workspace's current text (an editor's buffer when
    open) and its cached outline; None when it is gone, unreadable, binary or too large."""
    read_at = time.time_ns()  # before the stat: a write after it makes the record racy
    try:
        info = os.stat(path)
        text = workspace.text(path)
    except (OSError, Refusal):
        return None
    if text.size > INDEX_MAX_BYTES:
        return None
    size, mtime = trusted_stat(info, read_at, from_editor=text.from_editor)
    rows = outline_rows(path, text)  # the cached outline, and its cached tree
    parsed = PARSES.parse(path, text, language)
    return _recorded(path, text, language, rows, encoding, size, mtime, parsed, identity=identity(info, size))


def trusted_stat(info: os.stat_result, read_at: int, *, from_editor: bool = False) -> tuple[int, int]:
    """The (size, mtime_ns) that make a record current while they are the file's; (-1, 0),
    which no file's stat matches, for a record its stat cannot vouch for: one made from an
    editor's buffer, or from a file whose mtime is so recent (within the racy window, as
    Workspace.text judges texts) that a second write may leave the same size and mtime. Such
    a record is made again when next needed."""
    if from_editor or info.st_mtime_ns + RACY_WINDOW_NS > read_at:
        return -1, 0
    return info.st_size, info.st_mtime_ns


def read_record(
    path: str, language: str, encoding: str, roots: list[str], table: bool = False
) -> FileRecord | None:
    """The record of a file read from disk once (a worker's), parsed without the caches;
    None when it is gone, unreadable, binary or too large (as Workspace.text refuses it),
    or not beneath one of `roots` by a path without symlinks (see open_beneath)."""
    read_at = time.time_ns()
    # beneath the outermost root holding it (see Workspace.confining_root)
    root = min((r for r in roots if path.startswith(r.rstrip(os.sep) + os.sep)), key=len, default=None)
    if root is None:
        return None
    try:
        fd = open_beneath(Path(root), os.path.relpath(path, root))
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size > INDEX_MAX_BYTES:
                return None
            data = read_all(fd, INDEX_MAX_BYTES)
        finally:
            os.close(fd)
    except OSError:
        return None
    if len(data) > INDEX_MAX_BYTES or b"\0" in data[:BINARY_SNIFF_BYTES]:
        return None
    text = Text.from_bytes(data)
    utf8 = data if text.utf8 else encode(text)  # valid UTF-8: the same bytes
    parsed = fresh_parse(language, utf8)
    rows = fresh_rows(language, utf8, parsed) if parsed is not None else iter(())
    size, mtime = trusted_stat(info, read_at)
    return _recorded(path, text, language, rows, encoding, size, mtime, parsed, table, identity(info, size))


def identity(info: os.stat_result, size: int) -> tuple[int, int]:
    """The (ctime_ns, inode) a record keeps of its file; (0, 0) where its stat is not trusted."""
    return (info.st_ctime_ns, info.st_ino) if size >= 0 else (0, 0)


def _recorded(path: Path | str, text: Text, language: str, rows: Iterable[Row], encoding: str, size: int, mtime_ns: int, parsed: Parsed | None = None, table: bool = False, identity: tuple[int, int] = (0, 0)) -> FileRecord | None:  # fmt: skip
    """make_record, or None when the parser fails on the file (one bad file must not stop
    the index)."""
    try:
        record = make_record(
            text, language, rows, encoding, size, mtime_ns, os.path.basename(path), parsed, table
        )
    except Exception:
        logger(__name__).exception("symbol index: cannot outline %s", path)
        return None
    record.ctime_ns, record.inode = identity
    return record


class Reporter:
    """Progress of a build as `indexing n of N files` with its percentage: when the percent
    changes, at most once per `every` seconds (a few reports a second however fast the
    build), the first and the last always."""

    def __init__(
        self,
        report: Callable[[str, int | None], None] | None,
        total: int,
        done: int,
        *,
        every: float = 0.25,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.report, self.total, self.n, self.percent = report, total, done, -1
        self.every, self.clock, self.last = every, clock, -float("inf")
        if done:  # files kept from the saved index
            self.send()

    def send(self) -> None:
        self.percent = self.n * 100 // max(self.total, 1)
        self.last = self.clock()
        if self.report is not None:
            self.report(f"indexing {self.n:,} of {self.total:,} files", self.percent)

    def step(self) -> None:
        self.n += 1
        if self.n * 100 // max(self.total, 1) != self.percent and self.clock() - self.last >= self.every:
            self.send()

    def done(self) -> None:
        if self.total and self.percent != 100:
            self.send()


# --- worker processes ----------------------------------------------------------------------

MANY_CORES = (os.cpu_count() or 1) > 1


class Workers:
    """One worker process per core (at most 8), started when a build first hands them files,
    parsing them CHUNK at a time: parsing holds the GIL, threads would not run in parallel."""

    def __init__(self, encoding: str, roots: list[Path], table: bool = False):
        self.encoding = encoding
        self.table = table  # records with their use tables
        self.roots = [str(r) for r in roots]  # a worker opens files only beneath them
        self.pool: ProcessPoolExecutor | None = None
        self.tasks: list[Future] = []
        self.sent = 0  # how many of the paths handed in are in tasks

    @property
    def started(self) -> bool:
        return self.pool is not None

    def send(self, paths: list[Path], *, last: bool = False) -> None:
        """Give the workers the paths not sent yet (the list grows between calls), in whole
        chunks; the rest too when `last`."""
        if self.pool is None:
            import multiprocessing  # here: a command that only reads the index never starts workers
            from concurrent.futures import ProcessPoolExecutor

            context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
            workers = min(os.cpu_count() or 1, 8)
            start = _start_table_worker if self.table else _start_worker
            self.pool = ProcessPoolExecutor(workers, mp_context=context, initializer=start)
        while len(paths) - self.sent >= CHUNK or (last and self.sent < len(paths)):
            chunk = [str(p) for p in paths[self.sent : self.sent + CHUNK]]
            self.tasks.append(self.pool.submit(_index_files, chunk, self.encoding, self.roots, self.table))
            self.sent += len(chunk)

    def records(self, cancelled) -> Iterator[tuple[Path, FileRecord | None]]:
        """The records of the files sent, as the workers finish them, until `cancelled`."""
        from concurrent.futures import as_completed

        for task in as_completed(self.tasks):
            if cancelled():
                return
            for path, record in task.result():
                yield Path(path), record

    def close(self) -> None:
        """Stop the workers: the chunks not started are dropped, so a cancelled build (the
        server exits) waits for one chunk at most."""
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)


def _start_table_worker() -> None:
    # Use tables only make later answers faster: every call an agent waits for (overview and
    # references in the tools' worker, at 5) comes before them, not beside them.
    os.nice(19)
    _start_worker()


def _start_worker() -> None:
    os.nice(5)  # the server's own requests (a read, documentSymbol while typing) come first
    # A worker inherits the server's stdin and stdout, which are the LSP connection: it must
    # neither write to it nor keep it open after the server exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)


def _index_files(paths: list[str], encoding: str, roots: list[str], table: bool = False) -> list[tuple[str, FileRecord | None]]:  # fmt: skip
    """Records of files read from disk, parsed without the caches (each file once); with
    `table`, with their use tables."""
    if os.getppid() == 1:  # the server is gone: nobody wants these
        os._exit(0)
    out = []
    for path in paths:
        language = language_for(path)
        out.append((path, read_record(path, language, encoding, roots, table) if language else None))
    return out


def named(
    index: SymbolIndex | None,
    path: Path,
    text: Text,
    name_path: str,
    *,
    substring: bool = False,
    kinds: Iterable[str] | None = None,
) -> list[Symbol] | list[Entry]:
    """The definitions of `text` (the content of `path`) that `name_path` names: from the
    index when it holds this very text, else from the file's outline."""
    entries = index.definitions(path, text) if index is not None else None
    if entries is None:
        return find_in_file(path, text, name_path, substring=substring, kinds=kinds)
    matches = name_path_matcher(name_path, substring=substring)
    wanted = set(kinds or ())
    return [e for e in entries if matches(e.name_path) and (not wanted or e.kind in wanted)]


def saved_index(
    workspace: Workspace, *, current: bool = False, lazily: bool = False, encoding: str = "utf-16"
) -> SymbolIndex | None:
    """The index a server (or an earlier command) saved for these roots, for a one-shot
    command or the MCP door: None when none was saved (a cold build would cost a command more
    than looking in the files). Its records serve where their files' stat vouches for them;
    with `current` it is first brought up to date (new and changed files parsed, the result
    saved) and answers whole, as a built index does; `lazily`, each record is made when
    first asked for."""
    from . import store

    folder = store.cache_folder()
    if not store.index_file(folder, workspace.roots, encoding).is_file():
        return None
    index = SymbolIndex(workspace, encoding, cache=folder)
    if current:
        index.build()
    else:
        index.load(lazily=lazily)
    return index


def outlined(path: Path, text: Text, entry: Entry) -> Symbol | None:
    """The outline's symbol for an index entry of `text` (a signature needs its byte
    columns; an entry's are in the client's encoding); None when the outline lacks it."""
    return next((s for s in walk(outline(path, text)) if (s.name_path, s.start_line) == (entry.name_path, entry.start_line)), None)  # fmt: skip
