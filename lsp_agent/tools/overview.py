"""overview: a ranked map of the workspace or a folder — the most used definitions first,
each with its signature, grouped by file, as many as fit the budget (see syntax/ranking.py
for the ranking: PageRank over a graph of files linked by the names they use and define).
`offset` pages on to the next-ranked definitions, so every definition is reachable."""

from __future__ import annotations

from pathlib import Path

from ..errors import Refusal
from ..syntax.files import source_files
from ..syntax.ranking import ranked_map
from .confirmed_ranking import confirmed_ranking
from .registry import MAX_CHARS, Context, tool

PROGRESS_EVERY = 64  # files between two progress reports (a checkpoint too)

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
    "A ranked map of the code: the definitions other files use most (PageRank over files linked by "
    "the names they use and define; the top re-ranked by references a SCIP index or language server "
    "confirms), with signatures, by file, as many as fit; offset= pages on. Start here in an unknown "
    "code base."
)


@tool("overview", "Ranked code map", SUMMARY, SCHEMA)
def overview(ctx: Context, *, max_chars: int, path: str = ".", offset: int = 0) -> dict:
    ws = ctx.workspace
    folder = ws.resolve(path)
    if not folder.is_dir():
        raise Refusal(
            "not_a_folder",
            f"{ws.display(folder)} is not a folder; for one file use symbols path={ws.display(folder)}.",
        )

    read = iter(range(1, 1 << 62))

    def reading(file: Path) -> None:
        ctx.check_cancelled()
        if next(read) % PROGRESS_EVERY == 0:  # a file's name for display costs more than its record
            ctx.progress(f"reading {ws.display(file)}")

    files = ((file, None) for file in source_files(ws, folder, check=ctx.check_cancelled))
    shown = ws.display(folder) if folder not in ws.roots else "."

    def rerank(ranked):  # the top re-ranked by the references a semantic source confirms
        return confirmed_ranking(ctx, ranked, offset)

    return ranked_map(ws, shown, files, offset, max_chars, index=ctx.index, check=reading, rerank=rerank)
