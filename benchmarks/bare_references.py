"""The precision bench's served lsp-agent: the stock server (`python -m lsp_agent serve`) with
one more request, `lspAgent/bare_references`, registered for the bench alone (not for agents:
no catalog shows it).

It asks what `references` asks from a use, the same way: taken from the stdio reader to its
thread, its question sent before its own first steps beside a quick server, the server's
locations read into workspace locations. It answers them bare: no roles, no enclosing symbols,
no by-name candidates, no page. Its time over the server's is what any answer through this
server costs before it says anything of its own, so that references' time can be read against
the goal's words, "the server's own plus the budgeted rendering".

Run as `python -m benchmarks.bare_references serve`: the tool is registered, then lsp-agent's
own entry point runs."""

from __future__ import annotations

import runpy

from lsp_agent.tools import Context
from lsp_agent.tools import references as references_tool
from lsp_agent.tools.precise import confirmed
from lsp_agent.tools.registry import tool

SCHEMA = {
    "type": "object",
    "properties": {
        "path": {"type": "string"},
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
    },
    "required": ["path", "line"],
    "additionalProperties": False,
}


@tool(
    "bare_references",
    "References, bare (bench)",
    "The language server's references at a use, as workspace locations only.",
    SCHEMA,
    for_agents=False,
    asks_first=references_tool.asks_first,
)
def bare_references(ctx: Context, *, path: str, line: int, column: int = 1) -> dict:
    *_, at = references_tool.asked_for(ctx, None, path, line, column)
    typed = confirmed(ctx, "references", references_tool.starts_of(ctx, at, []), None)
    shown = ctx.workspace.display
    found = [{"path": shown(loc.path), "line": loc.line, "column": loc.column} for loc in typed.locations]
    return {"text": f"{len(found)} locations from {typed.server}", "references": found}


if __name__ == "__main__":
    runpy.run_module("lsp_agent", run_name="__main__", alter_sys=True)
