"""overview: a ranked map of the workspace or a folder — the most used definitions first,
each with its signature, grouped by file, as many as fit the budget (see syntax/ranking.py
for the ranking: PageRank over a graph of files linked by the names they use and define).
`offset` pages on to the next-ranked definitions, so every definition is reachable."""

from __future__ import annotations

from pathlib import Path

from ..budget import most_that_fit, plural
from ..errors import Refusal
from ..syntax.files import source_files
from ..syntax.ranking import rank_definitions
from ..syntax.references import signature
from ..workspace import Text
from .registry import MAX_CHARS, Context, tool

SIGNATURE_WIDTH = 160

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {
            "type": "string",
            "default": ".",
            "description": "The folder to map (default: the whole workspace).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": "Skip this many of the top-ranked definitions.",
        },
        "max_chars": MAX_CHARS,
    },
    "additionalProperties": False,
}

SUMMARY = (
    "A ranked map of the code: the definitions other files use most (ranked like aider's repo map: "
    "PageRank over files linked by the names they use and define), each with its signature, grouped "
    "by file, as many as fit the budget; offset= pages on to the next ones. Start here in an unknown "
    "code base."
)


def cut(text: str) -> str:
    return text if len(text) <= SIGNATURE_WIDTH else text[: SIGNATURE_WIDTH - 1] + "…"


@tool("overview", "Ranked code map", SUMMARY, SCHEMA)
def overview(ctx: Context, *, max_chars: int, path: str = ".", offset: int = 0) -> dict:
    ws = ctx.workspace
    folder = ws.resolve(path)
    if not folder.is_dir():
        raise Refusal(
            "not_a_folder",
            f"{ws.display(folder)} is not a folder; for one file use symbols path={ws.display(folder)}.",
        )
    files = []
    for file in source_files(ws, folder, check=ctx.check_cancelled):
        ctx.progress(f"reading {ws.display(file)}")
        try:
            files.append((file, ws.text(file)))
        except Refusal:
            continue
    shown = ws.display(folder) if folder not in ws.roots else "."
    return ranked_map(ctx, shown, files, offset, max_chars)


def ranked_map(
    ctx: Context,
    shown: str,
    files: list[tuple[Path, Text]],
    offset: int,
    budget: int,
    head: str | None = None,
) -> dict:
    """The ranked definitions of `files` from `offset`, as many as fit `budget`, grouped by
    file (`head`: the first line, instead of overview's own)."""
    ws = ctx.workspace
    ranked, _ = rank_definitions(files)
    texts = dict(files)
    fields = {"path": shown, "files": len(files), "ranked": len(ranked)}
    if not ranked:
        return {
            "text": f"overview {shown} · {plural(len(files), 'source file')}, no definition used by another file",
            "next": None,
            "shown": [],
            **fields,
        }
    if offset >= len(ranked):
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last ranked definition: there are {len(ranked):,}; use offset=0..{len(ranked) - 1}.",
        )

    signatures: dict[int, str] = {}

    def sign(n: int) -> str:
        if n not in signatures:
            r = ranked[n]
            signatures[n] = cut(signature(r.path, texts[r.path], r.symbol).one_line())
        return signatures[n]

    def render(k: int) -> list[str]:
        chosen = list(range(offset, min(offset + k, len(ranked))))
        by_file: dict[Path, list[int]] = {}
        for n in chosen:
            by_file.setdefault(ranked[n].path, []).append(n)
        end = offset + len(chosen)
        lines = [
            head
            or f"overview {shown} · {plural(len(files), 'file')}, {plural(len(ranked), 'definition')} used across files"
            f" · ranked by use from other files (by name) · showing {offset + 1:,}-{end:,}"
        ]
        if end < len(ranked):
            lines.append(f"more: the next ranked definitions with overview path={shown} offset={end}")
        for file, ns in by_file.items():
            lines.append(ws.display(file))
            ns.sort(key=lambda n: ranked[n].symbol.start_line)
            for n in ns:
                s = ranked[n].symbol
                indent = "  " * s.name_path.count("/")
                lines.append(f"{indent}{s.start_line}: {sign(n)}")
        return lines

    k = most_that_fit(len(ranked) - offset, render, budget, "ranked definition")
    end = offset + k
    return {
        "text": "\n".join(render(k)),
        "next": {"offset": end} if end < len(ranked) else None,
        "shown": [
            {"path": ws.display(r.path), "name_path": r.symbol.name_path, "line": r.symbol.start_line}
            for r in ranked[offset:end]
        ],
        **fields,
    }
