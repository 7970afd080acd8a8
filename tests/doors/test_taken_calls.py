"""A tool's request goes from the stdio reader straight to its thread, which answers it
(AgentServer.take_call), only when the event loop has dispatched everything read before
it: a change sent in the same write as a question is applied before the question is
answered, and a cancel still stops a call its thread answers."""

from __future__ import annotations

import asyncio
import json

import pytest

from tests.support.raw_rpc import RawClient, frame

ROUNDS = 60


@pytest.fixture
def root(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("value = 0\n")
    return ws


def message(method: str, params: dict, msg_id: int | None = None) -> bytes:
    body = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        body["id"] = msg_id
    return frame(json.dumps(body))


async def test_a_change_sent_with_a_question_is_applied_before_it_is_answered(root):
    client = await RawClient.start(cwd=root)
    try:
        await client.initialize(root)
        uri = (root / "a.py").as_uri()
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "value = 0\n"}},
        )
        for n in range(1, ROUNDS + 1):
            # one write: the reader has both before the loop has dispatched the change
            msg_id = 1000 + n
            answer = client.expect(msg_id)
            whole = {
                "textDocument": {"uri": uri, "version": 2 * n},
                "contentChanges": [{"text": f"value = {n}\n"}],
            }
            part = {
                "textDocument": {"uri": uri, "version": 2 * n + 1},
                "contentChanges": [
                    {
                        "range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 0}},
                        "text": f"# {n}\n",
                    }
                ],
            }
            client.send_bytes(
                message("textDocument/didChange", whole)
                + message("textDocument/didChange", part)
                + message("lspAgent/read", {"path": "a.py"}, msg_id)
            )
            reply = await asyncio.wait_for(answer, 10)
            text = reply["result"]["text"]
            assert f"value = {n}\n" in text and f"# {n}" in text, (n, text)
    finally:
        assert await client.finish() == 0


async def test_a_cancelled_call_is_answered_at_once_and_the_server_serves_on(root):
    (root / "big").mkdir()
    for i in range(400):
        (root / "big" / f"f{i}.py").write_text("foo = 1\n" * 2000)
    client = await RawClient.start(cwd=root)
    try:
        await client.initialize(root)
        msg_id, pending = client.request("lspAgent/search", {"pattern": "f(o|x)+o", "paths": ["big"]})
        client.cancel(msg_id)
        reply = await asyncio.wait_for(pending, 10)
        # cancelled, or answered had it finished first: never both, never neither
        assert reply.get("error", {}).get("code") == -32800 or "result" in reply
        await asyncio.sleep(0.5)
        assert [m for m in client.received if m.get("id") == msg_id] == [reply]  # answered once
        answer = await client.call("lspAgent/read", {"path": "a.py"})
        assert "value = 0" in answer["result"]["text"]
    finally:
        assert await client.finish() == 0


async def test_settings_pushed_with_a_question_apply_to_it(root):
    """A client that pushes its settings (no workspace/configuration): they are applied in
    the first step of an asynchronous handler, before a question sent in the same write."""
    (root / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(1, 501)))
    client = await RawClient.start(cwd=root)
    try:
        await client.initialize(root)
        for n in range(1, ROUNDS + 1):
            budget = 400 if n % 2 else 20_000
            msg_id = 2000 + n
            answer = client.expect(msg_id)
            client.send_bytes(
                message("workspace/didChangeConfiguration", {"settings": {"lspAgent": {"max_chars": budget}}})
                + message("lspAgent/read", {"path": "long.py"}, msg_id)
            )
            text = (await asyncio.wait_for(answer, 10))["result"]["text"]
            assert (len(text) <= 400) == (budget == 400), (n, budget, len(text))
    finally:
        assert await client.finish() == 0
