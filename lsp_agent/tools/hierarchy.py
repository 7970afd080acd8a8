"""implementations, callers, callees: the language server's answers (textDocument/
implementation, call hierarchy), budgeted and paged like references; where no server
answers, the syntax source's nearest equivalent, labelled as by name.

By name: implementations are the types inheriting from the name (find_symbol extends=) and,
for a method `Owner/name`, those types' definitions of it; callers are the functions whose
bodies call the name (depth 1); callees are the names a function's body calls.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from ..budget import cut_line, first_stage, largest_fit, plural, size
from ..errors import Cancelled, Refusal
from ..semantic import Missing, RequestCancelled, Unavailable
from ..syntax import enclosing_symbols, language_for, outline, walk
from ..syntax.position import use_at
from ..syntax.references import classify
from .precise import PRECISION, Confirmed, confirmed, semantic, source_notes
from .registry import MAX_CHARS, Context, run, tool

MAX_DEPTH = 3
MAX_ENTRIES = 2000
MIN_WIDTH = 16
STAGES = ("one line per entry", "lines cut to {width} characters", "counts per file", "summary")
CALL = re.compile(r"([A-Za-z_$][\w$]*)\s*\(")


@dataclass(frozen=True)
class Entry:
    path: str  # as shown
    line: int
    what: str  # "class Circle", "caller order_detail", "calls save"
    text: str  # the line, stripped
    depth: int = 1


SHORT_POSITION = {
    "path": {"type": "string", "description": "With line (and column): a use to start from."},
    "line": {"type": "integer", "minimum": 1, "description": "1-based."},
    "column": {"type": "integer", "minimum": 1, "default": 1, "description": "1-based."},
}


def schema(depth: bool) -> dict:
    properties = {
        "name": {"type": "string", "minLength": 1, "description": "`Shape`, `Model/save`."},
        **SHORT_POSITION,
        "paths": {"type": "array", "items": {"type": "string"}, "description": "By name: only here."},
        "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "Page: skip this many."},
        "limit": {"type": "integer", "minimum": 1, "description": "Page: at most this many."},
        "precision": {"enum": PRECISION["enum"], "description": "syntax: by name only."},
        "max_chars": MAX_CHARS,
    }  # fmt: skip
    if depth:
        properties["depth"] = {
            "type": "integer", "minimum": 1, "maximum": MAX_DEPTH, "default": 1,
            "description": "Levels (1: direct).",
        }  # fmt: skip
    return {"type": "object", "properties": properties, "additionalProperties": False}


def start(ctx: Context, name: str | None, path: str | None, line: int | None, column: int):
    """(identifier, owner, where to ask the server, the question as shown)."""
    if path is not None and line is not None:
        at = use_at(ctx.workspace, path, line, column)
        return at.name, None, [(at.path, at.line, at.column + 1)], f"{at.name} (from {path}:{line})"
    if name is None:
        raise Refusal(
            "no_name", "Give name= (`Shape`, `Model/save`), or path=, line= (and column=) of a use."
        )
    owner, _, identifier = name.strip("/").replace(".", "/").rpartition("/")
    # the definitions by name, as the definition tool finds them (nearest, non-test first)
    found = run(ctx, "definition", {"name": name, "body": False, "precision": "syntax", "max_chars": 10**6})
    starts = [definition_start(ctx, d, identifier) for d in found.get("definitions", [])]
    return identifier, owner or None, [s for s in starts if s is not None], name


def definition_start(ctx: Context, found: dict, name: str) -> tuple[Path, int, int] | None:
    """Where the name of a definition (from definition's structured answer) is."""
    path = ctx.workspace.resolve(found["path"])
    match = re.search(
        rf"(?<![\w$]){re.escape(name)}(?![\w$])", ctx.workspace.text(path).line(found["name_line"])
    )
    return (path, found["name_line"], match.start() + 1) if match else None


def entry_at(ctx: Context, path: Path, line: int, what: str, depth: int = 1) -> Entry:
    ws = ctx.workspace
    return Entry(ws.display(path), line, what, ws.text(path).line(line).strip(), depth)


def enclosing(ctx: Context, path: Path, line: int) -> str:
    text = ctx.workspace.text(path)
    return (enclosing_symbols(path, text, [line]) if language_for(path) else {}).get(line) or "<module>"


# -- the syntax source -------------------------------------------------------------------------


def implementations_by_name(ctx: Context, identifier: str, owner: str | None, paths) -> list[Entry]:
    """The types inheriting from the name, as find_symbol extends= finds them; for
    `Owner/method`, those types' own definitions of the method."""
    arguments = {"extends": owner or identifier, "max_chars": 10**6, **({"path": paths[0]} if paths else {})}
    found = run(ctx, "find_symbol", arguments).get("matches", [])
    entries = []
    for sub in found:
        path = ctx.workspace.resolve(sub["path"])
        if owner is None:
            entries.append(entry_at(ctx, path, sub["start_line"], f"{sub['kind']} {sub['name_path']}"))
            continue
        for child in walk(outline(path, ctx.workspace.text(path))):
            if child.name == identifier and child.name_path == f"{sub['name_path']}/{identifier}":
                entries.append(entry_at(ctx, path, child.start_line, f"{child.kind} {child.name_path}"))
    return entries


def callers_by_name(ctx: Context, identifier: str, owner: str | None, paths) -> list[Entry]:
    """The calls of the name, as references finds them by name, each with its enclosing symbol."""
    name = f"{owner}/{identifier}" if owner else identifier
    arguments = {"name": name, "roles": ["call"], "precision": "syntax", "max_chars": 10**6}
    refs = run(ctx, "references", {**arguments, **({"paths": paths} if paths else {})}).get("references", [])
    return [Entry(r["path"], r["line"], f"caller {r['symbol'] or '<module>'}", line_of(ctx, r)) for r in refs]


def line_of(ctx: Context, found: dict) -> str:
    return ctx.workspace.text(ctx.workspace.resolve(found["path"])).line(found["line"]).strip()


def callees_by_name(ctx: Context, starts: list[tuple[Path, int, int]]) -> list[Entry]:
    """The names called in the body of the first definition: each `name(` the syntax
    tree says is a call."""
    if not starts:
        return []
    path, line, _ = starts[0]
    text = ctx.workspace.text(path)
    body = next((s for s in walk(outline(path, text)) if s.selection[0] == line - 1), None)
    last = body.end_line if body is not None else line
    entries = []
    for row in range(line + 1 if body is not None else line, last + 1):
        for name in dict.fromkeys(m.group(1) for m in CALL.finditer(text.line(row))):
            if any(u.role == "call" for u in classify(path, text, name, [row])):
                entries.append(entry_at(ctx, path, row, f"calls {name}"))
    return entries


# -- the semantic source -----------------------------------------------------------------------


def implementations_typed(ctx: Context, starts, precision):
    found = confirmed(ctx, "implementation", starts, precision)
    entries = [
        entry_at(ctx, loc.path, loc.line, f"in {enclosing(ctx, loc.path, loc.line)}")
        for loc in found.locations
    ]
    return entries, found


def calls_typed(ctx: Context, starts, direction: str, depth: int, precision):
    """Callers or callees from the call hierarchy; (entries, Confirmed)."""

    if not starts:
        return [], Confirmed(unavailable="no definition to ask the server about", missing=True)
    source = semantic(ctx, precision)
    path, line, column = starts[0]
    try:
        answer, calls = source.calls(path, line, column, direction, depth, MAX_ENTRIES)
    except RequestCancelled:
        raise Cancelled() from None
    except Unavailable as exc:
        why = str(exc) or "the server did not answer"
        return [], Confirmed(unavailable=why, missing=isinstance(exc, Missing), of=len(starts))
    typed = Confirmed(
        answer.server, [c.at for c in calls], answer.dropped, answer.invalid, answer.partial, 1, len(starts)
    )
    entries = []
    for call in calls:
        if direction == "incoming":
            for site in sorted(set(call.sites)) or [call.at]:
                what = f"caller {enclosing(ctx, site.path, site.line)}"
                entries.append(entry_at(ctx, site.path, site.line, what, call.depth))
        else:
            defined = f"{ctx.workspace.display(call.at.path)}:{call.at.line}"
            for where, row in sorted({(s.path, s.line) for s in call.sites}) or [
                (call.at.path, call.at.line)
            ]:
                entries.append(entry_at(ctx, where, row, f"calls {call.name} ({defined})", call.depth))
    return entries, typed


# -- the answer --------------------------------------------------------------------------------


def entries_word(n: int) -> str:
    return f"{n:,} {'entry' if n == 1 else 'entries'}"


def lines_of(entries: list[Entry], width: int | None = None) -> list[str]:
    out: list[str] = []
    last = None
    for e in entries:
        if e.path != last:
            out.append(e.path)
            last = e.path
        indent = "  " * (e.depth - 1)
        out.append(f"{indent}{e.line} {e.what}: {cut_line(e.text, width)}")
    return out


def counts_of(entries: list[Entry]) -> list[str]:
    files = Counter(e.path for e in entries)
    return [f"{path}: {entries_word(n)}" for path, n in files.items()]


def summary_of(entries: list[Entry]) -> list[str]:
    folders = Counter(e.path.rsplit("/", 1)[0] if "/" in e.path else "." for e in entries)
    top = "; ".join(f"{folder} {n:,}" for folder, n in folders.most_common(8))
    return [f"by folder: {top}" + (f"; {len(folders) - 8:,} more" if len(folders) > 8 else "")]


def answer(
    tool_name: str,
    asked: str,
    entries: list[Entry],
    notes: list[str],
    offset: int,
    limit,
    budget: int,
    fields: dict,
) -> dict:
    total = len(entries)
    if offset and offset >= max(total, 1):
        raise Refusal("out_of_range", f"offset={offset} is past the last entry: there are {total:,}.")
    end = total if limit is None else min(total, offset + limit)
    page = entries[offset:end]
    files = len({e.path for e in entries})
    fields = {**fields, "total": total, "entries": [
        {"path": e.path, "line": e.line, "what": e.what, "depth": e.depth, "source": fields["source"]} for e in page[:500]
    ]}  # fmt: skip
    if total == 0:
        return {
            "text": f"{tool_name} {asked} · none found" + "".join(f"\nnote: {n}" for n in notes),
            "next": None,
            **fields,
        }

    def render(stop: int, stage: str, body: list[str], more: str | None) -> list[str]:
        shown = f", showing {offset + 1:,}-{stop:,}" if (offset or stop < total) else ""
        head = (
            f"{tool_name} {asked} · {entries_word(total)} in {plural(files, 'file')}{shown} · stage: {stage}"
        )
        return [head, *(f"note: {n}" for n in notes), *([more] if more else []), *body]

    def fits_page(n: int) -> bool:
        more = f"more: the next page with offset={total} limit={total}"
        return size(render(offset + n, STAGES[0], lines_of(entries[offset : offset + n]), more)) <= budget

    n = largest_fit(0, len(page), lambda k: k == 0 or fits_page(k))
    following = {"offset": offset + n, "limit": n} if n > 0 and offset + n < total else None
    short_more = f"more: one line per entry with offset={offset} limit={max(n, 1)}"

    def full() -> list[str] | None:
        if n == 0:
            return None
        more = f"more: the next page with offset={offset + n} limit={n}" if following else None
        return render(offset + n, STAGES[0], lines_of(entries[offset : offset + n]), more)

    def cut_stage() -> list[str]:
        return render(end, STAGES[1].format(width=MIN_WIDTH), lines_of(page, MIN_WIDTH), short_more)

    stages = [full, cut_stage, lambda: render(end, STAGES[2], counts_of(page), short_more),
              lambda: render(end, STAGES[3], summary_of(page), short_more)]  # fmt: skip
    index, lines = first_stage(stages, budget)
    return {"text": "\n".join(lines), "stage": lines[0].rsplit("stage: ", 1)[1],
            "next": following if index == 0 else {"offset": offset, "limit": max(n, 1)}, **fields}  # fmt: skip


def labelled(typed, by_name: str) -> tuple[str, list[str]]:
    """(source, notes) of an answer from the server, or from the syntax source and why."""
    if typed.answered:
        return typed.server, [f"by type, from {typed.server}", *source_notes(typed, "definitions")]
    return "syntax", [
        f"by name, not by type ({by_name}): another thing of this name is listed too",
        *source_notes(typed, ""),
    ]


IMPLEMENTATIONS = (
    "Implementations of an interface, abstract method or trait (by name or from a use), from the "
    "language's server; else by name: the types inheriting from it. Use it to find the code that runs "
    "for an interface's method."
)


@tool("implementations", "Find implementations", IMPLEMENTATIONS, schema(depth=False))
def implementations(ctx: Context, *, name=None, path=None, line=None, column=1, paths=None, offset=0,
                    limit=None, precision=None, max_chars: int) -> dict:  # fmt: skip
    identifier, owner, starts, asked = start(ctx, name, path, line, column)
    entries, typed = implementations_typed(ctx, starts, precision)
    source, notes = labelled(typed, "subclasses found by their bases")
    if not typed.answered or (not entries and not typed.dropped):
        entries = implementations_by_name(ctx, identifier, owner, paths)
        if typed.answered:  # the server found none: what the syntax shows, as guesses
            source, notes = (
                "syntax",
                [f"{typed.server} found none; by name (subclasses by their bases): guesses"],
            )
    return answer(
        "implementations",
        asked,
        entries,
        notes,
        offset,
        limit,
        max_chars,
        {"name": identifier, "source": source, **typed.fields()},
    )


CALLERS = (
    "Who calls a function (by name or from a use): each call site, `depth` levels up, from the "
    "language's server; else by name (depth 1). Use it to see what a change to a function affects."
)
CALLEES = (
    "What a function calls (by name or from a use), `depth` levels down, from the language's server; "
    "else by name: the names its body calls. Use it to learn what a function depends on."
)


@tool("callers", "Find callers", CALLERS, schema(depth=True))
def callers(ctx: Context, *, name=None, path=None, line=None, column=1, paths=None, offset=0, limit=None,
            depth=1, precision=None, max_chars: int) -> dict:  # fmt: skip
    identifier, owner, starts, asked = start(ctx, name, path, line, column)
    entries, typed = calls_typed(ctx, starts, "incoming", depth, precision)
    source, notes = labelled(typed, "the enclosing symbols of its calls, depth 1")
    if not typed.answered:
        entries = callers_by_name(ctx, identifier, owner, paths)
    return answer(
        "callers",
        asked,
        entries,
        notes,
        offset,
        limit,
        max_chars,
        {"name": identifier, "source": source, **typed.fields()},
    )


@tool("callees", "Find callees", CALLEES, schema(depth=True))
def callees(ctx: Context, *, name=None, path=None, line=None, column=1, paths=None, offset=0, limit=None,
            depth=1, precision=None, max_chars: int) -> dict:  # fmt: skip
    identifier, _, starts, asked = start(ctx, name, path, line, column)
    entries, typed = calls_typed(ctx, starts, "outgoing", depth, precision)
    source, notes = labelled(typed, "the names its body calls, depth 1")
    if not typed.answered:
        entries = callees_by_name(ctx, starts)
    return answer(
        "callees",
        asked,
        entries,
        notes,
        offset,
        limit,
        max_chars,
        {"name": identifier, "source": source, **typed.fields()},
    )
