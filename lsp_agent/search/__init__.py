"""Search: ripgrep over the workspace's files and its open editor buffers.

The engine reports, per file, its matches (line, the matched line(s), the columns of the
first match), its context lines and ripgrep's counts, in path-then-line order, to a sink:
the Collector. It reads rg's plain output for the usual search (plain.py) and its JSON
(`rg --json`) for context lines, multiline patterns, binary files counted and open buffers. Binary files (a NUL byte anywhere) are skipped; those that match are named
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
from ..workspace import Workspace
from .collector import Collector, KeepDetails, Prefetch
from .model import FileMatches, Match, Outcome, Query, Target
from .targets import targets_of
from .walk import find_rg, list_files, require_rg, searched_buffers

TYPE_CHECKING = False  # the engines' protocol is for type checkers (collector.py)
if TYPE_CHECKING:
    from .collector import Engine


def run_search(
    ws: Workspace,
    query: Query,
    targets: list[Target],
    *,
    keep_details: KeepDetails | None = None,
    cancelled: Callable[[], bool] = lambda: False,
    progress: Callable[[str], None] = lambda message: None,
    prefetch: Prefetch | None = None,
) -> Outcome:
    """Search `targets` with ripgrep, open buffers as their text; with `keep_details`, only
    counts are kept once it says the matches cannot be shown. `prefetch(file, matches kept)`
    is called for the files with matches while rg writes nothing (to get what the answer
    will want of them)."""
    from .ripgrep import RipgrepEngine

    check_query(query)
    overlay = ws.open_documents()
    collector = Collector(ws, keep_details, set(overlay), prefetch)
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
    "FileMatches",
    "KeepDetails",
    "Match",
    "Outcome",
    "Prefetch",
    "Query",
    "Target",
    "find_rg",
    "list_files",
    "run_search",
    "targets_of",
]
