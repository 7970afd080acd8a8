"""search: ripgrep-style search whose over-budget answers shrink through the shortening chain
(`lsp_agent/tools/chain.py`), every shortened line naming its enclosing symbol."""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from pathlib import Path

from ..budget import most_that_fit, plural
from ..errors import Refusal
from ..search import FileMatches, Outcome, Query, run_search, shorten, targets_of
from ..workspace import Workspace, file_identity, is_racy
from .chain import Enclosing, Search, Symbols, fit, keep_details, unit
from .registry import BUDGET, MAX_CHARS, Context, tool

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from collections.abc import Callable

    from ..syntax import LineSymbols
    from ..syntax.index import SymbolIndex

SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "minLength": 1,
            "description": "Rust regex, as ripgrep's: no look-around or backreferences.",
        },
        "fixed_strings": {
            "type": "boolean",
            "default": False,
            "description": "Treat the pattern as literal text.",
        },
        "ignore_case": {"type": "boolean", "default": False, "description": "Match case-insensitively."},
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Files or folders to search, relative to the workspace root (default: the whole workspace).",
        },
        "glob": {
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
            "description": "'*.py' includes, '!*_test.py' excludes (a glob overrides .gitignore).",
        },
        "context_before": {
            "type": "integer",
            "minimum": 0,
            "maximum": 100,
            "default": 0,
            "description": "Lines of context before each match.",
        },
        "context_after": {
            "type": "integer",
            "minimum": 0,
            "maximum": 100,
            "default": 0,
            "description": "Lines of context after each match.",
        },
        "multiline": {
            "type": "boolean",
            "default": False,
            "description": "Let the pattern match across lines (\\n in the pattern).",
        },
        "count_binary": {
            "type": "boolean",
            "default": False,
            "description": "Name the binary files that match too (slower).",
        },
        "max_chars": MAX_CHARS,
        "output": {
            "enum": ["content", "files", "count"],
            "default": "content",
            "description": "content: the matches (shortened to fit); files: only the files with matches "
            "(as rg -l); count: matching lines per file (as rg -c). offset/limit page the files in those modes.",
        },
        "in": {
            "enum": ["code", "comments", "strings"],
            "description": "Only matches in code, in comments, or in strings, from the syntax tree (files "
            "without a grammar are left out).",
        },
        "within": {
            "type": "string",
            "minLength": 1,
            "description": "Only matches inside this symbol, by name path (`Model/save`, `Model`).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Page the full matches: skip this many matched lines.",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Page the full matches: at most this many (the answer's next gives the rest).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

SUMMARY = (
    "Search file contents with ripgrep (Rust regex; .gitignore, hidden and binary files skipped; unsaved "
    "buffers searched). Use it for text: "
    "calls, strings, uses of a name; find_symbol finds where something is defined, symbols outlines a file. "
    "Matches come under each file's path as `LINE[ SYMBOL]:TEXT`, like `rg -n`, the enclosing symbol "
    "named when it changes; context lines are `LINE-TEXT`. "
    f"The answer fits {BUDGET}: over it, it shortens (one line per match, cut lines ending with …, line "
    "numbers, counts per file, a summary); the header names the stage and what it dropped; `more:` "
    "gives the next calls. "
    'Example: {"pattern": "def save", "paths": ["src/models"], "context_after": 2}.'
)


class LineSymbolsCache:
    """LineSymbols of files on disk, kept while their stat identity is unchanged (as the
    workspace keeps texts, see Workspace.text): a repeated search neither re-reads nor
    re-hashes the hundreds of files a common pattern matches in. A first search takes them
    from the symbol index where it holds the file's current text: no file is read or parsed."""

    def __init__(self, size: int = 4096):
        self.size = size
        self._entries: OrderedDict[Path, tuple[tuple[int, ...], LineSymbols]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, ws: Workspace, path: Path, index: SymbolIndex | None = None) -> LineSymbols | None:
        """The file's LineSymbols (None: no grammar, or the file cannot be read as text)."""
        from ..syntax import language_for, line_symbols

        if language_for(path) is None:
            return None
        if (open_text := ws.open_text(path)) is not None:  # an editor's buffer: no stat tells its versions
            record = index.current(path) if index is not None else None
            return record.line_symbols() if record is not None else line_symbols(path, open_text)
        read_at = time.time_ns()  # before the stat: a write after it makes the entry racy
        try:
            info = os.stat(path)
        except OSError:
            return None
        identity = file_identity(info)
        with self._lock:
            cached = self._entries.get(path)
            if cached is not None and cached[0] == identity:
                self._entries.move_to_end(path)
                return cached[1]
        record = index.current(path) if index is not None else None
        if record is not None:
            found = record.line_symbols()
        else:
            try:
                text = ws.text(path)
            except Refusal:
                return None
            found = line_symbols(path, text)
            if text.from_editor:  # opened meanwhile: not the disk's
                return found
        if not is_racy(info, read_at):
            with self._lock:
                self._entries[path] = (identity, found)
                self._entries.move_to_end(path)
                while len(self._entries) > self.size:
                    self._entries.popitem(last=False)
        return found

    def warm(self, ws: Workspace, path: Path, index: SymbolIndex | None = None) -> None:
        """get's answer made ahead, where get will find it kept: a file on disk whose stat
        vouches for it (not an editor's buffer, not racy: those get makes each time)."""
        if ws.open_text(path) is not None:
            return
        try:
            info = os.stat(path)
        except OSError:
            return
        if not is_racy(info, time.time_ns()):
            self.get(ws, path, index)


LINE_SYMBOLS = LineSymbolsCache()


# Files whose symbols are got ahead, at most: a page with symbols shows a few dozen, and a
# pattern matching in more files is most often shown as counts (a one-shot's symbols come from
# the saved index, ~0.15 ms a file, taken from ripgrep's CPU while it still runs).
PREFETCHED_FILES = 48


def symbols_ahead(ctx: Context) -> Callable[[FileMatches, bool], bool]:
    """The search's prefetch: the LineSymbols of the first files with matches that may be
    shown, got while rg runs; no more files are wanted once they are past, or once the
    matches will not be shown."""
    seen = 0

    def prefetch(file: FileMatches, shown: bool) -> bool:
        nonlocal seen
        seen += 1
        if shown and seen <= PREFETCHED_FILES:
            LINE_SYMBOLS.warm(ctx.workspace, file.path, ctx.symbol_index())
        return shown and seen < PREFETCHED_FILES

    return prefetch


def symbol_provider(ws: Workspace, index_of: Callable[[], SymbolIndex | None] = lambda: None) -> Symbols:
    """The innermost symbol around each of a file's match lines, and whether the line is the
    one naming it; None for a language without a grammar. From the index's record of the
    file when it is current, else from the file's outline: the same labels. The index is
    asked for (`index_of`) when a file's labels are: an answer of counts asks for none."""

    def symbols(file: FileMatches) -> dict[int, Enclosing] | None:
        found = LINE_SYMBOLS.get(ws, file.path, index_of())
        if found is None:
            return None
        labels: dict[int, Enclosing] = {}
        for m in file.matches:
            name = found.around(m.line)
            labels[m.line] = (name, name is not None and found.named_on.get(m.line) == name)
        return labels

    return symbols


LOCATION_TEXT = 200  # characters of a match's line kept in its location


def locations_of(outcome: Outcome, offset: int, limit: int | None) -> list[dict] | None:
    """The matches the answer covers, for programs (an editor's quickfix list): path as shown,
    1-based line, 1-based start and end character columns, the start of the matched line.
    None when the matches were too many to keep anything but counts."""
    if not outcome.detailed:
        return None
    every = [(f, m) for f in outcome.files for m in f.matches]  # path, then line order
    if offset or limit is not None:
        every = every[offset : None if limit is None else offset + limit]
    return [
        {
            "path": f.shown,
            "line": m.line,
            "column": m.col + 1,
            "end_column": m.end + 1,
            "text": m.lines[0][:LOCATION_TEXT],
        }
        for f, m in every
    ]


@tool("search", "Search files", SUMMARY, SCHEMA)
def search(
    ctx: Context,
    pattern: str,
    *,
    max_chars: int,
    fixed_strings: bool = False,
    ignore_case: bool = False,
    paths: list[str] | None = None,
    glob: str | list[str] | None = None,
    context_before: int = 0,
    context_after: int = 0,
    multiline: bool = False,
    count_binary: bool = False,
    offset: int = 0,
    limit: int | None = None,
    output: str = "content",
    within: str | None = None,
    **structure: str,
) -> dict:
    budget, where = max_chars, structure.get("in")  # `in` is a Python keyword: it comes through **structure
    globs = tuple([glob] if isinstance(glob, str) else glob or [])
    targets, left_out = targets_of(ctx.workspace, paths)
    query = Query(
        pattern, fixed_strings, ignore_case, multiline, globs, context_before, context_after, count_binary
    )
    keep = None if offset > 0 or limit is not None or where or within else keep_details(budget)
    outcome = run_search(
        ctx.workspace,
        query,
        targets,
        keep_details=keep if output == "content" or keep is None else no_details,
        cancelled=ctx.cancel_event.is_set,
        progress=lambda message: ctx.progress(message),
        prefetch=symbols_ahead(ctx) if output == "content" else None,
    )
    filtered: list[str] = []
    if where or within:
        outcome, filtered = restrict(ctx, outcome, where, within, context_before, context_after)
    notes = filtered + [f"left out: {m}" for m in left_out]
    if output != "content":
        return file_list(outcome, pattern, output, offset, limit, budget, notes)
    return matches_answer(ctx, outcome, context_before, context_after, offset, limit, budget, notes)


def matches_answer(
    ctx: Context,
    outcome: Outcome,
    before: int,
    after: int,
    offset: int,
    limit: int | None,
    budget: int,
    notes: list[str],
) -> dict:
    """The matches shown through the shortening chain, with the search's totals and locations."""
    check_offset(offset, outcome)
    s = Search(outcome, symbol_provider(ctx.workspace, ctx.symbol_index), before, after, offset, limit)
    s.extra_notes = notes
    answer = fit(s, budget)
    answer.update(
        total_matches=outcome.hits,
        total_lines=outcome.lines,
        total_files=len(outcome.files),
        binary_files_skipped=outcome.binary,
        engine=outcome.engine,
        locations=locations_of(outcome, s.offset, s.shown_matches if s.paging else None),
    )
    return answer


def check_offset(offset: int, outcome: Outcome) -> None:
    if offset and offset >= outcome.total:
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last match: the search has {outcome.total:,} {unit(outcome)}; "
            f"use offset=0..{max(outcome.total - 1, 0)}.",
            total_matches=outcome.hits,
            total_lines=outcome.lines,
        )


def no_details(file: FileMatches, spans: list[tuple[int, int]], new: bool) -> bool:
    """Counts only: the files and counts modes never show a match's text."""
    return False


def restrict(
    ctx: Context, outcome: Outcome, where: str | None, within: str | None, before: int, after: int
) -> tuple[Outcome, list[str]]:
    """The outcome with only the matches in code, comments or strings (`where`) and inside a
    symbol matching `within`; and notes saying what was left out."""
    from ..syntax import language_for, name_path_matcher, outline, walk
    from ..syntax.references import region

    wanted = {"code": "code", "comments": "comment", "strings": "string"}.get(where or "")
    inside = name_path_matcher(within) if within else None
    files, ungrammared, dropped = [], 0, 0
    for f in outcome.files:
        ctx.check_cancelled()
        if language_for(f.path) is None:
            ungrammared += 1
            dropped += f.count
            continue
        try:
            text = ctx.workspace.text(f.path)
        except Refusal:
            continue
        spans = (
            [(s.start_line, s.end_line) for s in walk(outline(f.path, text)) if inside(s.name_path)]
            if inside
            else None
        )
        kept = [
            m for m in f.matches
            if (spans is None or any(a <= m.line <= b for a, b in spans))
            and (wanted is None or region(f.path, text, m.line, m.col, m.end) == wanted)
        ]  # fmt: skip
        dropped += f.count - len(kept)
        if kept:
            context = {
                n: t
                for n, t in f.context.items()
                if any(m.line - before <= n <= m.last + after for m in kept)
            }
            files.append(
                FileMatches(f.name, f.shown, kept, context, len(kept), f.from_editor, len(kept), len(kept))
            )
    notes = []
    what = " and ".join(
        x for x in (f"in {where}" if where else "", f"within {within}" if within else "") if x
    )
    if dropped:
        notes.append(f"only matches {what}: {plural(dropped, 'other match')} left out")
    if ungrammared and where:
        notes.append(f"{plural(ungrammared, 'file')} without a grammar left out (in= needs a syntax tree)")
    total = sum(f.count for f in files)
    restricted = Outcome(
        files, total, outcome.binary, outcome.detailed, outcome.engine, total, total, outcome.multiline
    )
    return restricted, notes


def file_list(
    outcome: Outcome, pattern: str, output: str, offset: int, limit: int | None, budget: int, notes: list[str]
) -> dict:
    """The files with matches (output=files) or the matches per file (output=count), paged
    by file; over the budget, as many as fit and the offset of the rest."""
    files = outcome.files
    total = len(files)
    fields = {
        "total_matches": outcome.hits,
        "total_lines": outcome.lines,
        "total_files": total,
        "engine": outcome.engine,
        "output": output,
    }
    if offset and offset >= max(total, 1):
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last file: {plural(total, 'file')} match; use offset=0..{max(total - 1, 0)}.",
        )
    head = f"search {shorten(pattern)} · {plural(outcome.lines, 'matching line')} in {plural(total, 'file')}"
    row = (lambda f: f.shown) if output == "files" else (lambda f: f"{f.shown}: {f.lines:,}")
    end = total if limit is None else min(total, offset + limit)

    def lines(n: int) -> list[str]:
        stop = offset + n
        shown = f" · files {offset + 1:,}-{stop:,}" if (offset or stop < total) else ""
        more = [f"more: offset={stop} (files {stop + 1:,}-{total:,})"] if stop < total else []
        return [head + shown, *(f"note: {n}" for n in notes), *more, *(row(f) for f in files[offset:stop])]

    if total == 0:
        return {
            "text": f"{head}" + "".join(f"\nnote: {n}" for n in notes),
            "next": None,
            "files": [],
            **fields,
        }
    n = most_that_fit(end - offset, lines, budget, "file")
    stop = offset + n
    return {
        "text": "\n".join(lines(n)),
        "next": {"offset": stop, **({"limit": limit} if limit else {})} if stop < total else None,
        "files": [{"path": f.shown, "lines": f.lines, "matches": f.hits} for f in files[offset:stop]],
        **fields,
    }
