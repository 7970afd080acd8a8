"""The pygls server: document sync into the overlay, and the tool registry exposed as
custom requests `lspAgent/<tool>` and as commands `lspAgent.<tool>`.

Tools are plain functions run in a worker thread. A custom request (or command) that is
cancelled sets the tool's cancel event, so a long search stops at its next check and kills
its ripgrep process. Over stdio a tool's request usually goes from the stream's reader to its
thread, which answers it (take_call); the event loop dispatches the rest.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import itertools
import json
import logging
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.exceptions import (
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcMethodNotFound,
    JsonRpcRequestCancelled,
)
from pygls.lsp.server import LanguageServer
from pygls.protocol import default_converter, lsp_method
from pygls.protocol.json_rpc import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage

from . import __version__
from .config import Settings
from .doors import Call, Door
from .errors import ArgumentError, Cancelled, Refusal
from .lanes import FROM_THE_INDEX, PROCESSES, RECORD_IN_WORKER_BYTES, RECORDS, Lanes, run_tool
from .local import Listener
from .rpc import INVALID_PARAMS, Encoded, StrictProtocol, encoded, envelope_error, serve_stdio
from .semantic import editor as semantic_editor
from .semantic import scip
from .semantic.connection import RequestCancelled, ServerFailed
from .syntax import EXTENSIONS, Symbol, language_for, outline, walk
from .syntax.index import Columns, SymbolIndex
from .syntax.parsing import PARSES
from .syntax.store import cache_folder
from .tools import REGISTRY, SMALL_FILE_BYTES, Context, catalog
from .workspace import Text, Workspace, escape_name, is_local_file_uri, uri_to_path

log = logging.getLogger(__name__)

METHOD_PREFIX = "lspAgent/"
COMMAND_PREFIX = "lspAgent."
CONFIGURATION_SECTION = "lspAgent"
# Keys the protocol may add to any request's params; they are not tool arguments.
PROTOCOL_KEYS = ("workDoneToken", "partialResultToken")
# Calls taken from the reader (take_call) and not answered yet, at most: beyond, the loop's way.
MAX_TAKEN = 64


def plain_converter():
    """pygls' converter, but custom-method params and results stay plain dicts and lists
    (pygls turns them into namedtuples, which lose keys that are not identifiers)."""
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, lambda obj, cls: cls(**obj))
    converter.register_structure_hook(str, strict_str)
    return converter


def strict_str(value: Any, _type: Any) -> str:
    """cattrs would turn a number into a string (a uri of 5 becomes "5"); params of the
    wrong type are Invalid params instead."""
    if not isinstance(value, str):
        raise TypeError(f"a string was expected, not {type(value).__name__}")
    return value


class AgentProtocol(StrictProtocol):
    _server: AgentServer

    # pygls declares this method a generator; it also runs a coroutine, which answers under
    # its own request id and so can be cancelled.
    @lsp_method(types.WORKSPACE_EXECUTE_COMMAND)
    async def lsp_workspace__execute_command(  # type: ignore[override]
        self, params: types.ExecuteCommandParams
    ) -> Any:
        """Commands `lspAgent.<tool>` with one argument object, run exactly like the
        request `lspAgent/<tool>`."""
        name = params.command.removeprefix(COMMAND_PREFIX)
        if not params.command.startswith(COMMAND_PREFIX) or name not in REGISTRY:
            raise JsonRpcInvalidParams(
                f"unknown command {params.command!r}; commands are "
                + ", ".join(COMMAND_PREFIX + t for t in REGISTRY)
            )
        arguments = list(params.arguments or [])
        if len(arguments) > 1 or (arguments and not isinstance(arguments[0], dict)):
            raise JsonRpcInvalidParams(
                f"{params.command} takes one argument: an object of the tool's arguments"
            )
        return await self._server.run_tool(name, arguments[0] if arguments else {}, params.work_done_token)

    def take(self, message: Any) -> bool:
        return self._server.take_call(message)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """A call its thread answers itself (take_call) is told to stop and answered as
        cancelled at once, as pygls answers the calls it runs."""
        taken = self._server.taken.get(msg_id)
        if taken is None:
            super()._handle_cancel_notification(msg_id)
            return
        taken.call.context.cancel_event.set()
        if taken.claim():  # (else answered already)
            self._server.after_progress(taken, partial(self.send_error, msg_id, *cancelled(msg_id)))

    def document_lost(self, uri: str, why: str) -> None:
        """A didChange that cannot apply (rpc.py): the buffer the server has is no longer the
        editor's. Tools serve the saved file instead (an answer from a buffer that differs
        from the editor's would be silently wrong) until the editor sends the whole text again
        (didOpen, or a change without a range), and the editor shows the error."""
        ls = self._server
        ls.lost_documents.add(uri)
        if is_local_file_uri(uri):
            ls.agent_workspace.hold_document(uri)  # the disk is served; the editor still has it open
            ls.reindex_soon(real_path(uri))
        shown = escape_name(uri)
        ls.window_show_message(
            types.ShowMessageParams(
                types.MessageType.Error,
                f"lsp-agent: {shown} is out of sync ({why}); its saved text is served until the editor "
                "sends it whole: close and reopen the file.",
            )
        )


class Replayed:
    """A stream reader with the bytes already read from it put back in front."""

    def __init__(self, reader: asyncio.StreamReader, head: bytes) -> None:
        self.reader, self.head = reader, head

    async def readline(self) -> bytes:
        head, self.head = self.head, b""
        if head.endswith(b"\n"):
            return head
        return head + await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        head, self.head = self.head[:n], self.head[n:]
        return head + await self.reader.readexactly(n - len(head))


@dataclass
class Taken:
    """A tool's request taken from the stream's reader (AgentServer.take_call): answered
    once, by its thread or by a cancel, whichever claims it first."""

    msg_id: Any
    call: Call
    progress: Progress
    once: threading.Lock = field(default_factory=threading.Lock)

    def claim(self) -> bool:
        return self.once.acquire(blocking=False)


def cancelled(msg_id: Any) -> tuple[int, str]:
    """The error answering a cancelled request, as pygls words it."""
    return JsonRpcRequestCancelled.CODE, f'Request with id "{msg_id}" is canceled'


class AgentServer(LanguageServer):
    protocol: AgentProtocol

    def __init__(self, settings: Settings | None = None, roots: list[str | Path] | None = None):
        super().__init__(
            "lsp-agent",
            __version__,
            protocol_cls=AgentProtocol,
            converter_factory=plain_converter,
        )
        self.settings = settings or Settings()
        self.initial_settings = self.settings  # before the client's configuration
        self.loop: asyncio.AbstractEventLoop | None = None  # the protocol's, once initialized
        self.agent_workspace = Workspace(roots)
        self.lanes = Lanes()
        self.pending_messages: list[str] = []
        # Set by `shutdown`: the index build and every running tool stop at their next check.
        self.stopping = threading.Event()
        self.running: set[Context] = set()
        self._tokens = itertools.count(1)
        self.symbol_index = SymbolIndex(self.agent_workspace, cache=cache_folder())
        # The door kit (doors.py): validate, lane, Context, cancel; this class only translates.
        self.door = Door(
            self.agent_workspace, self.lanes, lambda: self.settings, self.symbol_index, self.editor,
            self.semantic_editor,
        )  # fmt: skip
        self._reindex_timers: dict[Path, asyncio.TimerHandle] = {}
        self.outline_json = OutlineJson()
        # The background index build; held here because a task nobody holds may be collected.
        self.index_task: asyncio.Future[None] | None = None
        self.lost_documents: set[str] = set()  # URIs whose buffer is not known (document_lost)
        # One-shot commands of the same roots ask this server once its index is built (local.py).
        self.commands = Listener(self.answer_command)
        self.client_name: str | None = None  # initialize's clientInfo.name
        self.editor_link: semantic_editor.EditorLink | None = None
        self.editor_link_lock = threading.Lock()
        self.taken: dict[Any, Taken] = {}  # by request id: the calls their threads answer
        self.finishing: set[asyncio.Future] = set()  # taken calls' progress, ending (after_progress)

    def start_io(self, stdin=None, stdout=None) -> int:
        """Serve stdio with strict framing (see rpc.py); the process's exit code."""
        self._stop_event = threading.Event()
        # The reader thread may still be blocked in a read when the process exits: it gets
        # a file object of its own, since the interpreter's exit takes sys.stdin's lock.
        stdin = stdin or open(sys.stdin.fileno(), "rb", closefd=False)  # noqa: SIM115
        try:
            return serve_stdio(self.protocol, stdin, stdout or sys.stdout.buffer, self._stop_event)
        finally:
            self.shutdown()

    def start_tcp(self, host: str, port: int) -> None:
        """pygls's TCP server (one client), except that a connection closed before it sent
        a byte (a port probe, a health check) is not that client: the server keeps listening.
        pygls ended the server then, racing whatever came next (a Ctrl-C met it half shut)."""
        from pygls.io_ import run_async

        self._stop_event = stop_event = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                head = await reader.read(1)
            except asyncio.CancelledError:  # the server stops (Ctrl-C) before the client spoke
                writer.close()
                raise
            if not head:
                writer.close()
                return
            self.protocol.set_writer(writer)
            replayed = Replayed(reader, head)
            await run_async(stop_event, replayed, self.protocol, log, self.report_server_error)
            self.shutdown()

        handlers: set[asyncio.Task] = set()

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            # The handler runs as a task of ours, not the stream's: Python 3.11's stream logs
            # its handler cancelled as an error with a traceback, even one cancelled before it
            # ran (a Ctrl-C just after a port probe). A cancelled task of ours is just that.
            task = asyncio.get_running_loop().create_task(connection(reader, writer))
            handlers.add(task)
            task.add_done_callback(handled)

        def handled(task: asyncio.Task) -> None:
            handlers.discard(task)
            failed = None if task.cancelled() else task.exception()
            if isinstance(failed, Exception):  # (SystemExit is `exit`: the server ends with it)
                log.error("the TCP connection failed", exc_info=failed)

        async def listen() -> None:
            self._server = await asyncio.start_server(connected, host, port)
            async with self._server:
                await self._server.serve_forever()

        try:
            asyncio.run(listen())
        except asyncio.CancelledError:  # shutdown() closed the server
            pass

    def log_to_client(self) -> None:
        """Send the log's warnings and errors to the client too; log InvalidParams answers
        as one line."""
        logging.getLogger().addHandler(ClientLog(self))
        logging.getLogger("pygls.protocol.json_rpc").addFilter(InvalidParamsInOneLine())

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls reports a message it failed to send by sending another: once the output is
        # closed (after `exit`) that fails too, recursively, each failure logging a traceback
        # until the recursion limit, which held exit up for seconds. The log has the first.
        if source is JsonRpcInternalError:
            return
        super().report_server_error(error, source)

    def stop_work(self) -> None:
        self.stopping.set()
        for ctx in list(self.running):
            ctx.cancel_event.set()

    def shutdown(self) -> None:
        self.commands.close()
        self.stop_work()
        super().shutdown()
        self.lanes.shutdown()

    def editor(self) -> Callable[[Path, Text, str], str | None] | None:
        """How tools apply edits through the client, when it announced workspace/applyEdit."""
        caps = self.client_capabilities.workspace if self.loop is not None else None
        return EditorEdits(self) if caps and caps.apply_edit else None

    def semantic_editor(self) -> semantic_editor.EditorLink | None:
        """How the semantic source asks the client's own language features, when it said it
        answers lspAgent/semantic (semantic/editor.py)."""
        if self.loop is None or not semantic_editor.advertised(self.client_capabilities.experimental):
            return None
        with self.editor_link_lock:  # (asked from the loop and from the stream's reader)
            if self.editor_link is None:  # one per connection: it knows whether the editor has answered
                self.editor_link = semantic_editor.EditorLink(
                    self.client_name or "the editor", partial(ask_editor, self)
                )
            return self.editor_link

    async def run_tool(self, name: str, params: Any, token: Any = None) -> Encoded:
        if isinstance(params, dict):
            token = params.get("workDoneToken", token)
            params = {k: v for k, v in params.items() if k not in PROTOCOL_KEYS}
        try:
            arguments = self.door.check(name, params)
        except ArgumentError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        progress = Progress(self, f"lsp-agent {name}", token)
        call = self.door.open(name, arguments, report=progress.report)
        self.running.add(call.context)
        started = time.monotonic()
        outcome = "failed"  # until the call ends another way
        try:
            answer, outcome = await self.door.run(call, run_encoded)
            return answer
        except ArgumentError as exc:  # arguments only the tool can check (a runtime's tool list)
            outcome = "invalid params"
            raise JsonRpcInvalidParams(str(exc)) from None
        except (asyncio.CancelledError, Cancelled):
            outcome = "cancelled"  # the door told the tool to stop
            raise
        finally:
            self.running.discard(call.context)
            await progress.finish()
            elapsed = (time.monotonic() - started) * 1000
            self.trace(f"{name}: {outcome} in {elapsed:.0f} ms", lambda: json.dumps(arguments))

    def take_call(self, message: Any) -> bool:
        """A tool's request (`lspAgent/<tool>`, valid arguments, after initialize and before
        shutdown) run from the stream's reader straight in its lane's thread, which sends
        the answer itself: the event loop's two hops cost a quick call about 0.14 ms, a
        quarter of what any call cost over stdio. The loop still carries what
        rests on it: cancellation, progress, the trace. False: the loop dispatches it, as it
        does beyond MAX_TAKEN calls taken and not answered (its writes then hold the reader
        back when the client does not read its answers)."""
        method = message.get("method") if isinstance(message, dict) else None
        if not isinstance(method, str) or not method.startswith(METHOD_PREFIX):
            return False
        name, params = method.removeprefix(METHOD_PREFIX), message.get("params")
        protocol = self.protocol
        if (
            name not in REGISTRY
            or len(self.taken) >= MAX_TAKEN
            or self.loop is None
            or not protocol.initialize_received
            or protocol._shutdown
            or "id" not in message
            or envelope_error(message) is not None
        ):
            return False
        token = params.get("workDoneToken") if isinstance(params, dict) else None
        if isinstance(params, dict):
            params = {k: v for k, v in params.items() if k not in PROTOCOL_KEYS}
        taken = None
        try:
            arguments = self.door.check(name, params)
            progress = Progress(self, f"lsp-agent {name}", token, self.loop)
            taken = Taken(message["id"], self.door.open(name, arguments, report=progress.report), progress)
            self.taken[taken.msg_id] = taken
            self.running.add(taken.call.context)
            self.lanes.submit(taken.call.heavy, self.answer_taken, taken)
        except Exception as exc:  # invalid params, lanes shut down: the loop answers it as ever
            if not isinstance(exc, ArgumentError | RuntimeError):  # the reader must read on
                log.exception("%s could not be taken from the reader", method)
            if taken is not None:
                self.forget(taken)
            return False
        return True

    def answer_taken(self, taken: Taken) -> None:
        """A taken call, run and answered in its lane's thread (take_call)."""
        call, progress, began = taken.call, taken.progress, time.monotonic()
        answer: Encoded | None = None
        error: tuple[int, str] | None = None
        outcome = "failed"  # until the call ends another way
        try:
            if call.context.cancel_event.is_set():  # cancelled while it waited for a thread
                raise Cancelled()
            answer, outcome = run_encoded(call.context, call.name, call.arguments)
        except ArgumentError as exc:  # arguments only the tool can check
            outcome, error = "invalid params", (INVALID_PARAMS, str(exc))
        except Cancelled:
            outcome, error = "cancelled", cancelled(taken.msg_id)
        except Exception as exc:  # a defect of ours: said, and logged with its traceback
            log.exception("%s failed", call.name)
            error = (
                JsonRpcInternalError.CODE,
                f"{call.name} failed: {type(exc).__name__}; the server's log has the details",
            )
        finally:
            self.forget(taken)
        traced = f"{call.name}: {outcome} in {(time.monotonic() - began) * 1000:.0f} ms"
        if not progress.posted:
            self.send_taken(taken, answer, error)
            if self.protocol.trace in (None, types.TraceValue.Off):
                return
        try:  # a progress reported ends before the answer, as on the loop's way
            progress.loop.call_soon_threadsafe(self.taken_done, taken, traced, answer, error)
        except RuntimeError:  # the loop closed: the server is exiting
            pass

    def send_taken(self, taken: Taken, answer: Encoded | None, error: tuple[int, str] | None) -> None:
        if not taken.claim():
            return  # answered as cancelled
        try:
            if answer is not None:
                self.protocol._send_data(
                    JsonRPCResponseMessage(id=taken.msg_id, result=answer, jsonrpc="2.0")
                )
            elif error is not None:
                self.protocol.send_error(taken.msg_id, *error)
        except (OSError, ValueError):  # the client has gone
            pass

    def taken_done(
        self, taken: Taken, traced: str, answer: Encoded | None, error: tuple[int, str] | None
    ) -> None:
        """On the loop, after a taken call: its progress ended, then its answer sent (unless
        its thread sent it), then its trace."""
        if taken.progress.posted:
            self.after_progress(taken, partial(self.send_taken, taken, answer, error))
        self.trace(traced, lambda: json.dumps(taken.call.arguments))

    def after_progress(self, taken: Taken, send: Callable[[], None]) -> None:
        """On the loop: `send` the taken call's answer once the progress it reported has
        ended, as pygls orders them (at once when it reported none)."""
        if not taken.progress.posted:
            send()
            return

        async def end() -> None:
            await taken.progress.finish()
            send()

        task = asyncio.ensure_future(end())
        self.finishing.add(task)  # held until done: the loop keeps weak references only
        task.add_done_callback(self.finishing.discard)

    def forget(self, taken: Taken) -> None:
        self.running.discard(taken.call.context)
        if self.taken.get(taken.msg_id) is taken:
            del self.taken[taken.msg_id]

    def trace(self, message: str, verbose: Callable[[], str] | None = None) -> None:
        """`$/logTrace`, when the client asked for it with `$/setTrace` (or `trace` in
        initialize); `verbose` is computed only for the verbose level."""
        level = self.protocol.trace
        if level is None or level == types.TraceValue.Off:
            return
        detail = verbose() if verbose is not None and level == types.TraceValue.Verbose else None
        self.log_trace(types.LogTraceParams(message=message, verbose=detail))

    def position_encoding(self) -> str:
        """The negotiated encoding by its LSP name ("utf-16"): pygls gives the default as an
        enum member, whose str() is its Python name (which would key the index's copy on disk
        apart from a client's explicit "utf-16")."""
        encoding = self.workspace.position_encoding or "utf-16"
        return encoding.value if isinstance(encoding, types.PositionEncodingKind) else encoding

    # --- the workspace symbol index -------------------------------------------------------

    async def build_index(self) -> None:
        """Index the workspace in a worker thread, reporting $/progress when the client
        supports server-initiated progress."""
        self.symbol_index.encoding = self.position_encoding()
        progress = Progress(self, "lsp-agent: indexing symbols", None)
        index = self.symbol_index

        def build() -> int:
            count = index.build(
                progress.report, cancelled=self.stopping.is_set, step_aside=self.lanes.step_aside
            )
            # what the first find_symbol or definition needs made now, not by that call: the
            # index's name blocks, the tools' modules
            index.names()
            for tool in FROM_THE_INDEX:
                REGISTRY[tool]
            if self.settings.precision != "syntax":  # the SCIP indexes a question looks for
                scip.STORE.indexes(self.agent_workspace, self.settings.scip_indexes)
            return count

        try:
            count = await self.lanes.run(True, build)
            log.info("symbol index: %d files", count)
            if not self.stopping.is_set():
                self.commands.listen(self.agent_workspace.roots)
                PROCESSES.warm(self.agent_workspace.roots, self.symbol_index.encoding)
        finally:
            await progress.finish()
        if not self.stopping.is_set():  # then the use tables references answers from
            progress = Progress(self, "lsp-agent: use tables", None)
            tables = partial(
                self.symbol_index.make_tables, self.stopping.is_set, self.lanes.step_aside, progress.report
            )
            try:
                log.info("symbol index: %d use tables", await self.lanes.run(True, tables))
            finally:
                await progress.finish()

    def answer_command(self, name: str, params: Any) -> dict:
        """A one-shot command's call (from local.py's thread), run in the lanes as a client's;
        refused while files are open here or settings are the client's own (the command's
        answer would then not be the one it gives alone, from the files with the defaults)."""
        if self.agent_workspace.open_documents() or self.settings != Settings():
            return {"invalid": "this server's answers are its client's (open files, settings)"}
        try:
            arguments = self.door.check(name, params)
        except ArgumentError as exc:
            return {"invalid": str(exc)}
        call = self.door.open(name, arguments)
        assert self.loop is not None
        self.running.add(call.context)
        try:
            return asyncio.run_coroutine_threadsafe(self.door.run(call, run_tool), self.loop).result()
        finally:
            self.running.discard(call.context)

    def reindex_soon(self, path: Path, delay: float = 0.25) -> None:
        """Re-index one file after a pause in typing: the re-parse is incremental (the parse
        cache edits the previous tree of the document)."""
        if language_for(path) is None:
            return
        if (timer := self._reindex_timers.pop(path, None)) is not None:
            timer.cancel()
        loop = asyncio.get_running_loop()

        def run() -> None:
            self._reindex_timers.pop(path, None)
            loop.run_in_executor(self.lanes.heavy, self.reindex, path)

        self._reindex_timers[path] = loop.call_later(delay, run)

    def reindex(self, path: Path) -> None:
        """Re-index one file; a large one's record is made in a worker process (lanes.py)."""
        text, index = self.agent_workspace.open_text(path), self.symbol_index
        try:
            size = text.size if text is not None else path.stat().st_size
        except OSError:
            size = 0
        if size >= RECORD_IN_WORKER_BYTES and self.agent_workspace.root_of(path) is not None:
            made, record = RECORDS.record(self.agent_workspace, path, index.encoding)
            if made:
                return index.put(path, record)
        index.update(path)


