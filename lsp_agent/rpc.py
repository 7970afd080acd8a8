"""Strict JSON-RPC 2.0 and the LSP lifecycle in front of pygls.

pygls logs and drops what it cannot parse, so a client that sent a bad frame waits forever
for an answer. Here every message gets the answer the specifications name:

- a body that is not UTF-8 or not JSON: Parse error (-32700), id null;
- JSON that is not a request, notification or response (a batch, a numeric method, an id
  that is null, an object, an array or a boolean, a non-structured params): Invalid
  Request (-32600), with the request's id when it has a valid one, else null;
- params that do not fit the method (documentSymbol without a document): Invalid params
  (-32602);
- a request before `initialize`: ServerNotInitialized (-32002); a second `initialize`
  and any request after `shutdown`: Invalid Request (-32600), as LSP says. Notifications
  then are dropped, except `exit`.

Framing is read by a thread of its own, which also decodes the JSON, so the event loop only
dispatches whole messages; a tool's request read when the loop has dispatched every message
before it goes from that thread straight to the tool's (Intake, `take`). Garbage between frames is skipped up to the next
`Content-Length` header and answered with one Parse error. A Content-Length over
MAX_MESSAGE_BYTES cannot be followed (nothing after it can be trusted to be a frame): the
server says so on stderr and exits with EXIT_OVERSIZED.

Exit codes of `lsp-agent serve` on stdio: 0 after `shutdown` and `exit`, or when the client
closes the stream; 1 on `exit` without `shutdown` (LSP); EXIT_OVERSIZED (65) as above.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import re
import select
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.workspace import TextDocument

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002

# The largest message body accepted: an editor's didOpen of the largest text the workspace
# serves (256 MiB) still fits once escaped.
MAX_MESSAGE_BYTES = 512 * 1024 * 1024
MAX_HEADER_LINE = 64 * 1024
EXIT_OVERSIZED = 65  # sysexits' EX_DATAERR: the input was not in a form that can be read

CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\S*)", re.IGNORECASE)


class Oversized(Exception):
    pass


class Stream:
    """A binary stream with bytes pushed back in front of it."""

    def __init__(self, raw: BinaryIO):
        self.raw = raw
        self.pushed = b""

    def readline(self, limit: int) -> bytes:
        if not self.pushed:
            return self.raw.readline(limit)
        end = self.pushed.find(b"\n", 0, limit)
        cut = end + 1 if end >= 0 else min(limit, len(self.pushed))
        line, self.pushed = self.pushed[:cut], self.pushed[cut:]
        if end < 0 and len(line) < limit:
            line += self.raw.readline(limit - len(line))
        return line

    def read(self, size: int) -> bytes:
        data, self.pushed = self.pushed[:size], self.pushed[size:]
        return data + self.raw.read(size - len(data)) if len(data) < size else data

    def push(self, data: bytes) -> None:
        self.pushed = data + self.pushed


class ParseFailure:
    def __init__(self, message: str):
        self.message = message


def messages(raw: BinaryIO) -> Iterator[Any]:
    """Each message of the stream, decoded (a JSON value) or a ParseFailure saying what
    could not be read; ends with the stream; raises Oversized for a Content-Length that
    cannot be followed.

    Resynchronises after garbage: bytes before a Content-Length header are skipped, and a
    body that is not JSON but holds a Content-Length header (a frame that announced more
    bytes than it had) is read again from that header, so the next good frame is found.
    """
    stream = Stream(raw)
    while True:
        length: int | None = None
        seen = garbage = False
        while True:
            line = stream.readline(MAX_HEADER_LINE)
            if not line:
                return
            if not line.strip():
                if seen:
                    break
                continue  # blank lines between frames
            seen = True
            match = CONTENT_LENGTH.search(line)
            if match is None:  # other headers (Content-Type) are ignored
                garbage = garbage or b":" not in line or not line.endswith(b"\n")
                continue
            garbage = garbage or match.start() > 0
            value = match.group(1)
            length = int(value) if value.isdigit() else None
            garbage = garbage or length is None
            if length is not None and length > MAX_MESSAGE_BYTES:
                raise Oversized(length)
        if length is None:
            yield ParseFailure("a frame without a valid Content-Length header was skipped")
            continue
        body = stream.read(length)
        if len(body) < length:
            return
        if garbage:
            yield ParseFailure("bytes that are not a frame header were skipped")
        message = decode(body)
        if isinstance(message, ParseFailure) and (resync := CONTENT_LENGTH.search(body)) is not None:
            stream.push(body[resync.start() :])
        yield message


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def decode(body: bytes) -> Any:
    """The JSON value of a body, or a ParseFailure saying what is wrong with it."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as exc:
        return ParseFailure(f"the message body is not valid UTF-8 ({exc.reason} at byte {exc.start})")
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        return ParseFailure(f"the message body is not valid JSON ({str(exc)[:200]})")


