"""read: whole numbered lines under a budget, with an exact continuation (see paging),
of a file or of one symbol's lines."""

from __future__ import annotations

from pathlib import Path

from ..budget import share_fairly
from ..errors import Refusal
from ..paging import page, symbol_label
from ..syntax import language_for, outline
from ..syntax.index import named
from ..workspace import Text
from ..writer import HISTORY
from .registry import BUDGET, MAX_CHARS, Context, tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "description": "File path, relative to the workspace root (or absolute inside it).",
        },
        "paths": {
            "type": "array",
            "items": {"type": "string"},
            "minItems": 1,
            "maxItems": 50,
            "description": "More files read with path in one call, sharing the budget, each with its own continuation.",
        },
        "start": {"type": "integer", "default": 1, "description": "First line to show (1-based)."},
        "col": {
            "type": "integer",
            "default": 1,
            "description": "Column of line start: pages a line longer than the budget.",
        },
        "max_chars": MAX_CHARS,
        "if_version": {
            "type": "string",
            "description": "A version from an earlier read: if the file is unchanged the answer is one line.",
        },
        "symbol": {
            "type": "string",
            "minLength": 1,
            "description": "Read only this symbol's lines, by name path (`Message/to_dict` or `Message.to_dict`); "
            "start then pages within the symbol.",
        },
    },
    "required": ["path"],
    "additionalProperties": False,
}

SUMMARY = (
    f"Read a file as numbered whole lines (`N:text`, every line, an empty one as `N:`) within {BUDGET}. "
    "The header gives the lines shown, the total and the version; when there is more, the last line says "
    "`read on with start=N`: following it gives every line exactly once. Read one definition with symbol= (a name path "
    "from symbols or find_symbol) instead of guessing a line range; pass if_version= to skip an unchanged "
    "file. Use it once you know which file (and "
    "which lines or definition) to read; search, symbols and find_symbol say where to look. "
    'Example: {"path": "src/app.py", "start": 120}.'
)


@tool("read", "Read file", SUMMARY, SCHEMA, light=True)
def read(
    ctx: Context,
    path: str,
    *,
    max_chars: int,
    paths: list[str] | None = None,
    start: int = 1,
    col: int = 1,
    if_version: str | None = None,
    symbol: str | None = None,
) -> dict:
    if paths:
        if symbol is not None or start != 1 or col != 1 or if_version is not None:
            raise Refusal(
                "bad_arguments",
                "paths= reads each file from its start; give path= alone to read on from start=N.",
            )
        return read_many(ctx, [path, *paths], max_chars)
    resolved, text = ctx.workspace.named_text(path)
    shown = ctx.workspace.display(resolved)
    HISTORY.remember(resolved, text)  # a stale edit against this version is told what changed since
    if symbol is None:
        return page(text, shown, start=start, col=col, max_chars=max_chars, if_version=if_version, named=True)
    return read_symbol(
        ctx, text, resolved, shown, symbol, start=start, col=col, max_chars=max_chars, if_version=if_version
    )


def read_symbol(
    ctx: Context, text: Text, path: Path, shown: str, name_path: str, *, start: int, **options
) -> dict:
    """Page through one symbol's lines; with several symbols of that name path, the first,
    and a note naming the others."""
    if language_for(path) is None:
        raise Refusal("no_grammar", f"{shown}: no symbols for this kind of file; read it by lines (start=N).")
    found = named(ctx.index, path, text, name_path)
    if not found:
        top = ", ".join(s.name for s in outline(path, text)[:12]) or "none"
        raise Refusal(
            "no_symbol",
            f"{shown} has no symbol {name_path!r}; its top-level symbols: {top}. "
            f"List them all with symbols path={shown}, or search with find_symbol substring=true.",
        )
    symbol = found[0]
    notes = []
    if len(found) > 1:
        others = ", ".join(f"{s.name_path} {s.start_line}-{s.end_line}" for s in found[1:4])
        more = f" and {len(found) - 4} more" if len(found) > 4 else ""
        notes.append(
            f"{len(found) - 1} more symbols match: {others}{more} (read those with start=N, without symbol=)"
        )
    first = symbol.start_line
    answer = page(
        text, shown, start=max(start, first) if start == 1 else start, first=first, last=symbol.end_line,
        part=symbol_label(symbol.kind, symbol.name_path, name_path), notes=notes, then=f" symbol={name_path}", named=True, **options,
    )  # fmt: skip
    if answer.get("next"):
        answer["next"] = {**answer["next"], "symbol": name_path}
    answer["symbol"] = {
        "name_path": symbol.name_path,
        "kind": symbol.kind,
        "start_line": first,
        "end_line": symbol.end_line,
    }
    return answer


MIN_PAGE = 200  # the smallest budget a page is written for (read's schema minimum)


def read_many(ctx: Context, paths: list[str], budget: int) -> dict:
    """The first page of each file, one budget split between them: the shortest files are
    served first, each taking at most an equal share of what is left, so a short file leaves
    its unused share to the longer ones. Each file's place is reserved by the line that
    says it was not shown, so the answer fits whatever the split."""
    ws = ctx.workspace
    head = f"read {len(paths)} files · one budget of {budget:,} characters split between them"
    blocks: list[str] = []
    texts: dict[int, tuple[Text, str]] = {}
    for n, raw in enumerate(paths):
        try:
            resolved, text = ws.named_text(raw)
            texts[n] = (text, ws.display(resolved))
            blocks.append(f"{texts[n][1]}: not shown, no room left; read path={texts[n][1]}")
        except Refusal as refusal:
            blocks.append(refusal.message)
    minimum = len("\n".join([head, *blocks]))
    if minimum > budget:
        raise Refusal(
            "budget_too_small",
            f"max_chars={budget} is too small for {len(paths)} files; use at least {minimum}, or fewer paths.",
            minimum=minimum,
        )
    files: list[dict] = [{"path": raw, "error": blocks[n]} for n, raw in enumerate(paths)]

    def take(n: int, share: int) -> int:
        """File n's first page in its place's room plus `share`; the characters it used."""
        text, shown = texts[n]
        room = len(blocks[n]) + share
        files[n] = {"path": shown, "next": {"start": 1}}
        if room < MIN_PAGE:
            return 0
        try:
            part = page(text, shown, max_chars=room, then=f" path={shown}")
        except Refusal:
            return 0
        used = len(part["text"]) - len(blocks[n])
        blocks[n] = part["text"]
        files[n] = {
            "path": shown,
            "next": part["next"],
            "version": part["version"],
            "total_lines": part["total_lines"],
        }
        return used

    share_fairly(budget - minimum, sorted(texts, key=lambda n: len(texts[n][0].content)), take)
    return {"text": "\n".join([head, *blocks]), "files": files}  # each file's header starts its part
