"""references: every use of a name across the workspace, each with its role from the syntax
tree and its enclosing symbol — definitions first, then code, then comments and strings.

Matching is by name: ripgrep finds the lines holding the name as a whole word, the syntax
tree says what each use is. A name path with an owner (`Model/full_clean`) or a position on
an attribute narrows to what the syntax shows of a member: `obj.full_clean()` is kept, a
bare `full_clean` (a local of that name) is not. Over the budget the answer shortens like
search: one line per use, lines cut to a width, line numbers with roles, counts per file, a
summary; `offset`/`limit` page the one-line stage.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..budget import (
    TOP_LEVEL,
    Stage,
    cut_line,
    first_stage,
    page_end,
    page_size,
    per_file,
    plural,
    showing,
    top_counts,
    widest_cut,
)
from ..errors import Refusal
from ..search import Query, run_search, targets_of
from ..syntax import enclosing_symbols, language_for, name_path_matcher, outline, walk
from ..syntax.position import use_at
from ..syntax.references import CODE_ROLES, ROLES, TEXT_ROLES, Use, classify
from ..workspace import Workspace
from .registry import MAX_CHARS, POSITION, Context, tool

# Languages where a method or field is only ever reached through a receiver (`self.x`,
# `this.x`, `s.x`): there a bare name is not the member. (In Java, C++ or C# a method calls
# its siblings by their bare name.)
RECEIVER_LANGUAGES = frozenset({"python", "javascript", "typescript", "tsx", "go", "rust"})
MEMBER_KINDS = frozenset({"method", "property", "constructor"})
SECTIONS = (
    ("definitions", {"definition"}),
    ("code", set(CODE_ROLES)),
    ("comments and strings", set(TEXT_ROLES)),
)
STAGES = (
    "one line per use",
    "lines cut to {width} characters",
    "line numbers with roles",
    "counts per file",
    "summary",
)

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "The name, or a name path whose owner narrows to members: `full_clean`, `Model/full_clean`.",
        },
        **POSITION,
        "roles": {
            "type": "array",
            "items": {"enum": list(ROLES)},
            "description": "Only uses with these roles ('text': files without a grammar).",
        },
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Look only under these files or folders (default: the whole workspace).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Page: skip this many uses.",
        },
        "limit": {"type": "integer", "minimum": 1, "description": "Page: show at most this many uses."},
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "Every use of a name across the workspace (by `name`, or from a use at path+line+column), each "
    "with file, line, enclosing symbol and role from the syntax tree: definition, import, inheritance, "
    "call, attribute, type, use, comment, string. Definitions first, then code, then comments and "
    "strings; `roles` filters. Matching is by name, not by type. Over the budget it shortens like "
    "search and says how to page (offset/limit)."
)


@dataclass(frozen=True, slots=True)
class Reference:
    path: str  # as shown
    line: int
    column: int
    role: str
    symbol: str | None  # enclosing name path; None outside any definition (or no grammar)
    text: str  # the line, stripped


def last_segment(name: str) -> tuple[str, str | None]:
    """(identifier, owner name path or None) of `Model/full_clean` or `Model.full_clean`."""
    body = name.strip("/")
    sep = "/" if "/" in body else "." if "." in body.strip(".") else None
    if sep is None:
        return body, None
    owner, _, last = body.rpartition(sep)
    return last, owner


def name_at(ws: Workspace, path: str, line: int, column: int) -> tuple[str, bool]:
    """The name at a position and whether it is a member there (reached through a dot or
    defined as a method)."""
    at = use_at(ws, path, line, column)
    uses = [u for u in classify(at.path, at.text, at.name, [line]) if u.column == at.column + 1]
    member = bool(uses) and uses[0].qualified and uses[0].role != "definition"
    if uses and uses[0].role == "definition":
        kinds = {
            s.kind for s in walk(outline(at.path, at.text)) if s.name == at.name and s.start_line <= line
        }
        member = bool(kinds) and kinds <= MEMBER_KINDS
    return at.name, member


def collect(ctx: Context, name: str, owner: str | None, member: bool, paths: list[str] | None):
    """(references in answer order, bare uses left out, other definitions left out)."""
    ws = ctx.workspace
    targets, _ = targets_of(ws, paths)
    # ripgrep finds the lines; classify then keeps the whole-word uses (`$` counts as a letter)
    pattern = rf"\b{re.escape(name)}\b" if re.fullmatch(r"\w+", name) else re.escape(name)
    outcome = run_search(
        ws,
        Query(pattern),
        targets,
        cancelled=ctx.cancel_event.is_set,
        progress=lambda message: ctx.progress(message),
    )
    owned = name_path_matcher(f"{owner}/{name}") if owner else None
    refs: list[Reference] = []
    bare = other = 0
    for file in outcome.files:
        ctx.check_cancelled()
        try:
            text = ws.text(file.path)
        except Refusal:
            continue
        lines = [m.line for m in file.matches]
        uses: list[Use] = classify(file.path, text, name, lines)
        symbols = enclosing_symbols(file.path, text, lines) if language_for(file.path) else {}
        receiver = language_for(file.path) in RECEIVER_LANGUAGES
        for use in uses:
            symbol = symbols.get(use.line)
            if use.role == "definition" and owned is not None:
                defined = symbol or ""
                if not owned(defined if defined.endswith(name) else f"{defined}/{name}"):
                    other += 1
                    continue
            if member and receiver and not use.qualified and use.role in ("call", "use"):
                bare += 1
                continue
            refs.append(
                Reference(file.shown, use.line, use.column, use.role, symbol, text.line(use.line).strip())
            )
    order = {role: n for n, role in enumerate(ROLES)}
    section = {role: n for n, (_, roles) in enumerate(SECTIONS) for role in roles}
    refs.sort(key=lambda r: (section[r.role], r.path, r.line, r.column, order[r.role]))
    return refs, bare, other


def label(ref: Reference) -> str:
    return ref.symbol or (TOP_LEVEL if language_for(ref.path) else "")


def sections(refs: list[Reference]):
    for title, roles in SECTIONS:
        chosen = [r for r in refs if r.role in roles]
        if chosen:
            yield title, chosen


def by_file(refs: list[Reference]) -> dict[str, list[Reference]]:
    files: dict[str, list[Reference]] = {}
    for r in refs:
        files.setdefault(r.path, []).append(r)
    return files


def one_line(refs: list[Reference], width: int | None = None) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        for path, file_refs in by_file(chosen).items():
            out.append(path)
            for r in file_refs:
                where = f" {label(r)}" if label(r) else ""
                out.append(f"{r.line} {r.role}{where}: {cut_line(r.text, width)}")
    return out


def numbers(refs: list[Reference]) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        for path, file_refs in by_file(chosen).items():
            out.append(
                path
                + ": "
                + ", ".join(f"{r.line} {r.role}" + (f" {label(r)}" if label(r) else "") for r in file_refs)
            )
    return out


def role_counts(refs: list[Reference]) -> str:
    counts = Counter(r.role for r in refs)
    return ", ".join(f"{counts[role]} {role}" for role in ROLES if counts[role])


def counts(refs: list[Reference]) -> list[str]:
    out = []
    for title, chosen in sections(refs):
        out.append(f"── {title}")
        out += per_file({path: role_counts(file_refs) for path, file_refs in by_file(chosen).items()})
    return out


def summary(refs: list[Reference]) -> list[str]:
    folders = Counter(r.path.rsplit("/", 1)[0] if "/" in r.path else "." for r in refs)
    return [f"by role: {role_counts(refs)}", f"by folder: {top_counts(folders)}"]


def asked_for(ctx: Context, name: str | None, path: str | None, line: int | None, column: int):
    """(identifier, owner or None, whether it is a member, the name as the header shows it)."""
    if name is not None:
        identifier, owner = last_segment(name)
        return identifier, owner, owner is not None, name
    if path is not None and line is not None:
        identifier, member = name_at(ctx.workspace, path, line, column)
        return identifier, None, member, f"{identifier} (from {path}:{line})"
    raise Refusal(
        "no_name",
        "Give name= (`full_clean`, `Model/full_clean`), or path=, line= (and column=) of a use.",
    )


def notes_of(identifier: str, owner: str | None, bare: int, other: int, roles: list[str] | None, hidden: int):
    notes = ["matched by name, not by type: a use of another thing with this name is listed too"]
    if bare:
        notes.append(
            f"left out: {plural(bare, 'bare use')} of a local `{identifier}` (a member is reached through a receiver: obj.{identifier})"
        )
    if other:
        notes.append(f"left out: {plural(other, 'definition')} of `{identifier}` outside {owner}")
    if roles:
        notes.append(f"roles: {', '.join(roles)} ({plural(hidden, 'other use')} not shown)")
    return notes


@dataclass
class Uses:
    """The ladder of a references answer: the chosen uses, the page asked for, its notes."""

    asked: str
    chosen: list[Reference]
    notes: list[str]
    offset: int
    end: int
    budget: int

    @property
    def page(self) -> list[Reference]:
        return self.chosen[self.offset : self.end]

    def render(self, start: int, stop: int, stage: str, body: list[str], more: str | None) -> list[str]:
        total, files = len(self.chosen), len({r.path for r in self.chosen})
        head = f"references {self.asked} · {plural(total, 'use')} in {plural(files, 'file')}{showing(start, stop, total)} · stage: {stage}"
        return [head, *(f"note: {n}" for n in self.notes), *([more] if more else []), *body]

    def page_size(self, start: int, most: int) -> int:
        """The most uses from `start` whose one-line page fits, its "more" line included."""
        more = f"more: the next page with offset={len(self.chosen)} limit={len(self.chosen)}"

        def draw(n: int) -> list[str]:
            return self.render(start, start + n, STAGES[0], one_line(self.chosen[start : start + n]), more)

        return page_size(draw, most, self.budget)

    def next_pages(self) -> tuple[dict | None, dict]:
        """(the page after this one, this page as one line per use)."""
        after = {"offset": self.end, "limit": self.page_size(self.end, len(self.chosen) - self.end)}
        return (after if self.end < len(self.chosen) else None), {
            "offset": self.offset,
            "limit": self.page_size(self.offset, len(self.page)),
        }

    def stages(self, after: dict | None, this: dict) -> list[Stage]:
        page, offset, end = self.page, self.offset, self.end

        def full() -> list[str]:
            more = f"more: the next page with offset={end} limit={after['limit']}" if after else None
            return self.render(offset, end, STAGES[0], one_line(page), more)

        def shortened(stage: str, body: list[str]) -> list[str]:
            more = f"more: one line per use with offset={offset} limit={this['limit']}"
            more += f"; after this page, offset={end}" if end < len(self.chosen) else ""
            return self.render(offset, end, stage, body, more)

        def cut_stage() -> list[str] | None:
            def draw(width: int) -> list[str]:
                return shortened(STAGES[1].format(width=width), one_line(page, width))

            width = widest_cut(draw, max(len(r.text) for r in page), self.budget)
            return None if width is None else draw(width)

        return [
            full,
            cut_stage,
            lambda: shortened(STAGES[2], numbers(page)),
            lambda: shortened(STAGES[3], counts(page)),
            lambda: shortened(STAGES[4], summary(page)),
        ]


@tool("references", "Find references", SUMMARY, SCHEMA)
def references(
    ctx: Context,
    *,
    name: str | None = None,
    path: str | None = None,
    line: int | None = None,
    column: int = 1,
    roles: list[str] | None = None,
    paths: list[str] | None = None,
    offset: int = 0,
    limit: int | None = None,
    max_chars: int,
) -> dict:
    identifier, owner, member, asked = asked_for(ctx, name, path, line, column)
    found, bare, other = collect(ctx, identifier, owner, member, paths)
    chosen = [r for r in found if roles is None or r.role in roles]
    end = page_end(offset, limit, len(chosen), "use")
    notes = notes_of(identifier, owner, bare, other, roles, len(found) - len(chosen))
    fields = {
        "name": identifier,
        "total": len(chosen),
        "files": len({r.path for r in chosen}),
        "by_role": dict(Counter(r.role for r in chosen)),
        "references": [
            {"path": r.path, "line": r.line, "column": r.column, "role": r.role, "symbol": r.symbol}
            for r in chosen[offset:end][:500]
        ],
    }
    if not chosen:
        text = f"references {asked} · no uses found" + "".join(f"\nnote: {n}" for n in notes)
        return {"text": text, "stage": STAGES[0], "next": None, **fields}
    uses = Uses(asked, chosen, notes, offset, end, max_chars)
    after, this = uses.next_pages()
    index, lines = first_stage(uses.stages(after, this), max_chars)
    stage = lines[0].rsplit("stage: ", 1)[1]
    return {"text": "\n".join(lines), "stage": stage, "next": after if index == 0 else this, **fields}
