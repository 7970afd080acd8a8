"""edit_symbol: replace a symbol's whole text, or insert code before or after it, by name
path; the new code takes the indentation of its place. What a symbol's text is: its outline
range (decorators included) and the doc comments and attributes right above it (`/** … */`,
`///`, `#[…]`, `[…]`), which some grammars leave outside the definition's node."""

from __future__ import annotations

import re
import textwrap

from ..budget import Writer, plural
from ..editing import (
    DIAGNOSTICS,
    IF_VERSION,
    PATH,
    Change,
    Source,
    apply,
    check_version,
    commit,
    one_symbol,
    open_source,
)
from ..syntax import outline, walk
from ..writer import HISTORY
from .registry import BUDGET, MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": PATH,
        "symbol": {
            "type": "string",
            "minLength": 1,
            "description": "The symbol, by name path as symbols and find_symbol show it (`Model/save`).",
        },
        "action": {
            "enum": ["replace", "insert_before", "insert_after"],
            "default": "replace",
            "description": "replace its whole text, or insert new_text above or below it.",
        },
        "new_text": {
            "type": "string",
            "description": "The code, indented as you like: it is re-indented to the symbol's place.",
        },
        "occurrence": {
            "type": "integer",
            "minimum": 1,
            "description": "Which of several symbols with this name path (1 = the first in the file).",
        },
        "if_version": IF_VERSION,
        "diagnostics": DIAGNOSTICS,
        "max_chars": MAX_CHARS,
    },
    "required": ["path", "symbol", "new_text"],
    "additionalProperties": False,
}

SUMMARY = (
    "Replace a function, method or class whole (decorators, attributes and the doc comment above it "
    "included), or insert new_text before or after it (action=insert_before|insert_after), by name path "
    "(`Model/save`), re-indented to its place. Use it to rewrite or add a whole definition without copying "
    f"its old text; edit changes a part of one. The answer shows the new lines and version, within {BUDGET}."
)

# Lines above a definition that belong to it: doc comments and attributes (a decorator the
# grammar already includes is inside the range).
BELONGS_ABOVE = re.compile(r"\s*(/\*\*|\*|\*/|///|//!|#\[|#!\[|\[[A-Z]\w*|@[A-Za-z_])")


@tool("edit_symbol", "Edit symbol", SUMMARY, SCHEMA, idempotent=False, writes=True)
def edit_symbol(
    ctx: Context,
    path: str,
    symbol: str,
    new_text: str,
    *,
    max_chars: int,
    action: str = "replace",
    occurrence: int | None = None,
    if_version: str | None = None,
    diagnostics: bool = False,
) -> dict:
    source = open_source(ctx, path)
    check_version(source, if_version, lines=False)
    # before or after an overloaded definition: before the first or after the last overload
    group = {"insert_before": "first", "insert_after": "last"}.get(action)
    found = one_symbol(ctx, source, symbol, occurrence, group=group)
    first, last = whole_text(source, found), found.end_line
    indent = indentation(source.text.line(found.start_line))
    code = reindent(new_text.replace("\r\n", "\n"), indent)
    if action == "replace":
        change = Change(source.offset(first), source.offset(last + 1), code, "the edit")
        shows = (first, first + code.count("\n") - 1)
        what = f"replaced {found.kind} {found.name_path} (lines {first}-{last})"
    else:
        gap = "\n" * blank_lines_around(source, found)
        if action == "insert_before":
            change = Change(source.offset(first), source.offset(first), code + gap, "the edit")
            shows = (first, first + code.count("\n") - 1)
        else:
            change = Change(source.offset(last + 1), source.offset(last + 1), gap + code, "the edit")
            shows = (last + 1 + len(gap), last + len(gap) + code.count("\n"))
        what = f"inserted {action.removeprefix('insert_')} {found.kind} {found.name_path}"
    content = apply(source.content, [with_newline(source, change)])
    result = commit(ctx, source, content, max_chars, what=what, diagnostics=diagnostics)
    return shown_lines(ctx, source, result, shows, max_chars)


def with_newline(source: Source, change: Change) -> Change:
    """A change at the end of a file without a final newline keeps it without one: code
    inserted there goes after a newline, code replacing the last line ends without one."""
    content = source.content
    if change.end < len(content) or not content or content.endswith("\n"):
        return change
    if change.start == change.end:
        return Change(change.start, change.end, "\n" + change.new.rstrip("\n"), change.what)
    return Change(change.start, change.end, change.new.rstrip("\n"), change.what)


def whole_text(source: Source, symbol) -> int:
    """The first line of a symbol's text: the doc comments and attributes right above it,
    none of them part of another symbol (a decorated field above a method)."""
    others: set[int] = set()
    for other in walk(outline(source.path, source.text)):
        if not other.start_line <= symbol.start_line <= symbol.end_line <= other.end_line:  # not an ancestor
            others.update(range(other.start_line, other.end_line + 1))
    first = symbol.start_line
    while first > 1 and first - 1 not in others and BELONGS_ABOVE.match(source.text.line(first - 1)):
        first -= 1
    return first


def indentation(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def reindent(code: str, indent: str) -> str:
    """`code` dedented, each non-empty line then given `indent`, ending in one newline."""
    body = textwrap.dedent(code.strip("\n"))
    return "".join(f"{indent}{line}\n" if line.strip() else "\n" for line in body.split("\n"))


def blank_lines_around(source: Source, symbol) -> int:
    """How many blank lines separate the symbol from its siblings (the one before it, else
    the one after it; one when it has none)."""
    symbols = outline(source.path, source.text)
    siblings = symbols
    for other in walk(symbols):
        if symbol in other.children or any(c.start_line == symbol.start_line for c in other.children):
            siblings = other.children
    before = [s for s in siblings if s.end_line < symbol.start_line]
    after = [s for s in siblings if s.start_line > symbol.end_line]
    if before:
        span = range(before[-1].end_line + 1, symbol.start_line)
    elif after:
        span = range(symbol.end_line + 1, after[0].start_line)
    else:
        return 1
    return max(1, sum(1 for n in span if not source.text.line(n).strip()))


def shown_lines(ctx: Context, source: Source, result: dict, shows: tuple[int, int], max_chars: int) -> dict:
    """The commit's answer with the diff replaced by the new lines, numbered as reads show them."""
    if "error" in result or result.get("applied_by") is None:
        return result
    new = ctx.workspace.text(source.path)
    HISTORY.remember(source.path, new)
    first, last = shows[0], min(shows[1], new.line_count)
    head, *rest = result["text"].split("\n")
    out = Writer(max_chars)
    out.add(head)
    for said in (x for x in rest if x.startswith(("diagnostics", "  "))):  # the diff's lines go
        out.add(said)
    for n in range(first, last + 1):
        line = f"{n}:{new.line(n)}"
        trailer = f"[{plural(last - n + 1, 'more new line')}: read start={n}]"
        if not out.room_for(line) or (n < last and not out.room_for(f"{line}\n{trailer}")):
            out.add(trailer if out.room_for(trailer) else "[cut]")
            last = n - 1
            break
        out.add(line)
    text = out.text()
    return {**result, "text": text, "shown": {"start": first, "end": last}}
