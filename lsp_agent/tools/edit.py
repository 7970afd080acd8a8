"""edit: replace text in a file, by its exact old text or by a line range from a read,
guarded by the version that read returned; all of a call's edits land together or none
(the shared machinery, and how the new text is committed: editing.py)."""

from __future__ import annotations

from typing import Any

from ..budget import plural
from ..editing import (
    DIAGNOSTICS,
    IF_VERSION,
    PATH,
    Change,
    Source,
    apply,
    check_version,
    commit,
    open_source,
    symbol_spans,
)
from ..errors import Refusal
from ..syntax import enclosing_symbols, language_for
from .registry import BUDGET, MAX_CHARS, Context, tool

CHANGE: dict[str, dict[str, Any]] = {
    "old_text": {
        "type": "string",
        "minLength": 1,
        "description": "The exact text to replace, as read shows it (without line numbers).",
    },
    "new_text": {"type": "string", "description": "The text to put in its place."},
    "occurrence": {
        "type": "integer",
        "minimum": 1,
        "description": "Which occurrence of old_text (1: the first, in the file or in symbol=).",
    },
    "symbol": {
        "type": "string",
        "minLength": 1,
        "description": "Look for old_text only in this symbol (`Model/save`).",
    },
    "start": {
        "type": "integer",
        "minimum": 1,
        "description": "First line to replace (with end=), or the line old_text starts on.",
    },
    "end": {
        "type": "integer",
        "minimum": 0,
        "description": "Last line, inclusive; end=start-1 inserts before start.",
    },
}
SCHEMA = {
    "type": "object",
    "properties": {
        "path": PATH,
        **CHANGE,
        "edits": {
            "type": "array",
            "minItems": 1,
            "maxItems": 100,
            "items": {
                "type": "object",
                "properties": {
                    k: {n: v for n, v in p.items() if n != "description"} for k, p in CHANGE.items()
                },
                "required": ["new_text"],
                "additionalProperties": False,
            },
            "description": "Several edits as above, all or none, each against the file as it was (no overlaps).",
        },
        "if_version": IF_VERSION,
        "diagnostics": DIAGNOSTICS,
        "max_chars": MAX_CHARS,
    },
    "required": ["path"],
    "additionalProperties": False,
}

SUMMARY = (
    "Replace text in a file: old_text (exact, as read shows it, without the `N:` numbers) must occur once, "
    "else the refusal lists each occurrence with its line and symbol (choose with occurrence= or symbol=); "
    "or start=/end= lines with the read's if_version= (a stale one is refused). edits=[…]: all or none. "
    "Use it for a change inside a file you have read; edit_symbol replaces a whole function or class, rename "
    f"renames a symbol everywhere. The answer gives the new version and the diff, within {BUDGET}."
)


@tool("edit", "Edit file", SUMMARY, SCHEMA, idempotent=False, writes=True)
def edit(
    ctx: Context,
    path: str,
    *,
    max_chars: int,
    edits: list[dict] | None = None,
    if_version: str | None = None,
    old_text: str | None = None,
    new_text: str | None = None,
    occurrence: int | None = None,
    symbol: str | None = None,
    start: int | None = None,
    end: int | None = None,
    diagnostics: bool = False,
) -> dict:
    given = {"old_text": old_text, "new_text": new_text, "occurrence": occurrence, "symbol": symbol,
             "start": start, "end": end}  # fmt: skip
    one = {k: v for k, v in given.items() if v is not None}
    if edits and one:
        raise Refusal(
            "bad_arguments", "Give either one edit (old_text/start … new_text) or edits=[…], not both."
        )
    asked = edits or [one]
    if any("new_text" not in e for e in asked):
        raise Refusal("bad_arguments", "Each edit needs new_text (an empty string deletes).")
    source = open_source(ctx, path)
    by_lines = [("start" in e or "end" in e) and not ("old_text" in e and "end" not in e) for e in asked]
    check_version(source, if_version, lines=any(by_lines))
    changes = [
        locate(ctx, source, e, f"edit {n}" if len(asked) > 1 else "the edit") for n, e in enumerate(asked, 1)
    ]
    return commit(ctx, source, apply(source.content, changes), max_chars, what=plural(len(changes), "edit"),
                  diagnostics=diagnostics)  # fmt: skip


