"""Search: ripgrep (`rg --json`) over the workspace's files and its open editor buffers.

The engine reports, per file, its matches (line, the matched line(s), the columns of the
first match), its context lines and ripgrep's counts, in path-then-line order, to a sink:
the Collector. Binary files (a NUL byte anywhere) are skipped; those that match are named
with `count_binary`. Open editor buffers are searched as their unsaved text, through rg's
stdin, when rg would search a file at their path (see walk.py).

The caller may hand the collector a `keep_details` test (the shortening chain's): once it
says no stage showing matches can fit, the collector stops keeping each match's text and
only counts (`detailed=False`); the answer will be counts anyway, and this keeps a very
common pattern close to ripgrep's own speed.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ..errors import Refusal
from ..workspace import Workspace, escape_name
from .model import Engine, FileMatches, Match, Outcome, Query, Target
from .walk import find_rg, list_files, require_rg, searched_buffers

# keep_details(file, matches just added, file is new) -> may the matches still be shown?
KeepDetails = Callable[[FileMatches, list[Match], bool], bool]


class Collector:
    """Receives the engine's records and keeps details while they might still be shown."""

    def __init__(self, ws: Workspace, keep_details: KeepDetails | None, skip: set[Path]):
        self.ws = ws
        self.keep_details = keep_details  # None: keep every match's details
        self.skip = skip  # open editor buffers: searched separately, as their text
        self.files: dict[Path, FileMatches] = {}
        self.done: set[Path] = set()  # files fully reported (a file under two searched paths comes twice)
        self.binary: list[str] = []
        self.total = 0
        self.detailed = True
        # one root: a path is shown relative to it (Workspace.display, without its cost per file)
        self._prefix = str(ws.roots[0]) + "/" if len(ws.roots) == 1 else None

    def shown(self, path: Path) -> str:
        raw = str(path)
        if self._prefix and raw.startswith(self._prefix):
            return escape_name(raw[len(self._prefix) :])
        return self.ws.display(path)

    def skipped(self, path: Path, from_editor: bool) -> bool:
        return path in self.skip and not from_editor

    def add(
        self,
        path: Path,
        matches: list[Match],
        context: dict[int, str],
        count: int,
        *,
        from_editor: bool = False,
    ) -> None:
        """Add some of a file's match records (a file may come in several parts, in line order)."""
        if not count or self.skipped(path, from_editor):
            return
        entry = self.files.get(path)
        new = entry is None
        if entry is None:
            entry = self.files[path] = FileMatches(path, self.shown(path), from_editor=from_editor)
        entry.count += count
        self.total += count
        if self.detailed:
            entry.matches.extend(matches)
            entry.context.update(context)
            if self.keep_details is not None and not self.keep_details(entry, matches, new):
                self.drop_details()

    def counted(self, path: Path, lines: int, hits: int, *, from_editor: bool = False) -> None:
        """A file's totals, as ripgrep counts them (matched lines, matches)."""
        entry = self.files.get(path)
        if entry is not None and not self.skipped(path, from_editor):
            entry.lines, entry.hits = lines, hits

    def withdraw(self, path: Path) -> None:
        """Forget what was reported of `path` (it failed verification; see RipgrepEngine.verify)."""
        if (entry := self.files.pop(path, None)) is not None:
            self.total -= entry.count
        self.done.discard(path)

    def drop_details(self) -> None:
        self.detailed = False
        for entry in self.files.values():
            entry.matches, entry.context = [], {}

    def add_binary(self, path: Path, *, matched: bool) -> None:
        """A binary file: whatever was added for it withdrawn (its matches came before its
        first NUL byte); named if it is known to match."""
        if path in self.skip:
            return
        entry = self.files.pop(path, None)
        if entry is not None:
            self.total -= entry.count
        if matched:
            self.binary.append(self.shown(path))

    def outcome(self, engine: str, multiline: bool) -> Outcome:
        files = sorted(self.files.values(), key=lambda f: f.shown)
        for f in files:
            f.matches.sort(key=lambda m: m.line)
        lines = sum(f.lines for f in files)
        hits = sum(f.hits for f in files)
        return Outcome(files, self.total, sorted(self.binary), self.detailed, engine, lines, hits, multiline)


def strip_eol(line: str) -> str:
    return line.removesuffix("\r")


def run_search(
    ws: Workspace,
    query: Query,
    targets: list[Target],
    *,
    keep_details: KeepDetails | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[str], None] = lambda message: None,
) -> Outcome:
    """Search `targets` with ripgrep, open buffers as their text; with `keep_details`, only
    counts are kept once it says the matches cannot be shown."""
    from .ripgrep import RipgrepEngine

    check_query(query)
    overlay = ws.open_documents()
    collector = Collector(ws, keep_details, set(overlay))
    searcher: Engine = RipgrepEngine(require_rg(), query)
    searcher.check()
    for target in targets:
        searcher.search(target, collector, cancelled, progress)
    # Open buffers, as their unsaved text, where ripgrep would search a file at their path.
    searched: set[Path] = set()
    for target in targets:
        buffers = [p for p in overlay if p.is_relative_to(target.root) and p not in searched]
        searched |= searched_buffers(target.root, target.rels, query.globs, buffers)
    for path in sorted(searched):
        searcher.search_text(path, overlay[path], collector)
    return collector.outcome(searcher.name, query.multiline)


# Untrusted input must not reach rg's command line in a form the OS refuses (a NUL byte, an
# argument past Linux's 128 KiB limit), which would fail the call with an internal error.
MAX_PATTERN = 10_000
MAX_GLOB = 1_000
MAX_GLOBS = 100


def shorten(text: str, width: int = 200) -> str:
    """A pattern or glob as echoed in answers: JSON, cut at `width` with "…"."""
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def quoted(text: str, width: int = 200) -> str:
    """A pattern as the user wrote it, in quotes (cut at `width`, saying so)."""
    if len(text) <= width:
        return f'"{text}"'
    return f'"{text[:width]}…" (the first {width} of {len(text):,} characters)'


def check_query(query: Query) -> None:
    """Refuse what ripgrep cannot be given: rg would fail, or the OS would refuse to start it."""
    if "\n" in query.pattern and not query.multiline:
        raise Refusal(
            "invalid_regex", "The pattern contains a line break; set multiline=true to match across lines."
        )
    if "\x00" in query.pattern:
        raise Refusal(
            "invalid_regex",
            "The pattern contains a NUL character, which no searched text has (a file with a NUL byte is "
            "binary and skipped); remove it.",
        )
    if len(query.pattern) > MAX_PATTERN:
        raise Refusal(
            "invalid_regex",
            f"The pattern is {len(query.pattern):,} characters long; the longest accepted is {MAX_PATTERN:,}.",
        )
    if len(query.globs) > MAX_GLOBS:
        raise Refusal("invalid_glob", f"{len(query.globs):,} globs given; at most {MAX_GLOBS} are accepted.")
    for glob in query.globs:
        if "\x00" in glob or len(glob) > MAX_GLOB:
            raise Refusal(
                "invalid_glob",
                f"The glob {shorten(glob)} is not accepted: a glob may not contain a NUL character "
                f"or be longer than {MAX_GLOB:,} characters.",
            )


__all__ = [
    "Collector",
    "Engine",
    "FileMatches",
    "KeepDetails",
    "Match",
    "Outcome",
    "Query",
    "Target",
    "find_rg",
    "list_files",
    "run_search",
]