# --- edits through the editor --------------------------------------------------------------

APPLY_EDIT_TIMEOUT = 60.0  # seconds an editor may take to answer workspace/applyEdit


def editor_apply_edit(ls: AgentServer, path: Path, before: Text, after: str) -> str | None:
    """Ask the editor to change `path` from `before` to `after` (`workspace/applyEdit`, from a
    tool's thread): None when it applied the edit, else why not."""
    return editor_apply_edits(ls, [(path, before, after)])


def editor_apply_edits(ls: AgentServer, items: list[tuple[Path, Text, str]]) -> str | None:
    """One `workspace/applyEdit` changing every file of `items` (path, text before, after):
    the editor applies all or none. One edit of each file's changed span, so the editor's undo
    takes back just that; versioned by the editor's document when open, so an editor whose
    buffer moved on rejects it."""
    changes: list[Any] = []
    for path, before, after in items:
        document = next((d for d in ls.workspace.text_documents.values() if d.uri.startswith("file:")
                         and real_path(d.uri) == path), None)  # fmt: skip
        uri = document.uri if document is not None else path.as_uri()
        if document is None and not path.exists():
            changes.append(types.CreateFile(uri=uri, options=types.CreateFileOptions(ignore_if_exists=True)))
        start, end, new = changed_span(before.content, after)
        encoding = ls.position_encoding()
        edit = types.TextEdit(
            range=types.Range(
                start=position(before.content, start, encoding), end=position(before.content, end, encoding)
            ),
            new_text=new,
        )
        identifier = types.OptionalVersionedTextDocumentIdentifier(
            uri=uri, version=document.version if document else None
        )
        changes.append(types.TextDocumentEdit(text_document=identifier, edits=[edit]))
    params = types.ApplyWorkspaceEditParams(
        edit=types.WorkspaceEdit(document_changes=changes), label="lsp-agent edit"
    )
    assert ls.loop is not None
    future = asyncio.run_coroutine_threadsafe(ls.workspace_apply_edit_async(params), ls.loop)
    try:
        result = future.result(APPLY_EDIT_TIMEOUT)
    except TimeoutError:
        future.cancel()
        return f"it did not answer within {APPLY_EDIT_TIMEOUT:.0f} s (it may still apply it: read the file again)"
    except Exception as exc:  # the editor answered with an error
        return f"it answered with an error ({exc})"
    if result.applied:
        return None
    return result.failure_reason or "it gave no reason"


