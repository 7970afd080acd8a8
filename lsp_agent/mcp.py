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

import io
import itertools
import json
import logging
import os
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
from mcp.shared.message import SessionMessage

from . import __version__
from .config import Settings
from .doors import Door
from .errors import ArgumentError
from .lanes import Lanes, run_tool
from .syntax.index import saved_index
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
        # agent tools only (runtime tools are not for a model), the edit tools when edits are on
        for entry in catalog(edits=settings.edits == "on")
    ]
    names = [t["name"] for t in catalog()]  # with edits off, their calls are refused by the tool
    # The LSP server's lanes: a burst of calls queues in its lane rather than starting a
    # thread (and a ripgrep) for each, and a read never queues behind a search.
    # The records of the index a server saved for these roots, each used where its file's
    # stat vouches for it (never built here: no file watcher would keep it whole).
    door = Door(workspace, Lanes(), lambda: settings, index=saved_index(workspace))

    async def list_tools(ctx: ServerRequestContext, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed)

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in names:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; tools: {', '.join(names)}")
        try:
            arguments = door.check(params.name, params.arguments)
            call = door.open(params.name, arguments, report=progress_reporter(ctx))
            answer = await door.run(call, run_tool)  # heavy calls in a worker process
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
        admission = Admission(claimed_stdin())
        async with stdio_server(stdin=admission) as (read_stream, write_stream):  # type: ignore[arg-type]
            outgoing, to_write = anyio.create_memory_object_stream[SessionMessage](0)
            admission.errors = outgoing.clone()
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(admission.relay, to_write, write_stream)
                async with outgoing:
                    await server.run(read_stream, outgoing, server.create_initialization_options())

    anyio.run(run)
    return 0


# --- the transport's gate: params checked, requests admitted only while few are in flight ---

MAX_IN_FLIGHT = 64  # requests read and not answered yet; then stdin is not read until one is


def claimed_stdin() -> anyio.AsyncFile[str]:
    """stdin for the transport alone: fd 0 then points at the null device, so no child (a
    worker, ripgrep) reads the client's requests."""
    wire = os.dup(0)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return anyio.wrap_file(io.TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace"))


class Admission:
    """The lines of stdin as the MCP SDK's transport reads them, with two checks it lacks.

    A request whose params are not an object (MCP's params are named) is answered with
    InvalidParams here: the SDK could not parse it, and it went unanswered. And a client that
    stops reading its answers must not make the server pile them up: once MAX_IN_FLIGHT
    requests are unanswered, no further line is read until an answer is written (or a
    request cancelled), so the client's writes block instead of the server's memory growing."""

    def __init__(self, stdin: anyio.AsyncFile[str], limit: int = MAX_IN_FLIGHT):
        self.stdin = stdin
        self.limit = limit
        self.in_flight: set[str] = set()
        self.changed = anyio.Condition()
        self.errors: Any = None  # a send stream to the writer, set before serving

    def __aiter__(self) -> Admission:
        return self

    async def __anext__(self) -> str:
        while True:
            async with self.changed:
                while len(self.in_flight) >= self.limit:
                    await self.changed.wait()
            line = await self.stdin.readline()
            if not line:
                if self.errors is not None:
                    self.errors.close()
                raise StopAsyncIteration
            refusal = self.admit(line)
            if refusal is None:
                return line
            await self.errors.send(refusal)

    def admit(self, line: str) -> SessionMessage | None:
        """None to pass the line on (counted when a request), else the error to answer."""
        try:
            message = json.loads(line)
        except ValueError:
            return None  # the SDK's to refuse
        if not isinstance(message, dict):
            return None
        if "method" in message and isinstance(message.get("id"), int | str):
            params = message.get("params")
            if params is not None and not isinstance(params, dict):
                error = types.ErrorData(
                    code=types.INVALID_PARAMS,
                    message=f"{message['method']}: params must be an object, got {type(params).__name__}",
                )
                return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=message["id"], error=error))
            self.in_flight.add(repr(message["id"]))
        elif message.get("method") == "notifications/cancelled":  # a cancelled request gets no answer
            params = message.get("params")
            if isinstance(params, dict):
                self.in_flight.discard(repr(params.get("requestId")))
        return None

    async def relay(self, outgoing: Any, write_stream: Any) -> None:
        """Hand the server's messages (and the gate's errors) to the SDK's writer; each
        answer frees its request's place."""
        async with write_stream, outgoing:
            async for session_message in outgoing:
                await write_stream.send(session_message)
                message = session_message.message
                if isinstance(message, types.JSONRPCResponse | types.JSONRPCError):
                    async with self.changed:
                        self.in_flight.discard(repr(message.id))
                        self.changed.notify_all()
