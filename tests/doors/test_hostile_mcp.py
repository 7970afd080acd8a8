"""A hostile MCP client, byte by byte over stdio: params that are not an object get an
InvalidParams error (they got no reply), and a client that stops reading its answers finds
the server stops reading its requests, its memory bounded (it queued every answer)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path

import pytest


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


class Wire:
    """`lsp-agent mcp` as a subprocess, spoken to in JSON lines."""

    def __init__(self, root: Path):
        self.process = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.pending = b""

    def send(self, message: dict) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        self.process.stdin.flush()

    def receive(self, timeout: float = 30) -> dict:
        stdout = self.process.stdout
        assert stdout is not None
        while b"\n" not in self.pending:
            ready, _, _ = select.select([stdout], [], [], timeout)
            assert ready, "no answer"
            chunk = os.read(stdout.fileno(), 1 << 20)
            assert chunk, "the server ended"
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        return json.loads(line)

    def answer_to(self, msg_id) -> dict:
        while (message := self.receive()).get("id") != msg_id:
            pass
        return message

    def initialize(self) -> None:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "hostile", "version": "0"},
                },
            }
        )
        assert "result" in self.answer_to(0)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        assert self.process.stdout is not None
        self.process.stdout.read()
        return self.process.wait(30)


def read_call(msg_id: int, path: str = "big.txt") -> dict:
    arguments = {"path": path, "max_chars": 20_000}
    return {
        "jsonrpc": "2.0",
        "id": msg_id,
        "method": "tools/call",
        "params": {"name": "read", "arguments": arguments},
    }


@pytest.fixture
def root(tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {n:05} {'x' * 70}\n" for n in range(5_000)))
    return tmp_path


def test_params_that_are_not_an_object_get_invalid_params(root):
    wire = Wire(root)
    try:
        wire.initialize()
        for msg_id, params in enumerate([["read", {"path": "big.txt"}], "read", 5, True], 10):
            wire.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": params})
            error = wire.answer_to(msg_id)
            assert (
                error["error"]["code"] == -32602 and "params must be an object" in error["error"]["message"]
            )
            wire.send(read_call(msg_id + 100))  # and the server goes on
            assert "result" in wire.answer_to(msg_id + 100)
    finally:
        assert wire.close() == 0


def test_a_client_that_stops_reading_meets_back_pressure(root):
    wire = Wire(root)
    try:
        wire.initialize()
        wire.send(read_call(1))
        wire.answer_to(1)  # warmed up: the first read's imports are in the baseline
        baseline = rss_kib(wire.process.pid)
        stdin = wire.process.stdin
        assert stdin is not None
        os.set_blocking(stdin.fileno(), False)
        sent, total, pending = 0, 3_000, b""
        while sent < total or pending:
            if not pending:
                sent += 1
                pending = json.dumps(read_call(1 + sent)).encode() + b"\n"
            try:
                pending = pending[os.write(stdin.fileno(), pending) :]
            except BlockingIOError:
                # the pipe is full: the server is not reading. Wait for it to read on; if it
                # does not within 5 s, it stopped.
                _, writable, _ = select.select([], [stdin], [], 5)
                if not writable:
                    break
        held = rss_kib(wire.process.pid) - baseline
        assert sent < total, "the server read every request although no answer was read"
        assert held < 64 * 1024, f"{held} KiB held for a client that reads nothing"
        # once the client reads again, every request it sent is answered (the one cut in
        # the middle is written on as the server reads again)
        answered = set()
        while len(answered) < sent:
            readable, writable, _ = select.select([wire.process.stdout], [stdin] if pending else [], [], 30)
            assert readable or writable, f"stuck with {len(answered)} of {sent} answered"
            if writable:
                pending = pending[os.write(stdin.fileno(), pending) :]
            if readable:
                assert wire.process.stdout is not None
                wire.pending += os.read(wire.process.stdout.fileno(), 1 << 20)
                while b"\n" in wire.pending:
                    answered.add(wire.receive()["id"])
        assert answered == set(range(2, sent + 2))
    finally:
        wire.close()
