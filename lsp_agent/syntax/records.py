"""The index's records: per file, its definitions in a few compact values rather than
objects per symbol; an Entry is made for an answer only."""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from .outline import KINDS

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
        """1-based last line; a range ending at column 0 ends on the line before."""
        row, _, end_row, end_col = self.range
        return end_row if end_col == 0 and end_row > row else end_row + 1


@dataclass(slots=True)
class FileRecord:
    """The definitions of one file, in outline order (parents before children)."""

    size: int  # of the file on disk when indexed (-1: indexed from an editor's buffer)
    mtime_ns: int
    version: str  # of the text indexed
    language: str
    names: str  # one line per definition
    containers: str  # one line per definition
    kinds: bytes  # KINDS codes
    ranges: array  # 8 unsigned ints per definition: its range and the range of its name

    def entry(self, i: int, names: list[str], containers: list[str]) -> Entry:
        r = self.ranges[8 * i : 8 * i + 8]
        return Entry(names[i], KINDS[self.kinds[i]], containers[i], (r[0], r[1], r[2], r[3]), (r[4], r[5], r[6], r[7]))  # fmt: skip

    def entries(self) -> list[Entry]:
        if not self.kinds:
            return []
        names, containers = self.names.split("\n"), self.containers.split("\n")
        return [self.entry(i, names, containers) for i in range(len(self.kinds))]