class EditorEdits:
    """The editor's way to apply edits, for tools: called with one file, `many` for several
    in one workspace edit (a rename)."""

    def __init__(self, ls: AgentServer) -> None:
        self.ls = ls

    def __call__(self, path: Path, before: Text, after: str) -> str | None:
        return editor_apply_edits(self.ls, [(path, before, after)])

    def many(self, items: list[tuple[Path, Text, str]]) -> str | None:
        return editor_apply_edits(self.ls, items)


SEMANTIC_IDS = itertools.count(1)
WAIT_STEP = 0.05  # how often a question waiting for the editor looks at its cancel event


def ask_editor(
    ls: AgentServer, method: str, params: dict, timeout: float, cancel: threading.Event | None
) -> Any:
    """`lspAgent/semantic` to the client, from a tool's thread: sent on the event loop, which
    owns the connection, and waited for here (the loop is never blocked). Timed out or
    cancelled, the request is cancelled at the client ($/cancelRequest)."""
    assert ls.loop is not None
    ident = f"lspAgent/semantic-{next(SEMANTIC_IDS)}"
    payload = {"method": method, "params": params}

    async def send() -> concurrent.futures.Future:
        return ls.protocol.send_request(semantic_editor.METHOD, payload, msg_id=ident)

    if running_loop() is ls.loop:  # waiting here would hold up the very loop that must answer
        raise ServerFailed("the editor cannot be asked from the server's event loop")
    deadline = time.monotonic() + timeout
    try:
        pending = asyncio.run_coroutine_threadsafe(send(), ls.loop).result(timeout)
    except (TimeoutError, RuntimeError) as exc:  # the loop is closing
        raise ServerFailed(f"the editor could not be asked ({exc or 'no time'})") from None
    while not concurrent.futures.wait([pending], WAIT_STEP).done:
        stopped = cancel is not None and cancel.is_set()
        if stopped or time.monotonic() > deadline:
            ls.loop.call_soon_threadsafe(
                ls.protocol.notify, types.CANCEL_REQUEST, types.CancelParams(id=ident)
            )
            if stopped:
                raise RequestCancelled()
            raise ServerFailed(f"the editor gave no answer to {method} within {timeout:g} s")
    try:
        return pending.result()
    except Exception as exc:  # an error answer: the editor has nothing for this question
        raise semantic_editor.EditorRefused(str(exc)) from None


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


