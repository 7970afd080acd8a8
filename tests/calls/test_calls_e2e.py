"""Tool calls end to end over stdio: the real server, driven by pytest-lsp."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.support.lsp_client import CONFIG, command, initialize_params, request

REPLY = (
    "I'll read the notes.\n"
    '<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>\n'
    '<tool_call>\n{"name": "read", "arguments": {"path": "other.txt"}\n</tool_call>\n'
)


@pytest.fixture
def root(tmp_path):
    (tmp_path / "notes.txt").write_text("first note\nsecond note\n")
    return tmp_path


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, root):
    await lsp_client.initialize_session(initialize_params(root))
    yield
    await lsp_client.shutdown_session()


async def test_decode_calls(client: LanguageClient):
    answer = await request(client, "decode_calls", reply=REPLY)
    assert answer["visible_text"] == "I'll read the notes.\n"
    assert [(c["name"], c["arguments"]) for c in answer["calls"]] == [("read", {"path": "notes.txt"})]
    assert [(d["kind"], d["line"]) for d in answer["diagnostics"]] == [("malformed", 5)]
    assert answer["nudge"]["kind"] == "undecodable"
    assert await command(client, "decode_calls", reply=REPLY) == answer


async def test_streamed_session(client: LanguageClient):
    session = (await request(client, "stream_open"))["session"]
    visible, calls, diagnostics, fed = "", [], [], 0
    for k in range(0, len(REPLY), 9):  # 9-character deltas: openers and closers get split
        delta = REPLY[k : k + 9]
        answer = await request(client, "stream_feed", session=session, delta=delta, offset=fed)
        fed += len(delta)
        visible += answer["visible_text"]
        calls += answer["calls"]
        diagnostics += answer["diagnostics"]
    end = await request(client, "stream_flush", session=session, finish_reason="stop")
    visible += end["visible_text"]
    batch = await request(client, "decode_calls", reply=REPLY)
    assert (visible, calls, diagnostics + end["diagnostics"]) == (
        batch["visible_text"],
        batch["calls"],
        batch["diagnostics"],
    )
    assert end["nudge"] == batch["nudge"]
    again = await request(client, "stream_feed", session=session, delta="x")
    assert again["error"]["code"] == "unknown_session"


async def test_run_calls_reads_a_file(client: LanguageClient):
    answer = await request(client, "run_calls", reply=REPLY)
    result = answer["results"][0]
    assert result["name"] == "read"
    assert result["answer"]["text"].splitlines()[1:] == ["1:first note", "2:second note"]
    assert "1:first note" in answer["text"]
    assert [d["kind"] for d in answer["diagnostics"]] == ["malformed"]
    assert "The other call (call_1) ran; its result follows." in answer["nudge"]["text"]


async def test_runtime_tools_stay_out_of_the_agent_catalog(client: LanguageClient):
    agents = await client.protocol.send_request_async("lspAgent/tools", {})
    everything = await client.protocol.send_request_async("lspAgent/tools", {"all": True})
    assert "decode_calls" not in {t["name"] for t in agents["tools"]}
    assert {"decode_calls", "run_calls", "stream_feed", "tool_prompt"} <= {
        t["name"] for t in everything["tools"]
    }


async def test_runtime_tool_lists_with_type_aliases_work_and_broken_ones_are_invalid_params(
    client: LanguageClient,
):
    tools = [
        {
            "type": "function",
            "function": {
                "name": "add",
                "parameters": {"type": "dict", "properties": {"a": {"type": "float"}, "b": {"type": "int"}}},
            },
        }
    ]
    answer = await request(
        client,
        "decode_calls",
        reply="<function=add><parameter=a>1.5</parameter><parameter=b>2</parameter></function>",
        tools=tools,
    )
    assert [(c["name"], c["arguments"], c["runnable"]) for c in answer["calls"]] == [
        ("add", {"a": 1.5, "b": 2}, True)
    ]
    broken = [tools[0], {"type": "function", "function": {"parameters": {}}}]
    with pytest.raises(Exception) as error:
        await request(client, "decode_calls", reply="x", tools=broken)
    assert error.value.code == -32602
    assert "tools[1]: `name` must be a non-empty string" in str(error.value)
    with pytest.raises(Exception) as error:
        await request(
            client,
            "stream_open",
            tools=[{"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "floaty"}}}}],
        )
    assert error.value.code == -32602 and "tools[0] (f): invalid JSON Schema at properties/x/type" in str(
        error.value
    )
