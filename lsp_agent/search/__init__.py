"""Search engines: ripgrep (`rg --json`) and a pure-Python engine with the same answers.

Both yield the same records: per file, its matches (line, the matched line(s), the columns
of the first match) and its context lines, ordered by path then line. Binary files (a NUL
byte anywhere) are skipped; those that match are counted. Open editor buffers are searched
as their unsaved text in place of the disk.

The engines report to a sink, the Collector. The caller may hand it a `keep_details` test
(the shortening chain's): once it says no stage showing matches can fit, the collector stops
keeping each match's text and only counts (`detailed=False`); the answer will be counts
anyway, and this keeps a very common pattern close to ripgrep's own speed.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import sysconfig
from collections.abc import Callable
from pathlib import Path

from ..errors import Refusal
from ..workspace import Workspace
from .model import Engine, FileMatches, Match, Outcome, Query, Target

# keep_details(file, matches just added, file is new) -> may the matches still be shown?
KeepDetails = Callable[[FileMatches, list[Match], bool], bool]


class Collector:
    """Receives one engine's records and keeps details while they might still be shown."""

    def __init__(self, ws: Workspace, keep_details: KeepDetails | None, skip: set[Path]):
        self.ws = ws
        self.keep_details = keep_details  # None: keep every match's details
        self.skip = skip  # open editor buffers: searched separately, as their text
        self.files: dict[Path, FileMatches] = {}
        self.binary: list[str] = []
        self.total = 0
        self.files_searched = 0  # by the Python engine, for progress (ripgrep does not say)
        self.detailed = True
        # one root: a path is shown relative to it (Workspace.display, without its cost per file)
        self._prefix = str(ws.roots[0]) + "/" if len(ws.roots) == 1 else None

    def shown(self, path: Path) -> str:
        raw = str(path)
        if self._prefix and raw.startswith(self._prefix):
            return raw[len(self._prefix) :]
        return self.ws.display(path)

    def add(
        self,
        path: Path,
        matches: list[Match],
        context: dict[int, str],
        count: int,
        *,
        from_editor: bool = False,
    ) -> None:
        """Add some of a file's matches (a file may come in several parts, in line order)."""
        if not count or (path in self.skip and not from_editor):
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

    def outcome(self, engine: str) -> Outcome:
        files = sorted(self.files.values(), key=lambda f: f.shown)
        for f in files:
            f.matches.sort(key=lambda m: m.line)
        return Outcome(files, self.total, sorted(self.binary), self.detailed, engine)


def find_rg() -> str | None:
    """rg on PATH, else the one the `ripgrep` wheel installed next to this interpreter."""
    found = shutil.which("rg")
    if found:
        return found
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = os.path.join(folder, "rg.exe" if os.name == "nt" else "rg")
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def decode(data: bytes) -> str:
    """Bytes as ripgrep reads them: a BOM selects UTF-16 or is dropped; invalid UTF-8 is
    replaced."""
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    elif data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    return data.decode("utf-8", errors="replace")


def strip_eol(line: str) -> str:
    return line.removesuffix("\r")


def run_search(
    ws: Workspace,
    query: Query,
    targets: list[Target],
    *,
    engine: str = "auto",
    keep_details: KeepDetails | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[str], None] = lambda message: None,
) -> Outcome:
    """Search `targets` with `engine` ("auto": ripgrep if found, "rg", "python"); with
    `keep_details`, only counts are kept once it says the matches cannot be shown."""
    from . import pure, ripgrep

    check_query(query)
    rg = find_rg() if engine in ("auto", "rg") else None
    if engine == "rg" and rg is None:
        raise Refusal(
            "no_ripgrep", "search_engine is 'rg' but no rg was found on PATH or in the ripgrep wheel."
        )
    overlay = ws.open_documents()
    collector = Collector(ws, keep_details, set(overlay))
    searcher: Engine = ripgrep.RipgrepEngine(rg, query) if rg is not None else pure.PythonEngine(query)
    searcher.check()
    for target in targets:
        searcher.search(target, collector, cancelled, progress)

    # Open buffers under the searched paths, as their unsaved text, by the same rules.
    for path, text in sorted(overlay.items()):
        for target in targets:
            if any(visits(target.root, rel, path, query.globs) for rel in target.rels):
                searcher.search_text(path, text, collector)
                collector.files_searched += 1
                break
    return collector.outcome("ripgrep" if rg is not None else "python")


# Untrusted input must not reach rg's command line in a form the OS refuses (a NUL byte, an
# argument past Linux's 128 KiB limit), which would fail the call with an internal error.
MAX_PATTERN = 10_000
MAX_GLOB = 1_000
MAX_GLOBS = 100


def shorten(text: str, width: int = 200) -> str:
    """A pattern or glob as echoed in answers and refusals: JSON, cut at `width` with "…"."""
    shown = json.dumps(text, ensure_ascii=False)
    return shown if len(shown) <= width else shown[: width - 1] + "…"


def check_query(query: Query) -> None:
    """Refuse, the same way for both engines, what neither can run."""
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


def visits(root: Path, rel: str, path: Path, globs: tuple[str, ...]) -> bool:
    """Would a search of root-relative `rel` visit `path`? (The walk's rules, for files
    that exist only as editor buffers or whose disk copy is stale.)"""
    from .ignore import Rules

    base = root / rel if rel else root
    if path == base:
        return True
    if not path.is_relative_to(base):
        return False
    rules = Rules(root, rel, list(globs))
    parts = path.relative_to(root).as_posix().split("/")
    start = len(rel.split("/")) if rel else 0
    for i in range(start, len(parts)):
        if rules.ignored("/".join(parts[: i + 1]), i < len(parts) - 1):
            return False
    return True


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
    "run_search",
]
