"""Calls taken from the stdio reader (AgentServer.take_call), seen from inside: the server
serves stdio in a thread of this process with one light thread, so that calls queue for it.
A call cancelled while it waits for its thread is answered as cancelled and never runs; the
reader reads on while calls wait (a cancel of the call holding the thread is read and
obeyed); and the requests of these tests were taken, not dispatched by the loop."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.lanes import Lanes
from lsp_agent.server import MAX_TAKEN, create_server
from lsp_agent.tools import REGISTRY, tool

RELEASE = threading.Event()  # the holding tool returns once set
HOLDING = threading.Event()  # set while it holds the one light thread
RAN: list[int] = []


@pytest.fixture(scope="module", autouse=True)
def test_tools():
    """`hold_lane` holds its thread until released or cancelled; `mark_ran` says it ran."""

    @tool(
        "hold_lane", "Hold", "Test tool: holds its thread.", {"type": "object", "properties": {}}, light=True
    )
    def hold_lane(ctx):
        HOLDING.set()
        while not RELEASE.wait(0.01):
            ctx.check_cancelled()
        return {"text": "released"}

    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    @tool("mark_ran", "Mark", "Test tool: records that it ran.", schema, light=True)
    def mark_ran(ctx, n: int = 0):
        RAN.append(n)
        return {"text": f"ran {n}"}

    yield
    REGISTRY.pop("hold_lane", None)
    REGISTRY.pop("mark_ran", None)


class Served:
    """The server on a pair of pipes, its answers by id."""

    def __init__(self, root: Path, monkeypatch) -> None:
        RELEASE.clear()
        HOLDING.clear()
        RAN.clear()
        self.server = create_server(roots=[root])
        self.server.lanes = self.server.door.lanes = Lanes(light_workers=1, heavy_workers=1)
        self.taken: list[tuple[Any, bool]] = []  # (id or method, taken) of what the reader offered
        real = self.server.take_call

        def take_call(message: Any) -> bool:
            took = real(message)
            self.taken.append((message.get("id", message.get("method")), took))
            return took

        monkeypatch.setattr(self.server, "take_call", take_call)
        in_read, self.in_write = os.pipe()
        self.out_read, out_write = os.pipe()
        self.answers: dict[Any, dict] = {}
        self.arrived = threading.Condition()
        stdin, stdout = open(in_read, "rb"), open(out_write, "wb")  # noqa: SIM115
        self.thread = threading.Thread(target=self.server.start_io, args=(stdin, stdout), daemon=True)
        self.thread.start()
        threading.Thread(target=self.read, daemon=True).start()

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        os.write(self.in_write, b"Content-Length: %d\r\n\r\n%b" % (len(body), body))

    def read(self) -> None:
        stream = open(self.out_read, "rb")  # noqa: SIM115
        while True:
            length = None
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line or length is None:
                return
            message = json.loads(stream.read(length))
            if "id" in message and "method" not in message:
                with self.arrived:
                    self.answers[message["id"]] = message
                    self.arrived.notify_all()

    def answer(self, msg_id: Any, timeout: float = 10) -> dict:
        with self.arrived:
            if not self.arrived.wait_for(lambda: msg_id in self.answers, timeout):
                raise AssertionError(f"no answer to {msg_id} within {timeout} s")
            return self.answers[msg_id]

    def call(self, msg_id: Any, method: str, params: Any = None) -> None:
        self.send({"id": msg_id, "method": method, "params": params or {}})

    def start(self, root: Path) -> None:
        self.call("init", "initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {}})
        self.answer("init")
        self.send({"method": "initialized", "params": {}})

    def in_step(self) -> None:
        """Until the reader takes a call again: every message read so far dispatched by the
        loop (a call sent now is taken). Probes (mark_ran -1) are sent until one is."""
        for probe in range(50):
            seen = len(self.taken)
            self.call(f"probe-{probe}", "lspAgent/mark_ran", {"n": -1})
            deadline = time.monotonic() + 0.5  # (posted to the loop: never offered, wait no more)
            while len(self.taken) == seen and time.monotonic() < deadline:
                time.sleep(0.001)
            if self.taken[seen:] == [(f"probe-{probe}", True)]:
                return
        raise AssertionError("the reader never took a call")

    def stop(self) -> None:
        RELEASE.set()
        self.call("bye", "shutdown", None)
        self.answer("bye")
        self.send({"method": "exit"})
        self.thread.join(10)


@pytest.fixture
def served(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text("value = 1\n")
    served = Served(tmp_path, monkeypatch)
    served.start(tmp_path)
    yield served
    served.stop()


def test_a_call_cancelled_while_it_waits_for_its_thread_never_runs(served):
    served.call(1, "lspAgent/hold_lane")
    assert HOLDING.wait(10)
    served.in_step()
    served.call(2, "lspAgent/mark_ran", {"n": 2})  # taken; waits for the one light thread
    served.send({"method": "$/cancelRequest", "params": {"id": 2}})
    assert served.answer(2)["error"]["code"] == -32800
    RELEASE.set()
    assert served.answer(1)["result"]["text"] == "released"
    served.call(3, "lspAgent/mark_ran", {"n": 3})
    assert served.answer(3)["result"]["text"] == "ran 3"
    assert [n for n in RAN if n >= 0] == [3]  # the cancelled one never ran
    assert (2, True) in served.taken  # (the loop's way cancels a call still queued as its task)


def test_the_reader_reads_on_while_calls_wait_for_a_thread(served):
    served.call(1, "lspAgent/hold_lane")
    assert HOLDING.wait(10)
    served.in_step()
    waiting = range(100, 100 + 2 * MAX_TAKEN)  # past what the reader may hold, and past the taken
    for n in waiting:
        served.call(n, "lspAgent/mark_ran", {"n": n})
    served.send({"method": "$/cancelRequest", "params": {"id": 1}})  # read behind all of them
    assert served.answer(1)["error"]["code"] == -32800
    assert [served.answer(n)["result"]["text"] for n in waiting] == [f"ran {n}" for n in waiting]
    offered = dict(served.taken)
    assert offered[100] and sum(offered.get(n, False) for n in waiting) < MAX_TAKEN  # the rest by the loop
    assert sorted(n for n in RAN if n >= 0) == list(waiting)


def test_a_cancel_after_the_answer_changes_nothing(served):
    served.call(1, "lspAgent/mark_ran", {"n": 1})
    assert served.answer(1)["result"]["text"] == "ran 1"
    served.send({"method": "$/cancelRequest", "params": {"id": 1}})
    served.call(2, "lspAgent/mark_ran", {"n": 2})
    assert served.answer(2)["result"]["text"] == "ran 2"
    time.sleep(0.1)
    assert RAN == [1, 2]
