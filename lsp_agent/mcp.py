"""The MCP front door: the registry's agent tools served over MCP stdio.

Thin by design: `tools/list` is the registry's catalog, `tools/call` goes through the door kit
(doors.py: validated, run in a worker thread of its lane — light calls never queue behind heavy
ones — and told to stop when cancelled); this module only translates. The answer's `text` is the result's one text block, what the model reads. The
whole answer (`next`, `version`, totals, …) rides along for programs in `_meta` under
`lsp-agent/answer`, and as `structuredContent` only when asked (`structured_content=True`):
Claude Code and Copilot CLI show a model `structuredContent` *instead of* the text when both
are present (anthropics/claude-code#55677, github/copilot-cli#3258), which would hand it an
escaped JSON object over its budget. A refusal and a malformed call are tool errors
(`isError`), so the model reads what went wrong and can retry; only an unknown tool name is
a protocol error. Needs the optional extra `mcp` (the MCP Python SDK).
"""

from __future__ import annotations

import itertools
import logging
from pathlib import Path
from typing import Any

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from . import __version__
from .config import Settings
from .doors import Door
from .errors import ArgumentError
from .lanes import Lanes
from .tools import catalog
from .workspace import Workspace

log = logging.getLogger(__name__)


ANSWER_META = "lsp-agent/answer"


def create_server(
    settings: Settings | None = None,
    roots: list[str | Path] | None = None,
    *,
    structured_content: bool = False,
) -> Server:
    settings = settings or Settings()
    workspace = Workspace(roots)
    listed = [
        types.Tool(
            name=entry["name"],
            title=entry["title"],
            description=entry["description"],
            input_schema=entry["inputSchema"],
            annotations=types.ToolAnnotations.model_validate(entry["annotations"]),
        )
        for entry in catalog()  # agent tools only: runtime tools are not for a model to call
    ]
    names = [t.name for t in listed]
    # The LSP server's lanes: a burst of calls queues in its lane rather than starting a
    # thread (and a ripgrep) for each, and a read never queues behind a search.
    door = Door(workspace, Lanes(), lambda: settings)

    async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {', '.join(names)}")
        try:
            arguments = door.check(params.name, params.arguments)
            answer = await door.run(door.open(params.name, arguments, report=progress_reporter(ctx)))
        except ArgumentError as exc:  # malformed, or arguments only the tool can check
            return tool_error(str(exc))
        return types.CallToolResult(
            content=[types.TextContent(text=answer["text"])],
            structured_content=answer if structured_content else None,
            is_error="error" in answer,  # a refusal: the text says what to do instead
            _meta={ANSWER_META: answer},
        )

    return Server(
        "lsp-agent",
        version=__version__,
        instructions="Paged reads, symbol-aware search and outlines of the workspace; every answer fits "
        "its budget and says how to get the rest.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def tool_error(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=True)


def progress_reporter(ctx: ServerRequestContext):
    """`Context.report` for one call: `notifications/progress` on the call's progressToken
    (the session drops them when the client sent none). Called from the tool's thread."""
    token = anyio.lowlevel.current_token()
    counter = itertools.count(1)

    def report(message: str, percentage: int | None) -> None:
        # MCP progress must increase: a percentage when the tool knows one, else a count.
        progress, total = (percentage, 100) if percentage is not None else (next(counter), None)
        try:
            anyio.from_thread.run(ctx.session.report_progress, progress, total, message, token=token)
        except Exception:  # a lost progress note must never fail the tool
            log.debug("progress not sent", exc_info=True)

    return report


def serve(
    settings: Settings | None = None,
    roots: list[str | Path] | None = None,
    *,
    structured_content: bool = False,
) -> int:
    """Serve MCP on stdin/stdout until the client closes stdin."""
    server = create_server(settings, roots, structured_content=structured_content)

    async def run() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(run)
    return 0
