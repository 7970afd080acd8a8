"""The malformed-protocol suite: bytes and messages a well-behaved client never sends, over
stdio to the real server. Each gets the error JSON-RPC 2.0 or LSP names (Parse error -32700
and Invalid Request -32600 with id null when the id cannot be known; Invalid params -32602;
ServerNotInitialized -32002), and the server keeps answering the next good request."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import pytest_asyncio

from lsp_agent.rpc import EXIT_OVERSIZED
from tests.support.raw_rpc import RawClient, frame

pytestmark = pytest.mark.asyncio(loop_scope="module")

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS, NOT_INITIALIZED = -32700, -32600, -32602, -32002


def body(message: object) -> bytes:
    return frame(json.dumps(message))


def request(msg_id: object, method: object = "lspAgent/read", params: object = None, **extra) -> bytes:
    message: dict = {"jsonrpc": "2.0", "id": msg_id, "method": method, **extra}
    if params is not None:
        message["params"] = params
    return body(message)


GOOD = request(9999, params={"path": "a.txt"})

# (case, bytes sent, the error code, the id of the answer)
CASES = [
    # Parse errors: the body cannot be read as JSON, so the id cannot be known.
    ("invalid JSON", frame('{"jsonrpc": "2.0", "id": 1, "method"'), PARSE_ERROR, None),
    ("invalid UTF-8", frame(b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}'), PARSE_ERROR, None),
    (
        "NaN is not JSON",
        frame('{"jsonrpc": "2.0", "id": 1, "method": "x", "params": [NaN]}'),
        PARSE_ERROR,
        None,
    ),
    ("empty body", frame(b""), PARSE_ERROR, None),
    ("nesting past the parser's depth", frame("[" * 100_000 + "]" * 100_000), PARSE_ERROR, None),
    (
        "a lone surrogate pair half",
        frame(b'{"jsonrpc": "2.0", "id": 1, "method": "\xed\xa0\x80"}'),
        PARSE_ERROR,
        None,
    ),
    (
        "garbage line before a frame",
        b"hello there\r\n" + body({"jsonrpc": "2.0", "method": "$/noop"}),
        PARSE_ERROR,
        None,
    ),
    ("headers without Content-Length", b"Content-Type: application/json\r\n\r\n", PARSE_ERROR, None),
    ("Content-Length not a number", b"Content-Length: twelve\r\n\r\n", PARSE_ERROR, None),
    ("Content-Length negative", b"Content-Length: -5\r\n\r\n", PARSE_ERROR, None),
    # Invalid Request: JSON, but not a request, notification or response.
    ("empty batch", body([]), INVALID_REQUEST, None),
    (
        "a batch (not part of LSP)",
        body([{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}]),
        INVALID_REQUEST,
        None,
    ),
    ("a number", body(5), INVALID_REQUEST, None),
    ("a string", body("initialize"), INVALID_REQUEST, None),
    ("null", body(None), INVALID_REQUEST, None),
    ("true", body(True), INVALID_REQUEST, None),
    ("empty object", body({}), INVALID_REQUEST, None),
    ("jsonrpc 1.0", body({"jsonrpc": "1.0", "id": 3, "method": "lspAgent/read"}), INVALID_REQUEST, 3),
    ("jsonrpc missing", body({"id": 4, "method": "lspAgent/read"}), INVALID_REQUEST, 4),
    ("jsonrpc as a number", body({"jsonrpc": 2.0, "id": 5, "method": "lspAgent/read"}), INVALID_REQUEST, 5),
    ("numeric method", request(6, 42), INVALID_REQUEST, 6),
    ("null method", request(7, None), INVALID_REQUEST, 7),
    ("method as an object", request(8, {"name": "read"}), INVALID_REQUEST, 8),
    ("numeric method, no id", body({"jsonrpc": "2.0", "method": 1, "params": "bar"}), INVALID_REQUEST, None),
    ("id null", request(None), INVALID_REQUEST, None),
    ("id an object", request({"n": 1}), INVALID_REQUEST, None),
    ("id an array", request([1]), INVALID_REQUEST, None),
    ("id true", request(True), INVALID_REQUEST, None),
    ("id false", request(False), INVALID_REQUEST, None),
    ("id a fraction", request(1.5), INVALID_REQUEST, None),
    ("params a number", request(10, params=5), INVALID_REQUEST, 10),
    ("params a string", request(11, params="a.txt"), INVALID_REQUEST, 11),
    ("params true", request(12, params=True), INVALID_REQUEST, 12),
    ("neither request nor response", body({"jsonrpc": "2.0", "id": 13}), INVALID_REQUEST, 13),
    ("only jsonrpc", body({"jsonrpc": "2.0"}), INVALID_REQUEST, None),
    # Invalid params: a well-formed request whose params do not fit its method.
    ("documentSymbol without a document", request(20, "textDocument/documentSymbol", {}), INVALID_PARAMS, 20),
    ("documentSymbol without params", request(21, "textDocument/documentSymbol"), INVALID_PARAMS, 21),
    (
        "documentSymbol with a numeric uri",
        request(22, "textDocument/documentSymbol", {"textDocument": {"uri": 5}}),
        INVALID_PARAMS,
        22,
    ),
    (
        "workspace/symbol with a numeric query",
        request(23, "workspace/symbol", {"query": 5}),
        INVALID_PARAMS,
        23,
    ),
    ("a tool's argument of the wrong type", request(24, params={"path": 5}), INVALID_PARAMS, 24),
    ("a tool's unknown argument", request(25, params={"path": "a.txt", "colour": "red"}), INVALID_PARAMS, 25),
    ("a tool's arguments as an array", request(26, params=["a.txt"]), INVALID_PARAMS, 26),
    (
        "executeCommand of no command",
        request(27, "workspace/executeCommand", {"command": "rm"}),
        INVALID_PARAMS,
        27,
    ),
    ("didOpen sent as a request", request(28, "textDocument/didOpen", {}), INVALID_PARAMS, 28),
    (
        "max_chars of 10^400",
        frame(
            '{"jsonrpc": "2.0", "id": 29, "method": "lspAgent/read", "params": {"path": "a.txt", "max_chars": 1%s}}'
            % ("0" * 400)
        ),
        INVALID_PARAMS,
        29,
    ),
    (
        "start of 1e400 (infinite)",
        frame(
            '{"jsonrpc": "2.0", "id": 30, "method": "lspAgent/read", "params": {"path": "a.txt", "start": 1e400}}'
        ),
        INVALID_PARAMS,
        30,
    ),
    (
        "search with offset 2^64",
        request(31, "lspAgent/search", {"pattern": "a", "offset": 2**64}),
        INVALID_PARAMS,
        31,
    ),
]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("ws")
    (root / "a.txt").write_text("alpha\nbeta\n")
    client = await RawClient.start()
    await client.initialize(root)
    yield client
    assert await client.finish() == 0


@pytest.mark.parametrize("case, sent, code, msg_id", CASES, ids=[c[0] for c in CASES])
async def test_malformed_input_gets_the_spec_error_and_the_server_goes_on(server, case, sent, code, msg_id):
    answer = server.expect(msg_id) if msg_id is not None else None
    server.send_bytes(sent)
    error = (await asyncio.wait_for(answer, 10)) if answer else await server.next_unmatched()
    assert error["jsonrpc"] == "2.0"
    assert "id" in error and error["id"] == msg_id, error
    assert error["error"]["code"] == code, error
    assert error["error"]["message"]
    assert "Traceback" not in json.dumps(error)
    good = server.expect(9999)
    server.send_bytes(GOOD)
    assert "alpha" in (await asyncio.wait_for(good, 10))["result"]["text"]
    assert not server.unmatched, server.unmatched  # one error for one bad message


async def test_a_frame_longer_than_its_body_does_not_hide_the_next_one(server):
    # The first frame claims more bytes than it has: its read runs into the next frames.
    bad = b"{bad json}"
    first, second = server.expect(9998), server.expect(9999)
    server.send_bytes(b"Content-Length: %d\r\n\r\n" % (len(bad) + len(GOOD) + 10) + bad)
    server.send_bytes(request(9998, params={"path": "a.txt"}) + GOOD)
    error = await server.next_unmatched()
    assert (error["id"], error["error"]["code"]) == (None, PARSE_ERROR)
    for answer in (first, second):
        assert "alpha" in (await asyncio.wait_for(answer, 10))["result"]["text"]


async def test_notifications_that_are_malformed_get_no_answer_but_do_no_harm(server):
    server.notify("textDocument/didOpen", {"textDocument": 5})  # invalid params: dropped
    server.notify("$/cancelRequest", {"id": {"not": "an id"}})
    server.notify("no/such/notification", {})
    server.notify("$/cancelRequest", {"id": 123456})  # no such request
    # responses, even malformed ones, are never answered (two strict peers would loop)
    server.send_bytes(body({"jsonrpc": "2.0", "id": 14, "result": 1, "error": {}}))
    server.send_bytes(body({"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "x"}}))
    server.send_bytes(body({"jsonrpc": "2.0", "id": "no-such-request", "result": None}))
    answer = await server.call("lspAgent/read", {"path": "a.txt"})
    assert "alpha" in answer["result"]["text"]
    assert not server.unmatched


# --- the LSP lifecycle: each on a server of its own --------------------------------------


async def test_requests_before_initialize_get_server_not_initialized(tmp_path):
    client = await RawClient.start()
    try:
        for method, params in [
            ("lspAgent/read", {"path": "a.txt"}),
            ("textDocument/documentSymbol", {"textDocument": {"uri": tmp_path.as_uri()}}),
            ("workspace/symbol", {"query": "x"}),
            ("shutdown", None),
            ("no/such/method", {}),
        ]:
            answer = await client.call(method, params, timeout=10)
            assert answer["error"]["code"] == NOT_INITIALIZED, (method, answer)
        client.notify("textDocument/didOpen", {})  # a notification before initialize: dropped
        assert "capabilities" in (await client.initialize(tmp_path))["result"]
    finally:
        assert await client.finish() == 0


async def test_a_second_initialize_is_an_invalid_request(tmp_path):
    client = await RawClient.start()
    try:
        await client.initialize(tmp_path)
        answer = await client.call("initialize", {"processId": None, "capabilities": {}})
        assert answer["error"]["code"] == INVALID_REQUEST
        assert "once" in answer["error"]["message"]
    finally:
        assert await client.finish() == 0


async def test_requests_after_shutdown_are_invalid_and_exit_is_clean(tmp_path):
    client = await RawClient.start()
    await client.initialize(tmp_path)
    assert (await client.call("shutdown"))["result"] is None
    for method in ("lspAgent/read", "shutdown", "initialize"):
        answer = await client.call(method, {"path": "a.txt"} if method == "lspAgent/read" else None)
        assert answer["error"]["code"] == INVALID_REQUEST, (method, answer)
    client.notify("exit")
    assert await client.wait() == 0


async def test_exit_without_shutdown_exits_with_1(tmp_path):
    client = await RawClient.start()
    await client.initialize(tmp_path)
    client.notify("exit")
    assert await client.wait() == 1


async def test_an_absurd_content_length_is_refused_with_a_message_and_a_documented_code(tmp_path):
    client = await RawClient.start()
    await client.initialize(tmp_path)
    started = time.monotonic()
    client.send_bytes(b"Content-Length: 1000000000000\r\n\r\n{}")
    assert await client.wait() == EXIT_OVERSIZED
    assert time.monotonic() - started < 5
    assert "Content-Length 1,000,000,000,000" in await client.stderr()


async def test_garbage_does_not_stop_shutdown_being_answered(tmp_path):
    client = await RawClient.start()
    await client.initialize(tmp_path)
    client.send_bytes(b"\x00\xff garbage without a newline")
    client.send_bytes(b"\r\n\r\nContent-Length: 3\r\n\r\n{{{")
    client.send_bytes(b"random text\nContent-Length: 7\r\n\r\nnot json")
    client.send_bytes(frame(b"\xc3\x28"))
    started = time.monotonic()
    answer = await client.call("shutdown", None, timeout=10)
    assert answer.get("result", "missing") is None, answer
    client.notify("exit")
    assert await client.wait() == 0
    assert time.monotonic() - started < 5
