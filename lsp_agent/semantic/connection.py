"""A JSON-RPC connection to a language server we started: requests with a deadline and a
cancel event, the server's own requests answered, its progress tracked.

Threads, not asyncio: tools run in worker threads and wait on their answer here. One reader
thread per server reads frames; a caller waits on its request's event, checking the tool's
cancel event as it waits, and a cancelled or timed-out request is cancelled at the server
too ($/cancelRequest), so the server stops working on it.
"""

from __future__ import annotations

import json
import logging
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

log = logging.getLogger(__name__)

MAX_FRAME = 64 * 1024 * 1024  # no answer we ask for is near this; a larger one is garbage
WAIT_STEP = 0.05  # how often a waiting request looks at its cancel event


class ServerFailed(Exception):
    """The server cannot answer this request: it exited, hung past the deadline, or sent
    something that is not a JSON-RPC answer. The message says which, for a person."""


class RequestCancelled(Exception):
    """The tool call was cancelled while the request waited; the server was told."""


@dataclass
class Pending:
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: str | None = None
    arrived: float | None = None  # when its answer was read (time.monotonic)


class Connection:
    """Frames over a child process's stdin/stdout. `on_request(method, params)` answers the
    server's requests (workspace/configuration, …); `on_notify` sees its notifications."""

    def __init__(
        self,
        process: subprocess.Popen,
        on_request: Callable[[str, Any], Any],
        on_notify: Callable[[str, Any], None],
    ) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        self.stdin: IO[bytes] = process.stdin
        self.on_request = on_request
        self.on_notify = on_notify
        self.pending: dict[int, Pending] = {}
        self.next_id = 1
        self.lock = threading.Lock()
        self.closed: str | None = None  # why the stream ended
        self.reader = threading.Thread(target=self._read, args=(process.stdout,), daemon=True)
        self.reader.start()

    def request(
        self, method: str, params: Any, *, timeout: float, cancel: threading.Event | None = None
    ) -> Any:
        ident, _ = self.send_request(method, params)
        return self.answer(ident, method, timeout=timeout, cancel=cancel)

    def send_request(self, method: str, params: Any) -> tuple[int, Pending]:
        """The request sent: its id, and the Pending its answer comes in. Its answer is
        waited for with `answer` (or dropped with `forget`)."""
        with self.lock:
            ident = self.next_id
            self.next_id += 1
            pending = self.pending[ident] = Pending()
        try:
            self._send({"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
        except BaseException:
            with self.lock:
                self.pending.pop(ident, None)
            raise
        return ident, pending

    def forget(self, ident: int) -> None:
        """A request sent whose answer nobody will wait for: the server is told to stop."""
        with self.lock:
            known = self.pending.pop(ident, None)
        if known is not None and not known.done.is_set():
            self._cancel(ident)

    def answer(
        self, ident: int, method: str, *, timeout: float, cancel: threading.Event | None = None
    ) -> Any:
        """The answer to a request sent (`send_request`), waited for up to `timeout`."""
        with self.lock:
            pending = self.pending.get(ident)
        if pending is None:
            raise ServerFailed(f"no request {ident} is waiting for an answer")
        try:
            deadline = time.monotonic() + timeout
            while not pending.done.wait(WAIT_STEP):
                if cancel is not None and cancel.is_set():
                    self._cancel(ident)
                    raise RequestCancelled()
                if self.closed is not None:
                    raise ServerFailed(self.closed)
                if time.monotonic() > deadline:
                    self._cancel(ident)
                    raise ServerFailed(f"no answer to {method} within {timeout:g} s")
        finally:
            with self.lock:
                self.pending.pop(ident, None)
        if pending.error is not None:
            raise ServerFailed(pending.error)
        return pending.result

    def notify(self, method: str, params: Any) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def _cancel(self, ident: int) -> None:
        try:
            self.notify("$/cancelRequest", {"id": ident})
        except ServerFailed:
            pass

    def _send(self, message: dict) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        with self.lock:
            if self.closed is not None:
                raise ServerFailed(self.closed)
            try:
                self.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
                self.stdin.flush()
            except (OSError, ValueError) as exc:
                raise ServerFailed(f"its input is closed ({exc})") from None

    def _read(self, stream: IO[bytes]) -> None:
        try:
            while (message := read_frame(stream)) is not None:
                self._dispatch(message)
            why = "it closed its output"
        except (OSError, ValueError) as exc:
            why = f"it wrote something that is not LSP ({exc})"
        try:  # at the end of its output a crashing server is exiting: say with what code
            code: int | None = self.process.wait(timeout=1)
        except subprocess.TimeoutExpired:
            code = None
        self.closed = why if code is None else f"it exited with code {code}"
        for pending in list(self.pending.values()):
            pending.error = self.closed
            pending.done.set()

    def _dispatch(self, message: Any) -> None:
        if not isinstance(message, dict):
            raise ValueError("a frame that is not a JSON object")
        if "method" in message:
            method, params = message["method"], message.get("params")
            if "id" in message:
                self._answer(message["id"], method, params)
            else:
                self.on_notify(method, params)
            return
        pending = self.pending.get(message.get("id"))  # type: ignore[arg-type]
        if pending is None:
            return  # the answer to a request given up on
        if "error" in message:
            error = message["error"]
            text = error.get("message") if isinstance(error, dict) else error
            pending.error = f"it answered with an error: {str(text)[:200]}"
        else:
            pending.result = message.get("result")
        pending.arrived = time.monotonic()
        pending.done.set()

    def _answer(self, ident: Any, method: str, params: Any) -> None:
        try:
            result = self.on_request(method, params)
            self._send({"jsonrpc": "2.0", "id": ident, "result": result})
        except ServerFailed:
            pass


def read_frame(stream: IO[bytes]) -> Any | None:
    """One message's decoded JSON, or None at the end of the stream; ValueError for
    anything that is not a frame."""
    length = None
    while True:
        line = stream.readline(64 * 1024)
        if not line:
            return None
        line = line.strip()
        if not line:
            if length is None:
                continue  # stray blank lines before a header
            break
        name, colon, value = line.partition(b":")
        if not colon:
            raise ValueError(f"a header line without a colon: {line[:40]!r}")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if not 0 <= length <= MAX_FRAME:
        raise ValueError(f"a frame of {length} bytes")
    body = stream.read(length)
    if len(body) < length:
        return None
    return json.loads(body)