def changed_span(before: str, after: str) -> tuple[int, int, str]:
    """(start, end, new): characters start..end of `before` become `new` to make `after`;
    the span never splits a CRLF."""
    limit = min(len(before), len(after))
    start = 0
    while start < limit and before[start] == after[start]:
        start += 1
    if start and before[start - 1] == "\r":
        start -= 1
    tail = 0
    while tail < limit - start and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    if (
        tail
        and before[len(before) - tail] == "\n"
        and len(before) - tail > start
        and before[len(before) - tail - 1] == "\r"
    ):
        tail -= 1
    end, new = len(before) - tail, after[start : len(after) - tail]
    eol = "\r\n" if before.endswith("\r\n") else "\n"
    # A span ending past the final newline ends on a line that does not exist: editors that
    # keep the final newline apart from the lines (Neovim) add an empty line. The same change
    # is made just before the final newline instead.
    if (
        end == len(before)
        and before.endswith(eol)
        and (new.endswith(eol) or (not new and before[:start].endswith(eol)))
    ):
        start, end = start - len(eol), end - len(eol)
        new = eol + new[: -len(eol)] if new else ""
    return start, end, new


def position(content: str, offset: int, encoding: str) -> types.Position:
    """The LSP position of character `offset`, its column in the negotiated encoding."""
    line = content.count("\n", 0, offset)
    column = content[content.rfind("\n", 0, offset) + 1 : offset]
    if encoding == "utf-16":
        width = len(column.encode("utf-16-le", errors="surrogatepass")) // 2
    elif encoding == "utf-8":
        width = len(column.encode("utf-8", errors="surrogatepass"))
    else:
        width = len(column)
    return types.Position(line=line, character=width)


