"""The engine protocol and the sink an engine reports to: the Collector keeps each file's matches while they might
still be shown (see `keep_details`), counts them all, and gives the Outcome. Below the
package's `run_search` and the engines, so that neither imports the other's package."""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable
from operator import attrgetter
from pathlib import Path

from ..workspace import Text, Workspace, escape_name
from .model import Cancelled, FileMatches, Match, Outcome, Progress, Target

# keep_details(file, (first line, last line) of each match just added, file is new) -> may
# the matches still be shown? (Lines, not matches: a common pattern's are judged before they
# are made, by the lines ripgrep names.)
KeepDetails = Callable[[FileMatches, list[tuple[int, int]], bool], bool]
# prefetch(file, may its matches still be shown?) -> False once it wants no more files
Prefetch = Callable[[FileMatches, bool], object]


# Matches made while the engine waits, at most: past as many, a pattern is most often common
# and its answer counts, which makes none (those kept are made when looked at, see `made`).
MADE_AHEAD = 1_000


class Collector:
    """Receives the engine's records and keeps details while they might still be shown."""

    def __init__(
        self,
        ws: Workspace,
        keep_details: KeepDetails | None,
        skip: set[Path],
        prefetch: Prefetch | None = None,
    ):
        self.ws = ws
        self.keep_details = keep_details  # None: keep every match's details
        # prefetch(file, whether its matches are kept): what the answer will want of each file
        # with matches (its enclosing symbols, its index record), got while the engine waits
        # for rg, for the files not yet prefetched (`arrived`); none after it answers False
        self.prefetch = prefetch
        self.arrived: deque[str] = deque()
        # Files are known by their absolute paths as strings (FileMatches.name): a very common
        # pattern's thousands are counted without making a Path of each.
        self.skip = {os.fspath(p) for p in skip}  # open editor buffers: searched separately, as their text
        self.files: dict[str, FileMatches] = {}
        self.done: set[str] = set()  # files fully reported (a file under two searched paths comes twice)
        self.binary: dict[str, str] = {}  # binary files known to match, as shown
        self.doubted: set[str] = set()  # files whose lines were not where rg said (see plain.py)
        # files whose shown lines are their text read here, beneath the root, with each match
        # where rg said (plain.py): the engine's check need not read them again
        self.read_here: set[str] = set()
        # The engine's test that files rg reported are beneath the root (`check_beneath`: those
        # it refuses), set while rg runs and done in its pauses, in batches, for the files
        # whose report is finished (`unchecked`): those that pass (`reached`) need none after.
        self.check_beneath: Callable[[list[str]], list[str]] | None = None
        self.unchecked: list[str] = []
        self.reached: set[str] = set()
        self.total = 0
        self.detailed = True
        # matches judged by their lines whose making waits until they are looked at (by the
        # engine's check of what it reported, or the outcome): a common pattern's first
        # thousands are dropped before, never made
        self.deferred: list[tuple[FileMatches, Callable[[], list[Match]]]] = []
        # one root: a path is shown relative to it (Workspace.display, without its cost per file)
        self._prefix = str(ws.roots[0]) + "/" if len(ws.roots) == 1 else None

    def shown(self, name: str) -> str:
        if self._prefix and name.startswith(self._prefix):
            return escape_name(name[len(self._prefix) :])
        return self.ws.display(Path(name))

    def skipped(self, name: str, from_editor: bool) -> bool:
        return name in self.skip and not from_editor

    def add(
        self,
        name: str,
        matches: list[Match] | Callable[[], list[Match]],
        context: dict[int, str],
        count: int,
        *,
        from_editor: bool = False,
        lines: list[int] | None = None,
    ) -> None:
        """Add some of a file's match records (a file may come in several parts, in line order).
        Given the `lines` they start on (one line each), `matches` may be the function that
        makes them: called only if their details are still kept once those lines are judged
        (most of a common pattern's records are then never decoded)."""
        if not count or self.skipped(name, from_editor):
            return
        new = name not in self.files
        entry = self.entry(name, from_editor)
        entry.count += count
        self.total += count
        if not self.detailed:
            return
        entry.context.update(context)
        if lines is not None and self.keep_details is not None:
            if not self.keep_details(entry, [(n, n) for n in lines], new):
                self.drop_details()
            elif callable(matches):
                self.deferred.append((entry, matches))
            else:
                entry.matches.extend(matches)
            return
        made = matches() if callable(matches) else matches
        entry.matches.extend(made)
        if self.keep_details is not None and not self.keep_details(
            entry, [(m.line, m.last) for m in made], new
        ):
            self.drop_details()

    def entry(self, name: str, from_editor: bool) -> FileMatches:
        """The file's entry, made on its first record (and queued for prefetch)."""
        entry = self.files.get(name)
        if entry is None:
            entry = self.files[name] = FileMatches(name, self.shown(name), from_editor=from_editor)
            if self.prefetch is not None:
                self.arrived.append(name)
        return entry

    def count_file(self, name: str, lines: int, hits: int) -> None:
        """A whole file's counts while only counts are kept (plain.count_whole), recorded as
        add, finished and counted record them, in one call: a very common pattern's thousands
        of files."""
        self.finished(name)
        if not lines or self.skipped(name, False):
            return
        entry = self.entry(name, False)
        entry.count += lines
        self.total += lines
        entry.lines, entry.hits = lines, hits

    def make_some(self) -> bool:
        """Make the matches of one deferred part (while the engine waits for more): whether
        there was one."""
        if not self.deferred or self.total > MADE_AHEAD:
            return False
        entry, make = self.deferred.pop(0)
        entry.matches.extend(make())
        return True

    def idle_work(self) -> bool:
        """One piece of the work put off (making matches, prefetching, then testing the files
        reported since the last test), done while the engine waits for rg: whether there was one."""
        if self.make_some():
            return True
        if self.arrived:
            entry = self.files.get(self.arrived.popleft())
            if entry is not None:
                assert self.prefetch is not None
                if self.prefetch(entry, self.detailed) is False:  # (a common pattern's thousands)
                    self.prefetch = None
                    self.arrived.clear()
            return True
        if self.unchecked and self.check_beneath is not None:
            names = sorted(n for n in self.unchecked if n in self.done)  # (not withdrawn since)
            self.unchecked = []
            refused = set(self.check_beneath(names))
            self.reached.update(n for n in names if n not in refused)
            return True
        return False

    def finished(self, name: str) -> None:
        """A file fully reported: its test beneath the root waits for a pause (`check_beneath`)."""
        self.done.add(name)
        if self.check_beneath is not None:
            self.unchecked.append(name)

    def made(self) -> None:
        """The matches whose making was put off, made now that they are to be looked at."""
        for entry, make in self.deferred:
            entry.matches.extend(make())
        self.deferred = []

    def records(self, name: str) -> int:
        """How many of a file's match records were added so far."""
        entry = self.files.get(name)
        return 0 if entry is None else entry.count

    def counted(self, name: str, lines: int, hits: int, *, from_editor: bool = False) -> None:
        """A file's totals, as ripgrep counts them (matched lines, matches)."""
        entry = self.files.get(name)
        if entry is not None and not self.skipped(name, from_editor):
            entry.lines, entry.hits = lines, hits

    def withdraw(self, name: str) -> None:
        """Forget what was reported of a file (it failed verification; see RipgrepEngine.verify)."""
        if (entry := self.files.pop(name, None)) is not None:
            self.forget(entry)
        self.binary.pop(name, None)  # (refused by the check: not named either)
        self.done.discard(name)
        self.doubted.discard(name)
        self.read_here.discard(name)
        self.reached.discard(name)

    def forget(self, entry: FileMatches) -> None:
        """Take a file's entry, popped, out of the totals and the matches still to be made."""
        self.total -= entry.count
        self.deferred = [(e, make) for e, make in self.deferred if e is not entry]

    def drop_details(self) -> None:
        self.detailed = False
        self.deferred = []
        for entry in self.files.values():
            entry.matches, entry.context = [], {}

    def add_binary(self, name: str, *, matched: bool) -> None:
        """A binary file: whatever was added for it withdrawn (its matches came before its
        first NUL byte); named if it is known to match."""
        if name in self.skip:
            return
        entry = self.files.pop(name, None)
        if entry is not None:
            self.forget(entry)
        if matched:
            self.binary[name] = self.shown(name)

    def outcome(self, engine: str, multiline: bool) -> Outcome:
        self.made()
        files = sorted(self.files.values(), key=attrgetter("shown"))
        for f in files:
            if len(f.matches) > 1:
                f.matches.sort(key=attrgetter("line"))
        lines = sum(f.lines for f in files)
        hits = sum(f.hits for f in files)
        return Outcome(
            files, self.total, sorted(self.binary.values()), self.detailed, engine, lines, hits, multiline
        )


def strip_eol(line: str) -> str:
    return line.removesuffix("\r")


def quoted(text: str, width: int = 200) -> str:
    """A pattern as the user wrote it, in quotes (cut at `width`, saying so)."""
    if len(text) <= width:
        return f'"{text}"'
    return f'"{text[:width]}…" (the first {width} of {len(text):,} characters)'


TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:  # a protocol for type checkers: nothing checks it at run time
    from typing import Protocol

    class Engine(Protocol):
        """A searcher: finds the query's matches and hands them to the sink, file by file."""

        name: str

        def check(self) -> None:
            """Refuse a query the engine cannot run, before any file is read."""

        def search(self, target: Target, sink: Collector, cancelled: Cancelled, progress: Progress) -> None:
            """Search the files under `target` (their disk copies)."""

        def search_text(self, path: Path, text: Text, sink: Collector) -> None:
            """Search an open editor buffer's text as the file at `path`."""
