"""Settings and logs as other language servers do them, end to end over stdio: the client's
configuration section `lspAgent` is pulled after `initialized` and on every
`workspace/didChangeConfiguration`; warnings reach the client as `window/logMessage`;
`$/logTrace` follows `$/setTrace`; an InvalidParams answer is one line in the log."""

from __future__ import annotations

import asyncio
import sys

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from .lsp_client import initialize_params, make_client, request

CONFIGURATION = types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(configuration=True))


@pytest.fixture
def root(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(1, 501)))
    return ws


async def started(root, *args: str, options=None, capabilities=CONFIGURATION, configuration=None):
    client = make_client()
    if configuration is not None:
        client.set_configuration(configuration, section="lspAgent")
    await client.start_io(sys.executable, "-m", "lsp_agent", "serve", *args)
    await client.initialize_session(initialize_params(root, options, capabilities))
    return client


async def budget_becomes(client, expected: int) -> dict:
    """Read until the answer has the expected budget: the server applies a configuration
    change after its own round trip to the client."""
    for _ in range(100):
        answer = await request(client, "read", path="long.py")
        if expected - 40 <= len(answer["text"]) <= expected:
            return answer
        await asyncio.sleep(0.05)
    raise AssertionError(f"the budget never became {expected}: {len(answer['text'])}")


async def test_a_changed_budget_applies_to_the_next_read_without_a_restart(root):
    client = await started(root, options={"max_chars": 5000}, configuration={"maxChars": 600})
    try:
        await budget_becomes(client, 600)  # pulled after initialized: over initializationOptions
        client.set_configuration({"maxChars": 1500, "server": {"command": "lsp-agent"}}, section="lspAgent")
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await budget_becomes(client, 1500)
        client.set_configuration({"maxChars": None}, section="lspAgent")  # unset in the editor
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        await budget_becomes(client, 5000)  # back to initializationOptions
        assert client.messages == []  # the editor's own settings in the section are not reported
    finally:
        await client.shutdown_session()


async def test_a_client_that_only_pushes_settings_is_heard_too(root):
    client = await started(root, capabilities=types.ClientCapabilities())
    try:
        client.workspace_did_change_configuration(
            types.DidChangeConfigurationParams(settings={"lspAgent": {"max_chars": 700}})
        )
        await budget_becomes(client, 700)
    finally:
        await client.shutdown_session()


async def test_a_refused_option_is_logged_to_the_client_and_the_default_kept(root):
    client = await started(root, options={"max_chars": 10}, configuration={"searchEngine": "grep"})
    try:
        for _ in range(100):
            if len(client.log_messages) >= 2:
                break
            await asyncio.sleep(0.05)
        logged = [(m.type, m.message) for m in client.log_messages]
        assert (
            types.MessageType.Warning,
            "lsp_agent.server: option max_chars=10 is invalid (an integer >= 200 expected); using 20000.",
        ) in logged
        assert any(
            "option searchEngine='grep' is refused: the one search engine is ripgrep" in m for _, m in logged
        )
        answer = await request(client, "read", path="long.py")
        assert answer["end"] == 500  # the default budget kept: the whole file, 10,335 characters
    finally:
        await client.shutdown_session()


async def test_log_trace_follows_set_trace(root):
    client = await started(root)
    try:
        client.set_trace(types.SetTraceParams(value=types.TraceValue.Verbose))
        traced = asyncio.ensure_future(client.wait_for_notification(types.LOG_TRACE))
        await request(client, "read", path="long.py", max_chars=300)
        trace = await asyncio.wait_for(traced, 10)
        assert trace.message.startswith("read: answered in ") and trace.message.endswith(" ms")
        assert trace.verbose == '{"path": "long.py", "max_chars": 300}'
    finally:
        await client.shutdown_session()


async def test_invalid_params_is_one_line_in_the_log(root, tmp_path):
    log_file = tmp_path / "server.log"
    client = await started(root, "--log-file", str(log_file))
    try:
        with pytest.raises(JsonRpcInvalidParams):
            await request(client, "read", path="long.py", start="ten")
        await request(client, "read", path="long.py", max_chars=300)  # the server goes on
    finally:
        await client.shutdown_session()
    log = log_file.read_text()
    assert "Traceback" not in log and "Sending data" not in log  # no protocol dump either
    [line] = [line for line in log.splitlines() if "invalid params" in line]
    assert line.endswith(
        "WARNING pygls.protocol.json_rpc: invalid params: read: argument 'start': 'ten' is not of type 'integer'"
    )
