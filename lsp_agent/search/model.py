"""What a search is and what it finds: the query, the matches per file, the outcome, and the
engine protocol's types (the protocol itself is beside its sink, collector.py). Engines report matches to a sink (the Collector); how many of them an answer
can show is the shortening chain's business, not theirs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path


@dataclass(frozen=True)
class Query:
    """What a search looks for, and how."""

    pattern: str
    fixed_strings: bool = False
    ignore_case: bool = False
    multiline: bool = False
    globs: tuple[str, ...] = ()
    before: int = 0
    after: int = 0
    count_binary: bool = False  # read binary files whole to count those that match


@dataclass(frozen=True, slots=True)
class Match:
    """One match record: a matched line (or run of lines, multiline) and where the match is."""

    line: int  # 1-based line of the match's start
    lines: tuple[str, ...]  # the matched line(s), without line terminators
    col: int  # 0-based character column of the first match in lines[0]
    end: int  # its end column (at most len(lines[0]))

    @property
    def last(self) -> int:
        return self.line + len(self.lines) - 1


@dataclass
class FileMatches:
    """A file with matches: those kept, its context lines and its counts."""

    name: str  # absolute, resolved: the string of `path`
    shown: str  # as shown to agents
    matches: list[Match] = field(default_factory=list)
    context: dict[int, str] = field(default_factory=dict)
    count: int = 0  # ripgrep's match records (the unit of paging), also when details were dropped
    from_editor: bool = False
    lines: int = 0  # matched lines, as ripgrep's --count (its stats' matched_lines)
    hits: int = 0  # matches, as ripgrep's --count-matches (several on a line count apart)

    @cached_property
    def path(self) -> Path:
        """`name` as a Path, made when first wanted: a common pattern's thousands of files
        are counted by name, and a few of them shown."""
        return Path(self.name)


@dataclass
class Outcome:
    """A whole search's files and counts."""

    files: list[FileMatches]  # files with matches, sorted by shown path
    total: int  # match records: one per matched line (per run of lines with multiline)
    binary: list[str]  # binary files with matches, skipped
    detailed: bool  # False: only counts were kept (the answer could not show more)
    engine: str
    lines: int  # matched lines (ripgrep's --count)
    hits: int  # matches (ripgrep's --count-matches)
    multiline: bool = False


@dataclass
class Target:
    """The searched paths under one workspace root: root-relative folders and files."""

    root: Path
    rels: list[str]  # "" is the root itself


Cancelled = Callable[[], bool]
Progress = Callable[[str], None]
