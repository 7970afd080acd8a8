"""A byte-level JSON-RPC client of `lsp-agent serve`, for what a well-behaved client cannot
send: malformed frames and bodies, odd ids, requests out of order, and thousands of requests
in flight with cancels (the soak benchmark uses it too)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER = [sys.executable, "-m", "lsp_agent", "serve"]


def frame(body: bytes | str) -> bytes:
    data = body.encode() if isinstance(body, str) else body
    return b"Content-Length: %d\r\n\r\n" % len(data) + data


class RawClient:
    """The server as a subprocess; responses matched to requests by id, everything else
    the server sends kept in `received`."""

    def __init__(self, process: asyncio.subprocess.Process, stdout: int, stderr: int):
        self.process = process
        self.pending: dict[Any, asyncio.Future] = {}
        self.received: list[dict] = []  # every message, in order
        self.unmatched: list[dict] = []  # responses with an id nobody waits for (or null)
        self.arrived = asyncio.Event()  # set on every message
        self.failure: Exception | None = None  # why reading stopped, if not the end of output
        self._ids = itertools.count(1)
        # The server's output is read by threads with plain blocking reads: under a soak,
        # asyncio's subprocess pipe reading here lost 4 KiB chunks of it (the bytes the
        # server wrote, saved on its side, were whole). stderr is read as it comes too: a
        # server writing warnings into a full pipe would block.
        loop = asyncio.get_running_loop()
        self.stdout = asyncio.StreamReader(limit=2**24)
        self._stderr = bytearray()
        self._stderr_done = threading.Event()

        def feed(data: bytes) -> None:
            loop.call_soon_threadsafe(self.stdout.feed_data, data)

        threading.Thread(
            target=pump,
            args=(stdout, feed, lambda: loop.call_soon_threadsafe(self.stdout.feed_eof)),
            daemon=True,
        ).start()
        threading.Thread(
            target=pump, args=(stderr, self._stderr.extend, self._stderr_done.set), daemon=True
        ).start()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, *args: str, cwd: Path | None = None) -> RawClient:
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                *SERVER, *args, cwd=cwd, stdin=asyncio.subprocess.PIPE, stdout=out_write, stderr=err_write
            )
        finally:
            os.close(out_write)
            os.close(err_write)
        return cls(process, out_read, err_read)

    # --- sending ----------------------------------------------------------------------

    def send_bytes(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: Any) -> None:
        self.send_bytes(frame(json.dumps(message)))

    def notify(self, method: str, params: Any = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: Any = None, *, msg_id: Any = None) -> tuple[Any, asyncio.Future]:
        """Send a request; its id and the future of its response message (result or error)."""
        msg_id = next(self._ids) if msg_id is None else msg_id
        future = asyncio.get_running_loop().create_future()
        if self._reader.done():
            future.set_exception(ConnectionError(f"the server's output ended ({self.failure!r})"))
            return msg_id, future
        self.pending[msg_id] = future
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return msg_id, future

    def expect(self, msg_id: Any) -> asyncio.Future:
        """The future of the response with `msg_id`, for a request sent as raw bytes."""
        future = asyncio.get_running_loop().create_future()
        self.pending[msg_id] = future
        return future

    async def call(self, method: str, params: Any = None, timeout: float = 30) -> dict:
        _, future = self.request(method, params)
        return await asyncio.wait_for(future, timeout)

    def cancel(self, msg_id: Any) -> None:
        self.notify("$/cancelRequest", {"id": msg_id})

    async def initialize(self, root: Path, **extra: Any) -> dict:
        params = {
            "processId": None,
            "rootUri": root.as_uri(),
            "capabilities": {},
            "workspaceFolders": [{"uri": root.as_uri(), "name": root.name}],
            **extra,
        }
        answer = await self.call("initialize", params)
        self.notify("initialized", {})
        return answer

    async def next_unmatched(self, timeout: float = 10) -> dict:
        """The next response nobody was waiting for (an error with id null, …)."""
        async with asyncio.timeout(timeout):
            while not self.unmatched:
                self.arrived.clear()
                await self.arrived.wait()
        return self.unmatched.pop(0)

    async def finish(self, timeout: float = 10) -> int:
        """shutdown, exit, and the exit code."""
        try:
            await self.call("shutdown", None, timeout=timeout)
            self.notify("exit")
        except (asyncio.TimeoutError, ConnectionError):
            pass
        return await self.wait(timeout)

    async def wait(self, timeout: float = 10) -> int:
        try:
            return await asyncio.wait_for(self.process.wait(), timeout)
        finally:
            self.close()

    def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
        self._reader.cancel()

    async def stderr(self) -> str:
        """What the server wrote on stderr (all of it once it has exited)."""
        if self.process.returncode is not None:
            await asyncio.to_thread(self._stderr_done.wait, 10)
        return self._stderr.decode(errors="replace")

    # --- receiving --------------------------------------------------------------------

    async def _read(self) -> None:
        stdout = self.stdout
        try:
            while True:
                length = None
                while (line := await stdout.readline()) not in (b"\r\n", b""):
                    name, _, value = line.decode().partition(":")
                    if name.lower() == "content-length":
                        length = int(value)
                if not line or length is None:
                    break
                self._dispatch(json.loads(await stdout.readexactly(length)))
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except Exception as exc:  # a frame this client cannot read: say so, do not hang
            self.failure = exc
            raise
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError(f"the server's output ended ({self.failure!r})"))

    def _dispatch(self, message: dict) -> None:
        self.received.append(message)
        self.arrived.set()
        if "method" in message:
            if "id" in message:  # a request of the server (progress tokens, registrations)
                self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
            return
        future = self.pending.pop(message.get("id"), None) if _hashable(message.get("id")) else None
        if future is None:
            self.unmatched.append(message)
        elif not future.done():
            future.set_result(message)


def pump(fd: int, deliver: Callable[[bytes], object], done: Callable[[], object]) -> None:
    """Read a pipe to its end with blocking reads, handing each chunk on."""
    try:
        while data := os.read(fd, 65536):
            deliver(data)
    except (OSError, RuntimeError):  # the pipe or the event loop closed first
        pass
    finally:
        os.close(fd)
        try:
            done()
        except RuntimeError:
            pass


def _hashable(value: Any) -> bool:
    return isinstance(value, str | int | float | type(None))
