"""A hostile (or broken) editor over LSP: a didChange that cannot apply is an error the
editor sees and the server stops serving its wrong copy of the buffer until it gets the
whole text again; a file:// URI of another host never stands for a local file."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess

import pytest

from tests.support.raw_rpc import SERVER, RawClient, frame

DISK = "alpha\nbeta\n"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "a.py").write_text(DISK)
    return tmp_path


async def shown_message(client: RawClient, timeout: float = 10) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            for message in client.received:
                if message.get("method") == "window/showMessage":
                    client.received.remove(message)
                    return message["params"]
            client.arrived.clear()
            await client.arrived.wait()


def change(uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> dict:
    where = {
        "start": {"line": start[0], "character": start[1]},
        "end": {"line": end[0], "character": end[1]},
    }
    return {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": where, "text": text}],
    }


@pytest.mark.parametrize(
    "start, end",
    [((-1, 0), (0, 2)), ((0, -3), (0, 1)), ((50, 0), (60, 2)), ((1, 0), (0, 0))],
    ids=["negative-line", "negative-character", "past-the-end", "end-before-start"],
)
async def test_a_change_that_cannot_apply_is_shown_and_the_buffer_resyncs(root, start, end):
    client = await RawClient.start()
    try:
        await client.initialize(root)
        uri = (root / "a.py").as_uri()
        open_params = {"uri": uri, "languageId": "python", "version": 1, "text": "EDITED\n" + DISK}
        client.notify("textDocument/didOpen", {"textDocument": open_params})
        assert "EDITED" in (await client.call("lspAgent/read", {"path": "a.py"}))["result"]["text"]
        client.notify("textDocument/didChange", change(uri, 2, start, end, "X"))
        message = await shown_message(client)
        assert message["type"] == 1 and "out of sync" in message["message"]
        read = (await client.call("lspAgent/read", {"path": "a.py"}))["result"]["text"]
        assert "EDITED" not in read and "open in the editor" not in read  # the saved text, said so
        # an incremental change cannot make it known again; the whole text does
        client.notify("textDocument/didChange", change(uri, 3, (0, 0), (0, 0), "more "))
        assert "more" not in (await client.call("lspAgent/read", {"path": "a.py"}))["result"]["text"]
        whole = {"textDocument": {"uri": uri, "version": 4}, "contentChanges": [{"text": "WHOLE\n"}]}
        client.notify("textDocument/didChange", whole)
        assert "WHOLE" in (await client.call("lspAgent/read", {"path": "a.py"}))["result"]["text"]
    finally:
        assert await client.finish() == 0


async def test_a_file_uri_of_another_host_is_not_a_local_file(root):
    client = await RawClient.start()
    try:
        await client.initialize(root)
        other = "file://otherhost" + str(root / "a.py")
        document = {"uri": other, "languageId": "python", "version": 1, "text": "OTHER_HOST = 1\n"}
        client.notify("textDocument/didOpen", {"textDocument": document})
        read = (await client.call("lspAgent/read", {"path": "a.py"}))["result"]["text"]
        assert "OTHER_HOST" not in read and "alpha" in read
        refused = (await client.call("lspAgent/read", {"path": other}))["result"]
        assert refused["error"]["code"] == "bad_path" and "another host" in refused["text"]
        symbols = await client.call("textDocument/documentSymbol", {"textDocument": {"uri": other}})
        assert symbols.get("result") is None and "error" not in symbols
        search = (await client.call("lspAgent/search", {"pattern": "OTHER_HOST"}))["result"]
        assert search["total_matches"] == 0
    finally:
        assert await client.finish() == 0


def test_a_client_that_stops_reading_meets_back_pressure(tmp_path):
    """Requests sent without reading a single answer: once the answers fill the pipe, the
    server stops reading requests (a bound on what it holds), and answers every one sent
    once the client reads again."""
    (tmp_path / "big.txt").write_text("".join(f"line {n:05} {'x' * 70}\n" for n in range(5_000)))
    server = subprocess.Popen(
        SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert server.stdin is not None and server.stdout is not None
    stdin, stdout = server.stdin.fileno(), server.stdout.fileno()
    try:
        init = {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}
        server.stdin.write(
            frame(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}))
        )
        server.stdin.write(frame(json.dumps({"jsonrpc": "2.0", "method": "initialized", "params": {}})))
        server.stdin.flush()
        os.set_blocking(stdin, False)
        sent, total, pending = 0, 3_000, b""
        while sent < total or pending:
            if not pending:
                sent += 1
                params = {"path": "big.txt", "max_chars": 20_000}
                pending = frame(
                    json.dumps({"jsonrpc": "2.0", "id": sent, "method": "lspAgent/read", "params": params})
                )
            try:
                pending = pending[os.write(stdin, pending) :]
            except BlockingIOError:  # the pipe is full; if the server reads on within 5 s, go on
                if not select.select([], [stdin], [], 5)[1]:
                    break
        assert sent < total, "the server read every request although no answer was read"
        received, answered = b"", set()
        while len(answered) < sent + 1:  # initialize's answer too
            readable, writable, _ = select.select([stdout], [stdin] if pending else [], [], 30)
            assert readable or writable, f"stuck with {len(answered)} of {sent} answered"
            if writable:
                pending = pending[os.write(stdin, pending) :]
            if readable:
                received += os.read(stdout, 1 << 20)
                while (end := received.find(b"\r\n\r\n")) >= 0:
                    headers = dict(line.split(b":", 1) for line in received[:end].split(b"\r\n"))
                    length = int(headers[b"Content-Length"])
                    if len(received) < end + 4 + length:
                        break
                    message = json.loads(received[end + 4 : end + 4 + length])
                    received = received[end + 4 + length :]
                    if "id" in message and "method" not in message:
                        answered.add(message["id"])
        assert answered == set(range(sent + 1))
    finally:
        server.kill()
        server.wait()