def run_encoded(ctx: Context, name: str, arguments: dict) -> tuple[Encoded, str]:
    """A tool's answer encoded in its worker thread, and the outcome to trace."""
    answer = run_tool(ctx, name, arguments)  # heavy calls in a worker process (lanes.py)
    return encoded(answer), f"error {answer['error']['code']}" if "error" in answer else "answered"


# LSP SymbolKind of each outline kind.
SYMBOL_KINDS = {
    "class": types.SymbolKind.Class,
    "constant": types.SymbolKind.Constant,
    "constructor": types.SymbolKind.Constructor,
    "enum": types.SymbolKind.Enum,
    "function": types.SymbolKind.Function,
    "impl": types.SymbolKind.Class,
    "interface": types.SymbolKind.Interface,
    "macro": types.SymbolKind.Function,
    "method": types.SymbolKind.Method,
    "module": types.SymbolKind.Module,
    "namespace": types.SymbolKind.Namespace,
    "object": types.SymbolKind.Object,
    "property": types.SymbolKind.Property,
    "record": types.SymbolKind.Struct,
    "struct": types.SymbolKind.Struct,
    "trait": types.SymbolKind.Interface,
    "type": types.SymbolKind.Class,
}


def symbol_kind(kind: str, parent_kind: str | None = None) -> types.SymbolKind:
    if kind == "constant" and parent_kind == "enum":
        return types.SymbolKind.EnumMember
    return SYMBOL_KINDS.get(kind, types.SymbolKind.Variable)


def range_dict(r: tuple[int, int, int, int]) -> dict:
    """An LSP Range as JSON: 0-based line and character of its start and end."""
    return {"start": {"line": r[0], "character": r[1]}, "end": {"line": r[2], "character": r[3]}}


def document_symbols(columns: Columns, symbols: list[Symbol], parent: str | None = None) -> list[dict]:
    """DocumentSymbols as plain dicts, made and encoded in a worker thread (a large file
    has thousands)."""
    return [
        {
            **document_symbol_head(columns, s, parent),
            "children": document_symbols(columns, s.children, s.kind),
        }
        for s in symbols
    ]


def document_symbol_head(columns: Columns, s: Symbol, parent: str | None) -> dict:
    """A DocumentSymbol without its children."""
    return {
        "name": s.name,
        "kind": int(symbol_kind(s.kind, parent)),
        "detail": s.kind,
        "range": range_dict(columns.convert(s.range)),
        "selectionRange": range_dict(columns.convert(s.selection)),
    }


# A line of a position in DocumentSymbol JSON: `{"line": ` never occurs inside a string
# there, whose quotes are escaped.
JSON_LINE = re.compile(r'\{"line": (\d+)')


def shift_lines(text: str, rows: int) -> str:
    """DocumentSymbol JSON with every position `rows` lines further down."""
    return JSON_LINE.sub(lambda m: f'{{"line": {int(m[1]) + rows}', text)


class OutlineJson:
    """The JSON of documentSymbol answers, made one symbol at a time and kept for the last
    answers of each of the most recent documents. After an edit the outline keeps the very
    objects of the symbols the edit left as they were (on lines it did not touch, see
    syntax.outline), so typing in one method encodes only that method and the symbols
    holding it; the JSON of the others is spliced in as it was."""

    def __init__(self, documents: int = 16):
        self.documents = documents
        # per document: (symbol, its parent's kind) by id -> the symbol and its JSON
        self._kept: OrderedDict[tuple[Path, str], dict[tuple[int, str | None], tuple[Symbol, str]]] = (
            OrderedDict()
        )
        self._current: dict[tuple[Path, str], int] = {}  # entries current at the last pruning
        self._lock = threading.Lock()

    def encode(self, path: Path, columns: Columns, symbols: list[Symbol]) -> Encoded:
        key = (path, columns.encoding)
        with self._lock:
            # the entries of symbols no longer in the outline go when they are as many as
            # the others (they hold their symbols, so an id is not reused meanwhile)
            made = dict(self._kept.get(key, {}))

        def one(symbol: Symbol, parent: str | None) -> str:
            kept = made.get((id(symbol), parent))
            if kept is not None and kept[0] is symbol:
                return kept[1]
            shifted = symbol.shifted_from
            origin = made.get((id(shifted[0]), parent)) if shifted is not None else None
            if shifted is not None and origin is not None and origin[0] is shifted[0]:
                text = shift_lines(origin[1], shifted[1])  # lines typed or taken out above it
            else:  # as json.dumps writes the dict of document_symbols, its children spliced in
                head = json.dumps(document_symbol_head(columns, symbol, parent))
                text = (
                    f'{head[:-1]}, "children": [{", ".join(one(c, symbol.kind) for c in symbol.children)}]}}'
                )
            made[id(symbol), parent] = symbol, text
            return text

        answer = Encoded("[" + ",".join(one(symbol, None) for symbol in symbols) + "]")
        if len(made) > 2 * self._current.get(key, 0) + 64:
            current = {id(s) for s in walk(symbols)}
            made = {k: v for k, v in made.items() if k[0] in current}
            self._current[key] = len(made)
        with self._lock:
            self._kept[key] = made
            self._kept.move_to_end(key)
            while len(self._kept) > self.documents:
                self._current.pop(self._kept.popitem(last=False)[0], None)
        return answer


PROGRESS_EVERY = 0.1  # seconds between two reports of one piece of work


