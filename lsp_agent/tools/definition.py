"""definition: from a use (path, line, column) or a name, the definition(s) of that name.

From a use, the file's own definitions come first, then its imports where the syntax shows
them (Python from-imports and relative imports, JS/TS `import … from './x'`, Go
package-qualified names, Rust `use`), followed through re-exports; else every definition of
the name in the workspace, ranked: same file, same folder, nearest folders. Matching is by
name, not by type: `obj.save()` may mean any `save`, and the answer says when it guessed.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..budget import largest_fit, plural, size
from ..errors import Refusal
from ..paging import page
from ..search import Query, run_search, targets_of
from ..syntax import language_for, name_path_matcher, outline, walk
from ..syntax.imports import imported
from ..syntax.outline import Symbol
from ..syntax.position import use_at
from ..syntax.references import signature
from ..workspace import Text, Workspace
from .registry import MAX_CHARS, POSITION, Context, tool

MAX_HOPS = 4  # re-exports followed from one import

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "minLength": 1,
            "description": "A name or name path (`get_object_or_404`, `Model/full_clean`), when there is no use to start from.",
        },
        **POSITION,
        "body": {
            "type": "boolean",
            "default": True,
            "description": "Show the definition's lines (paged like read); false: its signature only.",
        },
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "Go to the definition of a name: from a use (path, line, column) through the file's imports "
    "(Python from/relative imports, JS/TS imports, Go packages, Rust use), else the workspace's "
    "definitions of that name ranked by nearness. Answers the definition's lines (paged like read) "
    "or, with several candidates, each one's signature. By name, not by type."
)


@dataclass(frozen=True)
class Found:
    path: Path
    text: Text
    symbol: Symbol


def defined_in(path: Path, text: Text, name: str) -> list[Found]:
    """Definitions named `name` in a file, top-level ones first."""
    found = [s for s in walk(outline(path, text)) if s.name == name]
    found.sort(key=lambda s: s.name_path.count("/"))
    return [Found(path, text, s) for s in found]


def through_imports(ws: Workspace, path: Path, text: Text, name: str, qualifier: str | None):
    """(definitions, the import statements followed) for a name imported into `path`."""
    chain: list[str] = []
    for _ in range(MAX_HOPS):
        source = imported(ws, path, text, name, qualifier)
        if source is None:
            return [], chain
        chain.append(source.statement)
        for file in source.files:
            try:
                file_text = ws.text(file.resolve())
            except Refusal:
                continue
            if found := defined_in(file.resolve(), file_text, source.name):
                return found, chain
        if not source.files:
            return [], chain
        # not defined there: a re-export, followed from the first file
        path, name, qualifier = source.files[0].resolve(), source.name, None
        try:
            text = ws.text(path)
        except Refusal:
            return [], chain
    return [], chain


def workspace_definitions(ctx: Context, name: str, owner: str | None = None) -> list[Found]:
    """Every definition named `name` (inside `owner` when given) in the workspace: ripgrep
    picks the files holding the word, their outlines say which define it."""
    ws = ctx.workspace
    targets, _ = targets_of(ws, None)
    pattern = rf"\b{re.escape(name)}\b" if re.fullmatch(r"\w+", name) else re.escape(name)
    outcome = run_search(ws, Query(pattern), targets, cancelled=ctx.cancel_event.is_set)
    matches = name_path_matcher(f"{owner}/{name}" if owner else name)
    found = []
    for file in outcome.files:
        if language_for(file.path) is None:
            continue
        ctx.check_cancelled()
        try:
            text = ws.text(file.path)
        except Refusal:
            continue
        found += [
            Found(file.path, text, s)
            for s in walk(outline(file.path, text))
            if s.name == name and matches(s.name_path)
        ]
    return found


def nearness(origin: Path | None, found: Found) -> tuple:
    """Same file, then same folder, then the fewest folders apart; top-level before nested."""
    depth = found.symbol.name_path.count("/")
    tests = "test" in str(found.path).lower()
    if origin is None:
        return (tests, depth, len(found.path.parts), str(found.path))
    if found.path == origin:
        return (0, 0, depth, found.symbol.start_line)
    common = Path(os.path.commonpath([origin.parent, found.path.parent]))
    apart = len(origin.parent.parts) - len(common.parts) + len(found.path.parent.parts) - len(common.parts)
    return (1, apart, tests, depth, str(found.path))


def location(ws: Workspace, f: Found) -> str:
    s = f.symbol
    lines = str(s.start_line) if s.start_line == s.end_line else f"{s.start_line}-{s.end_line}"
    return f"{ws.display(f.path)}:{lines}  {s.kind} {s.name_path}"


def signature_lines(f: Found) -> list[str]:
    sig = signature(f.path, f.text, f.symbol)
    out = [f"  {sig.one_line()}"]
    if sig.doc:
        out.append(f"  # {sig.doc}")
    return out


def from_use(ctx: Context, path: str, line: int, column: int) -> tuple[str, str, list[Found], str]:
    """(identifier, as asked, the definitions found, how): the file's own, else through its
    imports, else the workspace's ranked by nearness."""
    ws = ctx.workspace
    at = use_at(ws, path, line, column)
    origin, text, identifier, qualifier = at.path, at.text, at.name, at.qualifier
    asked = f"{identifier} (from {ws.display(origin)}:{line})"
    own = (
        [] if qualifier not in (None, "self", "this", "cls", "Self") else defined_in(origin, text, identifier)
    )
    found, chain = through_imports(ws, origin, text, identifier, qualifier)
    if own:
        return identifier, asked, own, "defined in the same file"
    if found:
        return identifier, asked, found, "through " + " → ".join(f"`{c}`" for c in chain)
    found = workspace_definitions(ctx, identifier)
    found.sort(key=lambda f: nearness(origin, f))
    how = "by name, ranked by nearness (same file, same folder, nearest folders)"
    if chain:
        how = f"`{chain[-1]}` names no file in the workspace; " + how
    return identifier, asked, found, how


