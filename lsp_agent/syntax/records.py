"""The index's records: per file, its definitions in a few compact values rather than
objects per symbol; an Entry is made for an answer only."""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field

from .outline import KINDS, LineSymbols, last_line, line_segments, segment_lookup
from .uses import TableBytes, UseTable, unpack

Range = tuple[int, int, int, int]  # 0-based line and column, start and end, in the client's encoding


@dataclass(frozen=True, slots=True)
class Entry:
    """One indexed definition, made for an answer."""

    name: str
    kind: str
    container: str  # the name path of the parent ("" at the top level)
    range: Range
    selection: Range

    @property
    def name_path(self) -> str:
        return f"{self.container}/{self.name}" if self.container else self.name

    @property
    def start_line(self) -> int:
        return self.range[0] + 1

    @property
    def end_line(self) -> int:
        """1-based last line (see outline.last_line)."""
        return last_line(self.range[0], self.range[2:])


@dataclass(slots=True)
class FileRecord:
    """The definitions of one file, in outline order (parents before children)."""

    size: int  # of the file on disk when indexed (-1: not to be trusted by stat, see trusted_stat)
    mtime_ns: int
    version: str  # of the text indexed
    language: str
    names: str  # one line per definition
    containers: str  # one line per definition
    kinds: bytes  # KINDS codes
    ranges: array  # 8 unsigned ints per definition: its range and the range of its name
    # The names the text uses and their counts (uses.file_uses, packed: see used()); whether
    # it is generated (a bundle). Overview ranks from these without reading the file. None:
    # not kept (the file is read instead).
    uses: bytes | None = None
    generated: bool = False
    # Per definition, where its header ends (row and UTF-8 column, see references.header_end;
    # -1, -1: none found), so that overview shows signatures without a parse; empty: not kept.
    heads: array = field(default_factory=lambda: array("i"))
    # Kept with heads: per definition, one a line, the doc line a signature shows (the first
    # line of its docstring or leading comment; "" for none), so that definition lists
    # hundreds of candidates without parsing their files.
    docs: str = ""
    # The file's ctime and inode when its text was read (0, 0: not known): a file rewritten
    # with its size and mtime put back (`touch -r`, `cp -p`) has another ctime, so its record
    # does not stand for its text unread (SymbolIndex.current, settled).
    ctime_ns: int = 0
    inode: int = 0
    # Every word's uses and their roles (uses.pack_table: see table()), made after the index
    # (SymbolIndex.make_tables) so that references reads no file whose record is current;
    # None: not made. A record loaded from the index file, or saved to it, keeps its table
    # there (uses.Stored).
    use_table: TableBytes | None = None

    def used(self) -> tuple[str, array] | None:
        """The names the text uses, one a line, and two counts per name (see uses.file_uses)."""
        return None if self.uses is None else unpack(self.uses)

    def table(self, stamp: bytes) -> UseTable | None:
        """The file's use table; None when not made (yet), or made otherwise than `stamp`
        (references.table_stamp of its language) says."""
        return UseTable.of(self.use_table, stamp)

    def doc(self, i: int, docs: list[str] | None = None) -> str | None:
        """The doc line of definition `i` (`docs`: self.docs split), None when it has none;
        not to be asked of a record without heads."""
        return (docs if docs is not None else self.docs.split("\n"))[i] or None

    def entry(self, i: int, names: list[str], containers: list[str]) -> Entry:
        r = self.ranges[8 * i : 8 * i + 8]
        return Entry(names[i], KINDS[self.kinds[i]], containers[i], (r[0], r[1], r[2], r[3]), (r[4], r[5], r[6], r[7]))  # fmt: skip

    def entries(self) -> list[Entry]:
        if not self.kinds:
            return []
        names, containers = self.names.split("\n"), self.containers.split("\n")
        return [self.entry(i, names, containers) for i in range(len(self.kinds))]

    def line_symbols(self) -> LineSymbols:
        """What outline.line_symbols gives for the text this record was made from, without
        parsing it. The nesting comes back from the ranges as outline.nested made it from byte
        offsets: in outline order, each definition is inside the nearest enclosing one whose
        range ends no earlier (columns in any encoding order a line's points as bytes do)."""
        names, containers, ranges = self.names.split("\n"), self.containers.split("\n"), self.ranges
        roots: list[_Span] = []
        open_spans: list[tuple[tuple[int, int, int, int], _Span]] = []  # (range, span) of the enclosing ones
        named_on: dict[int, str] = {}
        for i in range(len(self.kinds)):
            row, column, end_row, end_column, name_row = ranges[8 * i : 8 * i + 5]
            here = (row, column, end_row, end_column)
            # one of the same range is a sibling (`var a, b int`), as outline.nested has it
            while open_spans and (not here[2:] <= open_spans[-1][0][2:] or here == open_spans[-1][0]):
                open_spans.pop()
            name_path = f"{containers[i]}/{names[i]}" if containers[i] else names[i]
            span = _Span(row + 1, last_line(row, (end_row, end_column)), name_path)
            (open_spans[-1][1].children if open_spans else roots).append(span)
            open_spans.append((here, span))
            named_on[name_row + 1] = name_path
        return LineSymbols(segment_lookup(line_segments(roots)), named_on)


@dataclass(slots=True)
class _Span:
    """A definition's lines and what it holds, for line_segments."""

    start_line: int
    end_line: int
    name_path: str
    children: list[_Span] = field(default_factory=list)