class Progress:
    """$/progress for one tool call: the client's workDoneToken if it sent one, else a
    server-created token when the client supports work-done progress; created lazily,
    on the tool's first report."""

    def __init__(
        self, server: AgentServer, title: str, token: Any, loop: asyncio.AbstractEventLoop | None = None
    ):
        self.server = server
        self.title = title
        self.token = token
        self.loop = loop or asyncio.get_running_loop()
        self.started: asyncio.Task | None = None
        self.last = -PROGRESS_EVERY
        self.posted = False  # a report was sent to the loop

    def report(self, message: str, percentage: int | None = None) -> None:  # called from tool threads
        if self.server.stopping.is_set() or self.loop.is_closed():
            return  # the client is going away: nobody to report to
        now = time.monotonic()
        if now - self.last < PROGRESS_EVERY:
            return  # the event loop is shared with every request: no flood of reports
        self.last = now
        self.posted = True
        try:
            self.loop.call_soon_threadsafe(self._report, message, percentage)
        except RuntimeError:  # the loop closed since the check
            pass

    def _report(self, message: str, percentage: int | None) -> None:
        if self.server.stopping.is_set():
            return  # queued before shutdown
        if self.started is None:
            self.started = self.loop.create_task(self._begin(message, percentage))
        elif self.started.done() and self.started.result():
            self.server.work_done_progress.report(
                self.token, types.WorkDoneProgressReport(message=message, percentage=percentage)
            )

    async def _begin(self, message: str, percentage: int | None) -> bool:
        if self.token is None:
            caps = self.server.client_capabilities
            if not (caps and caps.window and caps.window.work_done_progress):
                return False
            self.token = f"lsp-agent-{next(self.server._tokens)}"
            try:
                await self.server.work_done_progress.create_async(self.token)
            except Exception:
                return False
        self.server.work_done_progress.begin(
            self.token,
            types.WorkDoneProgressBegin(
                title=self.title, message=message, percentage=percentage, cancellable=False
            ),
        )
        return True

    async def finish(self) -> None:
        if self.started is None or self.server.stopping.is_set():
            return
        # After shutdown the output may be closed already (a cancelled index build ends here
        # while `exit` tears the loop down): the client is going away, nothing to end.
        if await self.started and not self.server.stopping.is_set():
            self.server.work_done_progress.end(self.token, types.WorkDoneProgressEnd(message="done"))


class ClientLog(logging.Handler):
    """The server's warnings and errors, sent to the client as `window/logMessage` (editors
    show them in the server's output panel). Tracebacks stay in the log file."""

    def __init__(self, server: AgentServer) -> None:
        super().__init__(logging.WARNING)
        self.server = server

    def emit(self, record: logging.LogRecord) -> None:
        loop = self.server.loop
        if loop is None or loop.is_closed() or self.server.stopping.is_set():
            return
        if record.funcName == "_send_data":  # sending failed: sending that would fail too
            return
        kind = types.MessageType.Error if record.levelno >= logging.ERROR else types.MessageType.Warning
        params = types.LogMessageParams(type=kind, message=f"{record.name}: {record.getMessage()}")
        try:
            loop.call_soon_threadsafe(self.server.window_log_message, params)
        except RuntimeError:  # the loop closed since the check
            pass