def valid_id(value: Any) -> bool:
    """LSP ids are integers or strings (JSON-RPC also allows null, but discourages it, and
    LSP does not)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def envelope_error(message: Any) -> tuple[Any, str] | None:
    """(the id to answer, why) when `message` is not a JSON-RPC 2.0 message LSP allows."""
    if isinstance(message, list):
        return None, "batches are not part of LSP; send one message per frame" if message else "empty batch"
    if not isinstance(message, dict):
        return None, f"a message is a JSON object, not {type(message).__name__}"
    if "method" not in message and ("result" in message or "error" in message):
        # A response, even a malformed one, is never answered: two strict peers would
        # answer each other's errors forever. pygls logs what it cannot match.
        return None
    msg_id = message.get("id")
    answer_id = msg_id if valid_id(msg_id) else None
    if message.get("jsonrpc") != "2.0":
        return answer_id, 'the member "jsonrpc" must be exactly "2.0"'
    if "id" in message and not valid_id(msg_id):
        return None, f"an id is an integer or a string, not {json.dumps(msg_id)[:50]}"
    if "method" in message:
        if not isinstance(message["method"], str):
            return answer_id, "the method must be a string"
        if not isinstance(message.get("params"), dict | list | None):
            return answer_id, "params must be an object or an array"
        return None
    return answer_id, "neither a request, a notification nor a response"


class Encoded(str):
    """A result already encoded as JSON, in the worker thread that made it. The event loop
    is shared by every request: encoding there a result of thousands of symbols (pygls
    unstructures it, then dumps it) held up every request behind it for tens of
    milliseconds. The loop only splices an Encoded result into its response."""


def encoded(value: Any) -> Encoded:
    return Encoded(json.dumps(value))  # ASCII: Content-Length counts characters and bytes alike


class StrictProtocol(LanguageServerProtocol):
    """The LSP lifecycle enforced for every transport; see the module docstring."""

    initialize_received = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sending: set[asyncio.Future] = set()

    def _send_data(self, data: Any) -> None:
        result = getattr(data, "result", None)
        if not isinstance(result, Encoded) or self.writer is None:
            super()._send_data(data)
            return
        body = f'{{"jsonrpc":"2.0","id":{json.dumps(data.id)},"result":{result}}}'.encode()
        frame = b"Content-Length: %d\r\n\r\n%b" % (len(body), body) if self._include_headers else body
        try:
            written = self.writer.write(frame)
            if inspect.isawaitable(written):  # the websocket transport
                sending = asyncio.ensure_future(written)
                self._sending.add(sending)  # held until sent: the loop keeps weak references only
                sending.add_done_callback(self._sending.discard)
        except BrokenPipeError:
            raise
        except Exception as error:  # as pygls does for the responses it encodes
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)

    def change_out_of_range(self, params: Any) -> str | None:
        """Why a didChange cannot apply to the buffer as the server has it (a range on a line
        past its end: the editor's buffer is another), or None. Checked change by change on
        a copy of the text, since each range is in the text the ones before it made."""
        document = self._server.workspace.text_documents.get(params.text_document.uri)
        if document is None:
            return None
        copy = TextDocument(document.uri, document.source, position_codec=document.position_codec)
        for n, change in enumerate(params.content_changes):
            if (bad := getattr(change, "range", None)) is not None:
                lines = len(copy.lines)
                if max(bad.start.line, bad.end.line) > lines or (bad.start.line, bad.start.character) > (bad.end.line, bad.end.character):  # fmt: skip
                    return f"a change at lines {bad.start.line + 1}-{bad.end.line + 1} of a buffer of {lines} lines"
            if n + 1 < len(params.content_changes):  # the last one is checked: no need to apply it
                apply_change(copy, change)
        return None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams) -> Any:
        """pygls's, each change applied by apply_change."""
        for change in params.content_changes:
            document = self.workspace.text_documents.get(unquote(params.text_document.uri))
            if document is None:  # as pygls fails
                self.workspace.update_text_document(params.text_document, change)
                continue
            apply_change(document, change)
            document.version = params.text_document.version
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None

    def document_lost(self, uri: str, why: str) -> None:
        """A change could not be applied: the server's copy of the buffer is no longer the
        editor's. The server overrides this to stop serving the copy (see AgentServer)."""

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        # A plain dict: the converter would drop an id of null, which JSON-RPC requires.
        self._send_data({"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}})

    def _execute_handler(
        self, msg_id: Any, handler: Any, callback: Any, args: Any = None, kwargs: Any = None
    ) -> None:
        """pygls keeps the future of every async, threaded or generator handler under its id
        until a response is sent, so notifications (each didChange) and the inner steps of
        its generator handlers were never removed: the table grew for the whole session.
        Finished ones are dropped before each handler starts (not from their callbacks:
        pygls cancels the table's futures while iterating over it at shutdown)."""
        for finished in [key for key, future in self._request_futures.items() if future.done()]:
            del self._request_futures[finished]
        super()._execute_handler(msg_id, handler, callback, args, kwargs)

    def admit(self, method: str | None, msg_id: Any, is_request: bool) -> bool:
        """Whether the lifecycle lets this message through; answers a request it stops."""
        if method == types.EXIT or method is None:
            return True
        if self._shutdown:
            if is_request:
                self.send_error(msg_id, INVALID_REQUEST, f"{method}: the server has been shut down")
            return False
        if method == types.INITIALIZE:
            if self.initialize_received:
                self.send_error(msg_id, INVALID_REQUEST, "initialize may be sent only once")
                return False
            self.initialize_received = True
        elif not self.initialize_received:
            if is_request:
                self.send_error(msg_id, SERVER_NOT_INITIALIZED, f"{method}: send initialize first")
            return False
        return True

    def take(self, message: Any) -> bool:
        """Whether the stream's reader handed `message` to a thread of its own; False: the
        event loop dispatches it."""
        return False

    def handle_message(self, message: Any) -> None:
        """Messages of the transports pygls reads itself (TCP, websocket)."""
        method = getattr(message, "method", None)
        if self.admit(method, getattr(message, "id", None), method is not None and hasattr(message, "id")):
            super().handle_message(message)

    def dispatch(self, message: Any) -> None:
        """One decoded message from the stream: checked, structured, handled."""
        if isinstance(message, ParseFailure):
            self.send_error(None, PARSE_ERROR, f"Parse error: {message.message}")
            return
        if (problem := envelope_error(message)) is not None:
            self.send_error(problem[0], INVALID_REQUEST, f"Invalid Request: {problem[1]}")
            return
        method, msg_id = message.get("method"), message.get("id")
        is_request = method is not None and "id" in message
        if not self.admit(method, msg_id, is_request):
            return
        try:
            structured = self.structure_message(message)
        except Exception:
            if is_request:
                self.send_error(msg_id, INVALID_PARAMS, f"{method}: invalid params")
            else:
                log.warning("dropped a notification with invalid params: %s", method)
                if method == "textDocument/didChange" and isinstance(uri := document_uri(message), str):
                    self.document_lost(uri, "a change with positions that are not valid")
            return
        if method == "textDocument/didChange" and (why := self.change_out_of_range(structured.params)):
            self.document_lost(structured.params.text_document.uri, why)
            return
        try:
            super().handle_message(structured)
        except Exception:  # pygls answers handler errors itself; this is a bug of ours
            log.exception("unhandled error handling %s", method)


def apply_change(document: TextDocument, change: Any) -> None:
    """document.apply_change, with the text it makes, in one pass of C over the text: pygls
    rebuilds it line by line in Python (7 ms for a change to a 9,000-line buffer)."""
    if (
        not isinstance(change, types.TextDocumentContentChangePartial)
        or not document._is_sync_kind_incremental
    ):
        document.apply_change(change)
        return
    source = document.source
    lines = source.splitlines(True)  # the lines as pygls counts them
    span = document.position_codec.range_from_client_units(lines, change.range)
    first, last = span.start.line, span.end.line
    if not 0 <= first <= last < len(lines):  # pygls's own way with what it cannot find
        document.apply_change(change)
        return
    offset = sum(map(len, lines[:first]))  # (the codec keeps a column within its line)
    start = offset + span.start.character
    end = offset + sum(map(len, lines[first:last])) + span.end.character
    document._source = source[:start] + change.text + source[end:]


def document_uri(message: dict) -> Any:
    """params.textDocument.uri of a raw message, None where it has none."""
    params = message.get("params")
    document = params.get("textDocument") if isinstance(params, dict) else None
    return document.get("uri") if isinstance(document, dict) else None


class FrameWriter:
    """Writes each frame whole, from any thread: straight to the file descriptor, waiting
    while the pipe is full. A buffered write on a descriptor someone made non-blocking (the
    pipe is shared with whatever else holds it) drops the part that did not fit."""

    def __init__(self, stdout: BinaryIO):
        self._stdout = stdout
        self._lock = threading.Lock()
        try:
            stdout.flush()
            self._fd: int | None = stdout.fileno()
        except (AttributeError, OSError, ValueError):  # an in-memory stream (tests)
            self._fd = None

    def close(self) -> None:
        self._stdout.close()

    def write(self, data: bytes) -> None:
        with self._lock:
            if self._fd is None:
                self._stdout.write(data)
                self._stdout.flush()
                return
            view = memoryview(data)
            while view:
                try:
                    view = view[os.write(self._fd, view) :]
                except BlockingIOError:
                    select.select([], [self._fd], [])


MAX_QUEUED = 64


def report_oversized(length: int) -> None:
    print(
        f"lsp-agent: a message announced Content-Length {length:,}, over the limit of "
        f"{MAX_MESSAGE_BYTES:,} bytes; the stream cannot be followed past it. "
        f"Exiting with code {EXIT_OVERSIZED}.",
        file=sys.stderr,
        flush=True,
    )


class Intake:
    """The messages the stream's reader thread hands on, from it to the event loop.

    Back-pressure: at most MAX_QUEUED messages read and not yet dispatched. The loop stops
    dispatching while a write blocks (a client that does not read its answers), and then
    the reader stops reading, so the client's writes block in turn.

    A tool's request may go from the reader straight to a thread of its own (`take`),
    without two hops through the loop, but only once the loop has dispatched every message
    read before it: a change sent before a question is applied before it is answered."""

    def __init__(self, protocol: StrictProtocol, loop: asyncio.AbstractEventLoop, stop: threading.Event):
        self.protocol, self.loop, self.stop = protocol, loop, stop
        self.queued = threading.Semaphore(MAX_QUEUED)
        self.posted = 0  # (the reader's count)
        self.dispatched = 0  # of those, dispatched (the loop's count)

    def hand_on(self, message: Any) -> bool:
        """In the reader: `message` taken or posted to the loop; False once stopped."""
        while not self.queued.acquire(timeout=0.5):
            if self.stop.is_set():
                return False
        if self.posted == self.dispatched and self.protocol.take(message):
            self.queued.release()  # (taken calls are bounded apart: server.MAX_TAKEN)
            return True
        self.posted += 1
        self.post(self.dispatch, message)
        return True

    def post(self, callback: Callable[..., None], *args: Any) -> None:
        try:
            self.loop.call_soon_threadsafe(callback, *args)
        except RuntimeError:  # the loop closed: the server is exiting
            pass

    def dispatch(self, message: Any) -> None:
        self.queued.release()
        try:
            self.protocol.dispatch(message)
        finally:  # counted after the first step of any task it started (one queued before)
            self.loop.call_soon(self.count_dispatched)

    def count_dispatched(self) -> None:
        self.dispatched += 1


def serve_stdio(protocol: StrictProtocol, stdin: BinaryIO, stdout: BinaryIO, stop: threading.Event) -> int:
    """Serve `protocol` on a byte stream until `exit`, the end of the stream or a frame that
    cannot be followed; the exit code."""
    protocol.set_writer(FrameWriter(stdout))

    async def main() -> int:
        loop = asyncio.get_running_loop()
        finished: asyncio.Future[int] = loop.create_future()
        intake = Intake(protocol, loop, stop)

        def finish(code: int) -> None:
            if not finished.done():
                finished.set_result(code)

        def read() -> None:
            try:
                for message in messages(stdin):
                    if stop.is_set():
                        break
                    if not intake.hand_on(message):
                        return
            except Oversized as exc:
                report_oversized(exc.args[0])
                intake.post(finish, EXIT_OVERSIZED)
                return
            except (OSError, ValueError):  # the stream was closed under us
                pass
            intake.post(finish, 0)

        threading.Thread(target=read, name="lsp-reader", daemon=True).start()
        return await finished

    try:
        return asyncio.run(main())
    except SystemExit as exc:  # `exit`: pygls closes the output and exits 0 or 1
        return exc.code if isinstance(exc.code, int) else 0
    except BrokenPipeError:
        log.error("the client closed its end of the connection")
        return 0
    finally:
        stop.set()