def locate(ctx: Context, source: Source, asked: dict, what: str) -> Change:
    """Where one asked edit applies, in the text as it was before any of the call's edits."""
    at_line = "old_text" in asked and "start" in asked and "end" not in asked  # old_text on that line
    lines = ("start" in asked or "end" in asked) and not at_line
    if lines and ("old_text" in asked or "occurrence" in asked or "symbol" in asked):
        raise Refusal(
            "bad_arguments", f"{what}: give old_text (with occurrence/symbol) or start/end, not both."
        )
    if lines:
        return line_change(source, asked, what)
    if "old_text" not in asked:
        raise Refusal(
            "bad_arguments", f"{what}: give old_text (the exact text to replace) or start=/end= lines."
        )
    old, new = asked["old_text"].replace("\r\n", "\n"), asked["new_text"].replace("\r\n", "\n")
    found = occurrences(source, old)
    if "symbol" in asked:  # only inside the symbol (any of those the name path names: overloads)
        spans = symbol_spans(ctx, source, asked["symbol"])
        found = [at for at in found if any(a <= source.line_of(at) and source.line_of(at + len(old) - 1) <= b
                                           for a, b in spans)]  # fmt: skip
    if at_line:  # the text itself is the guard: no version needed
        found = [at for at in found if source.line_of(at) == asked["start"]]
    return Change(*choose(ctx, source, old, found, asked, what), new, what)


def line_change(source: Source, asked: dict, what: str) -> Change:
    total = source.text.line_count
    start = asked.get("start")
    if start is None:
        raise Refusal("bad_arguments", f"{what}: end= needs start=.")
    end = asked.get("end", start)
    if not 1 <= start <= total + 1 or not start - 1 <= end <= total:
        raise Refusal(
            "out_of_range",
            f"{what}: lines {start}-{end} are outside {source.shown}, which has {total} lines "
            f"(start=1..{total + 1}, end=start-1..{total}).",
        )
    new = asked["new_text"].replace("\r\n", "\n")
    lines = new[:-1].split("\n") if new.endswith("\n") else new.split("\n") if new else []
    content = source.content
    if end < total or not content or content.endswith("\n"):  # whole lines, each with its newline
        begin, stop, new = source.offset(start), source.offset(end + 1), "".join(f"{x}\n" for x in lines)
    elif start <= total:  # through the last line, which has no newline: nor will the new last line
        begin, stop, new = source.offset(start), len(content), "\n".join(lines)
        if not lines and start > 1:
            begin -= 1  # the line above becomes the last: its newline goes too
    else:  # after the last line, which has no newline
        begin = stop = len(content)
        new = "".join(f"\n{x}" for x in lines)
    return Change(begin, stop, new, what)


def occurrences(source: Source, old: str) -> list[int]:
    """Where `old` starts in the text, occurrences not overlapping."""
    found, at = [], source.content.find(old)
    while at != -1:
        found.append(at)
        at = source.content.find(old, at + len(old))
    return found


def choose(
    ctx: Context, source: Source, old: str, found: list[int], asked: dict, what: str
) -> tuple[int, int]:
    """The one occurrence the edit means, or a refusal listing them."""
    where = f" in symbol {asked['symbol']}" if "symbol" in asked else ""
    where += f" starting on line {asked['start']}" if "start" in asked else ""
    if not found:
        raise Refusal(
            "not_found", f"{what}: old_text does not occur in {source.shown}{where}{near_miss(source, old)}."
        )
    if "occurrence" in asked:
        k = asked["occurrence"]
        if k > len(found):
            raise Refusal(
                "not_found",
                f"{what}: occurrence={k}, but old_text occurs {plural(len(found), 'time')} in {source.shown}{where}.",
            )
        return found[k - 1], found[k - 1] + len(old)
    if len(found) > 1:
        raise Refusal(
            "ambiguous",
            f"{what}: old_text occurs {plural(len(found), 'time')} in {source.shown}{where}; choose one with "
            f"occurrence=K (or symbol=NAME_PATH, or more surrounding text):\n" + listing(source, found),
            occurrences=[source.line_of(at) for at in found],
        )
    return found[0], found[0] + len(old)


def listing(source: Source, found: list[int], most: int = 30) -> str:
    """Each occurrence: its number, line and enclosing symbol, and the line cut to 80."""
    lines = [source.line_of(at) for at in found]
    labels = enclosing_symbols(source.path, source.text, lines) if language_for(source.path) else {}
    rows = []
    for k, line in enumerate(lines[:most], 1):
        shown = source.text.line(line).strip()
        shown = shown if len(shown) <= 80 else shown[:79] + "…"
        rows.append(f"  occurrence={k}  line {line}  {labels.get(line) or '(top level)'}  {shown}")
    if len(lines) > most:
        rows.append(f"  … and {len(lines) - most} more")
    return "\n".join(rows)


def near_miss(source: Source, old: str) -> str:
    """A hint when old_text occurs but for its whitespace."""
    wanted = [line.strip() for line in old.strip("\n").split("\n")]
    if not wanted or not wanted[0]:
        return ""
    lines = source.content.split("\n")
    for n, line in enumerate(lines):
        if line.strip() == wanted[0] and [x.strip() for x in lines[n : n + len(wanted)]] == wanted:
            return f" (it occurs with other whitespace or indentation at line {n + 1}: copy it exactly from a read)"
    return " (read the lines again: the text may have changed)"