class InvalidParamsInOneLine(logging.Filter):
    """pygls logs every JSON-RPC error answer with its traceback; an InvalidParams answer
    is the caller's mistake, already answered with a message naming the argument, so it is
    logged as that one line."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, JsonRpcInvalidParams):
            record.msg, record.args, record.exc_info, record.exc_text = (
                f"invalid params: {error}",
                (),
                None,
                None,
            )
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


# --- handlers: each takes the server and the request's params ---------------------------


def initialize(ls: AgentServer, params: types.InitializeParams) -> None:
    ls.loop = asyncio.get_running_loop()
    ls.client_name = params.client_info.name[:80] if params.client_info else None
    folders = [f.uri for f in params.workspace_folders or []]
    if not folders and params.root_uri:
        folders = [params.root_uri]
    elif not folders and params.root_path:
        folders = [params.root_path]
    usable: list[str | Path] = []
    for folder in folders:
        try:
            path = uri_to_path(folder) if folder.startswith("file:") else Path(folder)
        except (Refusal, ValueError):
            path = None
        if path is not None and path.is_dir():
            usable.append(path)
        else:
            ls.pending_messages.append(f"workspace folder {folder} is not a local directory; ignored.")
    if usable:
        ls.agent_workspace.set_roots(usable)
    # CLI flags set the server's defaults; initializationOptions override them, and the
    # client's configuration (pulled after `initialized`) overrides both.
    options = standard_navigation(ls, params.initialization_options)
    ls.settings, problems = ls.settings.updated(options)
    ls.initial_settings = ls.settings
    ls.pending_messages += problems
    if params.trace is not None:
        ls.protocol.trace = params.trace


# Opt-in standard navigation: textDocument/definition, references and implementation
# answered by the navigation tools (by name, through imports), for editors where no other
# server answers them. Off by default: beside a language server of its own an editor would
# show both answers. lsp-agent's own editor plugins never turn it on.
NAVIGATION_OPTIONS = ("standardNavigation", "standard_navigation")
Positioned = types.DefinitionParams | types.ReferenceParams | types.ImplementationParams


def standard_navigation(ls: AgentServer, options: Any) -> Any:
    """The initializationOptions without the navigation option, which (when true) registers
    the standard requests before pygls computes the capabilities from the features."""
    if not isinstance(options, dict) or not any(k in options for k in NAVIGATION_OPTIONS):
        return options
    wanted = next(options[k] for k in NAVIGATION_OPTIONS if k in options)
    if wanted is True:
        for method, handler in NAVIGATION.items():
            if method not in ls.protocol.fm.features:
                ls.feature(method)(handler)
    elif wanted is not False:
        ls.pending_messages.append(
            f"option standardNavigation={wanted!r} is invalid (true or false); ignored."
        )
    return {k: v for k, v in options.items() if k not in NAVIGATION_OPTIONS}


def tool_position(ls: AgentServer, params: Positioned) -> tuple[Path, Text, dict] | None:
    """The path, text and (1-based line, column in characters) arguments of a position."""
    try:
        path = ls.agent_workspace.resolve(params.text_document.uri)
        text = ls.agent_workspace.text(path)
    except Refusal:
        return None
    row = params.position.line
    if row >= text.line_count:
        return None
    line = text.line(row + 1)
    column = characters(line, params.position.character, ls.position_encoding())
    return path, text, {"path": str(path), "line": row + 1, "column": column + 1}


def characters(line: str, units: int, encoding: str) -> int:
    """The index in `line` of the character at `units` code units of `encoding`."""
    if encoding == "utf-32" or line.isascii():
        return min(units, len(line))
    size = 2 if encoding == "utf-16" else 1
    counted = 0
    for index, char in enumerate(line):
        width = len(char.encode("utf-16-le" if size == 2 else "utf-8", "surrogatepass")) // size
        if counted + width > units:
            return index
        counted += width
    return len(line)


def lsp_location(ls: AgentServer, relative: str, line: int, column: int | None, name: str) -> dict | None:
    """A Location at 1-based `line` and `column` (code points), or at `name` from that line on."""
    try:
        path = ls.agent_workspace.resolve(relative)
        text = ls.agent_workspace.text(path)
    except Refusal:
        return None
    row, start = line - 1, (column - 1 if column else 0)
    if column is None:  # a definition's first line may be a decorator: its name comes later
        for number in range(line, min(line + 20, text.line_count) + 1):
            if (found := text.line(number).find(name)) >= 0:
                row, start = number - 1, found
                break
    encoding = ls.position_encoding()
    convert = Columns(text, encoding).column
    source = text.line(row + 1).encode("utf-8", "surrogatepass")
    first = convert(row, len(text.line(row + 1)[:start].encode("utf-8", "surrogatepass")))
    last = convert(
        row, min(len(source), len(text.line(row + 1)[: start + len(name)].encode("utf-8", "surrogatepass")))
    )
    return {"uri": path.as_uri(), "range": range_dict((row, first, row, last))}


async def navigate(ls: AgentServer, params: Positioned, tool: str, extra: dict) -> list[dict]:
    """The Locations a navigation tool answers for a position (an empty list when none),
    through the door kit like any tool call."""
    at = await ls.lanes.run(False, tool_position, ls, params)
    if at is None:
        return []
    arguments = at[2] | extra
    if tool == "find_symbol":  # implementations: the subclasses of the class named there
        name = word_at(at[1].line(arguments["line"]), arguments["column"] - 1)
        if not name:
            return []
        arguments = {"extends": name, **extra}
    try:
        reply = await ls.door.run(ls.door.open(tool, ls.door.check(tool, arguments)))
    except ArgumentError:
        return []
    return await ls.lanes.run(False, locations, ls, reply)


def locations(ls: AgentServer, reply: dict) -> list[dict]:
    """The Locations of a definition, references or find_symbol answer, each at its name."""
    if "references" in reply:
        name = reply.get("name", "")
        found = [(r["path"], r["line"], r["column"], name) for r in reply["references"]]
    else:
        defined = reply.get("definitions", reply.get("matches", []))
        found = [(d["path"], d["start_line"], None, d["name_path"].rsplit("/", 1)[-1]) for d in defined]
    return [loc for where in found if (loc := lsp_location(ls, *where)) is not None]


async def standard_definition(ls: AgentServer, params: types.DefinitionParams) -> list[dict]:
    return await navigate(ls, params, "definition", {"body": False})


async def standard_references(ls: AgentServer, params: types.ReferenceParams) -> list[dict]:
    roles = CODE_ROLES if params.context.include_declaration else CODE_ROLES - {"definition"}
    return await navigate(ls, params, "references", {"roles": sorted(roles), "max_chars": 20_000})


async def standard_implementation(ls: AgentServer, params: types.ImplementationParams) -> list[dict]:
    return await navigate(ls, params, "find_symbol", {"max_chars": 20_000})


def word_at(line: str, index: int) -> str:
    start = end = index
    while start > 0 and (line[start - 1].isalnum() or line[start - 1] == "_"):
        start -= 1
    while end < len(line) and (line[end].isalnum() or line[end] == "_"):
        end += 1
    return line[start:end]


# Uses in code (not comments and strings), which an editor's "references" lists.
CODE_ROLES = {"definition", "import", "inheritance", "call", "attribute", "type", "use"}
NAVIGATION: dict[str, Callable[..., Any]] = {
    types.TEXT_DOCUMENT_DEFINITION: standard_definition,
    types.TEXT_DOCUMENT_REFERENCES: standard_references,
    types.TEXT_DOCUMENT_IMPLEMENTATION: standard_implementation,
}


def shutdown(ls: AgentServer, params: Any) -> None:
    ls.stop_work()


async def initialized(ls: AgentServer, params: types.InitializedParams) -> None:
    for message in ls.pending_messages:
        warn(ls, message)
    ls.pending_messages.clear()
    # What is loaded by now (modules, the grammars' queries) lives as long as the process:
    # out of the garbage collector's view, a full collection (every few dozen outlines while
    # typing) walks only what came since, not 60,000 objects holding the GIL for 50 ms.
    gc.freeze()
    ls.index_task = asyncio.ensure_future(ls.build_index())
    await pull_configuration(ls)
    caps = ls.client_capabilities.workspace
    if caps and caps.did_change_watched_files and caps.did_change_watched_files.dynamic_registration:
        await watch_files(ls)


async def pull_configuration(ls: AgentServer) -> None:
    """Settings from the client's configuration section `lspAgent`, as other servers read
    theirs: after `initialized` and on every `workspace/didChangeConfiguration`."""
    caps = ls.client_capabilities.workspace
    if not (caps and caps.configuration):
        return
    try:
        [section] = await ls.workspace_configuration_async(
            types.ConfigurationParams(items=[types.ConfigurationItem(section=CONFIGURATION_SECTION)])
        )
    except Exception as exc:  # a client that advertises configuration but fails to answer
        log.warning("workspace/configuration failed: %s", exc)
        return
    apply_configuration(ls, section)


def apply_configuration(ls: AgentServer, section: Any) -> None:
    settings, problems = ls.initial_settings.updated(section, source="configuration")
    if settings != ls.settings:
        log.info("settings: %s", settings)
    ls.settings = settings
    for problem in problems:
        warn(ls, problem)


def warn(ls: AgentServer, message: str) -> None:
    """A problem the user can fix (a bad option, an unusable folder): shown, and logged."""
    log.warning(message)
    ls.window_show_message(
        types.ShowMessageParams(type=types.MessageType.Warning, message=f"lsp-agent: {message}")
    )


async def configuration_changed(ls: AgentServer, params: types.DidChangeConfigurationParams) -> None:
    caps = ls.client_capabilities.workspace
    if caps and caps.configuration:
        await pull_configuration(ls)
    elif isinstance(params.settings, dict) and CONFIGURATION_SECTION in params.settings:
        apply_configuration(ls, params.settings[CONFIGURATION_SECTION])  # a client that only pushes


async def watch_files(ls: AgentServer) -> None:
    """Files changed outside the editor (git checkout, a formatter) keep the index current."""
    glob = "**/*{" + ",".join(sorted(EXTENSIONS)) + "}"
    registration = types.Registration(
        id="lsp-agent-watch",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(
            watchers=[types.FileSystemWatcher(glob_pattern=glob)]
        ),
    )
    try:
        await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
    except Exception as exc:
        log.info("file watcher not registered: %s", exc)


def real_path(uri: str) -> Path:
    """The path of a file:// URI, symlinks resolved (a symlink loop resolves to itself
    instead of raising, as Path.resolve does)."""
    return Path(os.path.realpath(uri_to_path(uri)))


def watched_files_changed(ls: AgentServer, params: types.DidChangeWatchedFilesParams) -> None:
    for change in params.changes:
        if not is_local_file_uri(change.uri):
            continue
        path = real_path(change.uri)
        if change.type == types.FileChangeType.Deleted:
            ls.symbol_index.remove(path)
        else:
            ls.reindex_soon(path, delay=0)


async def document_symbol(ls: AgentServer, params: types.DocumentSymbolParams) -> Encoded | None:
    encoding = ls.position_encoding()

    def run() -> Encoded | None:
        try:
            path = ls.agent_workspace.resolve(params.text_document.uri)
            text = ls.agent_workspace.text(path)
        except Refusal:
            return None
        return ls.outline_json.encode(path, Columns(text, encoding), outline(path, text))

    try:
        heavy = outline_is_heavy(ls.agent_workspace.resolve(params.text_document.uri))
    except Refusal:
        heavy = False
    return await ls.lanes.run(heavy, run)


def outline_is_heavy(path: Path) -> bool:
    """An outline of a small file is light, and so is one of a file parsed before (as an
    editor's buffer is after each change): the re-parse is incremental, and only the
    definition holding the edit is queried again. A first outline of a large file is not."""
    try:
        return not PARSES.holds(path) and path.stat().st_size > SMALL_FILE_BYTES
    except OSError:
        return False


async def workspace_symbol(ls: AgentServer, params: types.WorkspaceSymbolParams) -> Encoded:
    # Answers from what is indexed so far while the background index is being built. Off
    # the request loop, as a broad query over a large workspace takes a while, and encoded
    # there too (up to 500 symbols: a request queued behind would wait for that).
    def run() -> Encoded:
        return encoded(
            [
                {
                    "name": entry.name,
                    "kind": int(symbol_kind(entry.kind)),
                    **({"containerName": entry.container} if entry.container else {}),
                    # the name's range: an editor jumps there, not to a decorator above it
                    "location": {"uri": path.as_uri(), "range": range_dict(entry.selection)},
                }
                for path, entry in ls.symbol_index.query(params.query)
            ]
        )

    return await ls.lanes.run(False, run)  # light: it filters what is indexed, never parses


def folders_changed(ls: AgentServer, params: types.DidChangeWorkspaceFoldersParams) -> None:
    roots: list[str | Path] = list(ls.agent_workspace.roots)
    for removed in params.event.removed:
        roots = [r for r in roots if r != real_path(removed.uri)]
    roots += [uri_to_path(a.uri) for a in params.event.added if is_local_file_uri(a.uri)]
    if roots:
        ls.agent_workspace.set_roots([r for r in roots if Path(r).is_dir()])
        ls.index_task = asyncio.ensure_future(ls.build_index())  # files of new roots, none of old ones


# The overlay: pygls applies full and incremental changes (in the negotiated position
# encoding); tools then see the buffer's text instead of the disk.
def sync(ls: AgentServer, uri: str) -> None:
    if not is_local_file_uri(uri):  # another scheme, or a file of another host
        return
    document = ls.workspace.get_text_document(uri)
    path = real_path(uri)
    if same_as_disk(path, document.source):  # opened and not edited, or saved: nothing unsaved
        ls.agent_workspace.hold_document(uri)  # but still open: edits must not go behind it
    else:
        ls.agent_workspace.open_document(uri, document.source)
    ls.reindex_soon(path)


def same_as_disk(path: Path, source: str) -> bool:
    """Whether a buffer holds what its file does (the size first: most edits change it)."""
    data = source.encode("utf-8", "surrogatepass")
    try:
        return path.stat().st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def did_open(ls: AgentServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lost_documents.discard(params.text_document.uri)
    sync(ls, params.text_document.uri)


def did_change(ls: AgentServer, params: types.DidChangeTextDocumentParams) -> None:
    uri = params.text_document.uri
    if uri in ls.lost_documents:  # only the whole text makes the buffer known again
        if not any(getattr(c, "range", None) is None for c in params.content_changes):
            return
        ls.lost_documents.discard(uri)
    sync(ls, uri)


def did_save(ls: AgentServer, params: types.DidSaveTextDocumentParams) -> None:
    sync(ls, params.text_document.uri)  # the disk now holds the buffer


def did_close(ls: AgentServer, params: types.DidCloseTextDocumentParams) -> None:
    if is_local_file_uri(params.text_document.uri):
        ls.agent_workspace.close_document(params.text_document.uri)
        ls.reindex_soon(real_path(params.text_document.uri))  # back to the disk's text


def tool_catalog(ls: AgentServer, params: Any) -> dict:
    include_runtime = isinstance(params, dict) and params.get("all") is True
    return {"tools": catalog(include_runtime=include_runtime, edits=ls.settings.edits == "on")}


async def tool_request(ls: AgentServer, params: Any, *, tool: str) -> Encoded:
    """`lspAgent/<tool>`: the registry's tool, run in a worker thread."""
    return await ls.run_tool(tool, params)


def tool_command(ls: AgentServer, *args: Any, tool: str) -> None:
    """Registered so initialize advertises `lspAgent.<tool>`; AgentProtocol runs commands."""
    raise JsonRpcMethodNotFound(f"{COMMAND_PREFIX}{tool}")


FEATURES: dict[str, Callable[..., Any]] = {
    types.INITIALIZE: initialize,
    types.INITIALIZED: initialized,
    types.SHUTDOWN: shutdown,
    types.TEXT_DOCUMENT_DID_OPEN: did_open,
    types.TEXT_DOCUMENT_DID_CHANGE: did_change,
    types.TEXT_DOCUMENT_DID_CLOSE: did_close,
    types.TEXT_DOCUMENT_DID_SAVE: did_save,
    types.TEXT_DOCUMENT_DOCUMENT_SYMBOL: document_symbol,
    types.WORKSPACE_SYMBOL: workspace_symbol,
    types.WORKSPACE_DID_CHANGE_WATCHED_FILES: watched_files_changed,
    types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS: folders_changed,
    types.WORKSPACE_DID_CHANGE_CONFIGURATION: configuration_changed,
    f"{METHOD_PREFIX}tools": tool_catalog,
}


def create_server(settings: Settings | None = None, roots: list[str | Path] | None = None) -> AgentServer:
    server = AgentServer(settings, roots)
    for method, handler in FEATURES.items():
        server.feature(method)(handler)
    for name in REGISTRY:
        server.feature(f"{METHOD_PREFIX}{name}")(partial(tool_request, tool=name))
        server.command(f"{COMMAND_PREFIX}{name}")(partial(tool_command, tool=name))
    return server