def from_name(ctx: Context, name: str) -> tuple[str, str, list[Found], str]:
    identifier, _, owner_part = name.strip("/").replace(".", "/").rpartition("/")[::-1]
    found = workspace_definitions(ctx, identifier, owner_part or None)
    found.sort(key=lambda f: nearness(None, f))
    return identifier, name, found, "by name (top-level and non-test definitions first)"


def body_stage(ws: Workspace, head: str, best: Found, others: list[Found], budget: int) -> dict | None:
    """The one definition's lines, paged like read (None when they do not fit)."""
    s = best.symbol
    answer = page(
        best.text, ws.display(best.path), start=s.start_line, max_chars=max(budget - len(head) - 1, 200),
        first=s.start_line, last=s.end_line, part=f"{s.kind} {s.name_path}",
        notes=[f"also {location(ws, f)}" for f in others[:3]], then=f" symbol=/{s.name_path}",
    )  # fmt: skip
    shown = "\n".join([head, answer["text"]])
    if len(shown) > budget:
        return None
    nxt = answer.get("next") and {
        "path": ws.display(best.path),
        "symbol": "/" + s.name_path,
        **answer["next"],
    }
    return {"text": shown, "next": nxt or None, "stage": "body"}


def listing_stages(ws: Workspace, head: str, found: list[Found], budget: int) -> dict:
    """Each candidate's location and signature, as many as fit; else locations alone."""

    def listing(n: int) -> list[str]:
        lines = [head + " · stage: signatures"]
        for f in found[:n]:
            lines += [location(ws, f), *signature_lines(f)]
        if n < len(found):
            lines.append(
                f"[{len(found) - n} more not shown: narrow with a name path (Owner/name) or start from a use]"
            )
        return lines

    n = largest_fit(0, len(found), lambda k: k == 0 or size(listing(k)) <= budget)
    if n:
        return {"text": "\n".join(listing(n)), "next": None, "stage": "signatures"}
    locations = [head + " · stage: locations", *(location(ws, f) for f in found)]
    k = largest_fit(0, len(found), lambda k: k == 0 or size([*locations[: k + 1], "[99999 more]"]) <= budget)
    if k == 0:
        raise Refusal("budget_too_small", f"max_chars={budget} is too small for this answer.")
    lines = locations[: k + 1] + ([f"[{len(found) - k} more not shown]"] if k < len(found) else [])
    return {"text": "\n".join(lines), "next": None, "stage": "locations"}


@tool("definition", "Go to definition", SUMMARY, SCHEMA)
def definition(
    ctx: Context,
    *,
    name: str | None = None,
    path: str | None = None,
    line: int | None = None,
    column: int = 1,
    body: bool = True,
    max_chars: int,
) -> dict:
    ws = ctx.workspace
    if path is not None and line is not None:
        identifier, asked, found, how = from_use(ctx, path, line, column)
    elif name is not None:
        identifier, asked, found, how = from_name(ctx, name)
    else:
        raise Refusal("no_name", "Give path=, line= (and column=) of a use, or name=.")
    fields = {
        "name": identifier,
        "definitions": [
            {"path": ws.display(f.path), "name_path": f.symbol.name_path, "kind": f.symbol.kind,
             "start_line": f.symbol.start_line, "end_line": f.symbol.end_line}
            for f in found[:200]
        ],
    }  # fmt: skip
    if not found:
        return {"text": f"definition of {asked} · not found in the workspace ({how})", "next": None, **fields}
    head = f"definition of {asked} · {plural(len(found), 'candidate')} · {how}"
    one = len(found) == 1 or how.startswith(("through", "defined"))
    if body and one and (answer := body_stage(ws, head, found[0], found[1:], max_chars)) is not None:
        return answer | fields
    return listing_stages(ws, head, found, max_chars) | fields
