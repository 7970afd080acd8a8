"""search: ripgrep-style search whose over-budget answers shrink through the shortening chain
(`lsp_agent/search/chain.py`), every shortened line naming its enclosing symbol."""

from __future__ import annotations

from pathlib import Path

from ..errors import Refusal
from ..search import FileMatches, Outcome, Query, Target, run_search
from ..search.chain import Enclosing, Search, Symbols, fit, keep_details, unit
from ..workspace import Workspace
from . import BUDGET, MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "minLength": 1,
            "description": "Regular expression in Rust regex syntax (ripgrep's): no look-around or "
            "backreferences; \\b, \\w, \\d, \\s, (?i), [[:alpha:]], \\p{L} work as in ripgrep.",
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
            "description": "ripgrep glob(s) choosing files: '*.py' includes, '!*_test.py' excludes; "
            "a glob overrides .gitignore and hidden-file rules.",
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
            "description": "Also read binary files (skipped either way) to name those that match; slower.",
        },
        "max_chars": MAX_CHARS,
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Page the full matches: skip this many (in path, then line order). Pages count "
            "matched lines (a line with several matches is one; with multiline, a block of touching lines).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": "Page the full matches: show at most this many (fewer when they do not fit "
            "max_chars; the answer's next gives the rest).",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}

SUMMARY = (
    "Search file contents with ripgrep (Rust regex; .gitignore, hidden and binary files skipped; open "
    "editor buffers searched as their unsaved text; a Python engine where no rg is found). Use it for text: "
    "calls, strings, uses of a name; find_symbol finds where something is defined, symbols outlines a file. "
    "Matches come under each file's path as `LINE[ SYMBOL]:TEXT`, like `rg -n`, the enclosing symbol "
    "(Class/method) named when it changes from the previous match's; context lines are `LINE-TEXT`. "
    f"The answer fits {BUDGET}: when the full matches do not, it shortens stage by stage to one line "
    "per match, lines cut to a stated width (a cut line ends with …), line numbers with symbols, line "
    "numbers per file, counts per file, a summary; the header then names the stage and what it dropped, "
    "and `more:` gives the next calls (offset/limit pages the full matches, paths narrows). "
    'Example: {"pattern": "def save", "paths": ["src/models"], "context_after": 2}.'
)


def targets_of(ws: Workspace, paths: list[str] | None) -> tuple[list[Target], list[str]]:
    """The searched paths grouped by root, and a note for each path left out."""
    if not paths:
        return [Target(root, [""]) for root in ws.roots], []
    chosen: dict[Path, list[str]] = {}
    left_out: list[str] = []
    for raw in paths:
        try:
            real = ws.resolve(raw)
        except Refusal as refusal:
            left_out.append(refusal.message)
            continue
        if not real.exists():
            left_out.append(f"{raw} does not exist.")
            continue
        root = ws.root_of(real)
        assert root is not None  # resolve() keeps paths inside the roots
        rel = real.relative_to(root).as_posix()
        chosen.setdefault(root, []).append("" if rel == "." else rel)
    targets = []
    for root, rels in chosen.items():
        # all given to rg, as a user would: a path inside another is searched as named (an ignored
        # folder named explicitly is searched); a file reached twice is reported once
        targets.append(Target(root, sorted(set(rels))))
    if not targets:
        raise Refusal(
            "no_paths",
            "None of the paths is inside the workspace: "
            + " ".join(left_out)
            + " Give paths relative to the workspace root.",
        )
    return targets, left_out


def symbol_provider(ws: Workspace) -> Symbols:
    """The innermost symbol around each of a file's match lines, and whether the line is the
    one naming it; None for a language without a grammar."""
    from ..syntax import enclosing_symbols, language_for, outline, walk

    def symbols(file: FileMatches) -> dict[int, Enclosing] | None:
        if language_for(file.path) is None:
            return None
        try:
            text = ws.text(file.path)
        except Refusal:
            return None
        names = enclosing_symbols(file.path, text, [m.line for m in file.matches])
        named_on = {s.selection[0] + 1: s.name_path for s in walk(outline(file.path, text))}
        return {line: (name, name is not None and named_on.get(line) == name) for line, name in names.items()}

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
) -> dict:
    budget = max_chars
    globs = tuple([glob] if isinstance(glob, str) else glob or [])
    targets, left_out = targets_of(ctx.workspace, paths)
    query = Query(
        pattern, fixed_strings, ignore_case, multiline, globs, context_before, context_after, count_binary
    )
    paged = offset > 0 or limit is not None
    outcome = run_search(
        ctx.workspace,
        query,
        targets,
        keep_details=None if paged else keep_details(budget),
        cancelled=ctx.cancel_event.is_set,
        progress=lambda message: ctx.progress(message),
    )
    if offset and offset >= outcome.total:
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last match: the search has {outcome.total:,} {unit(outcome)}; "
            f"use offset=0..{max(outcome.total - 1, 0)}.",
            total_matches=outcome.hits,
            total_lines=outcome.lines,
        )
    s = Search(outcome, symbol_provider(ctx.workspace), context_before, context_after, offset, limit)
    s.extra_notes = [f"left out: {m}" for m in left_out]
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
