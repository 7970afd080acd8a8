"""End to end over stdio: the real server process, driven by pytest-lsp."""

from __future__ import annotations

import asyncio
import os

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from tests.support.lsp_client import CONFIG, command, initialize_params, request


@pytest.fixture
def root(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(1, 501)))
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02" * 100)
    (tmp_path / "secret.txt").write_text("top secret\n")
    os.symlink(tmp_path / "secret.txt", ws / "escape.txt")
    return ws


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient, root):
    await lsp_client.initialize_session(initialize_params(root, {"max_chars": 5000}))
    yield
    await lsp_client.shutdown_session()


async def test_catalog_request(client: LanguageClient):
    catalog = await client.protocol.send_request_async("lspAgent/tools", {})
    names = [t["name"] for t in catalog["tools"]]
    assert "read" in names
    read = next(t for t in catalog["tools"] if t["name"] == "read")
    assert read["inputSchema"]["properties"]["start"]["type"] == "integer"
    # the facts MCP clients get as tool annotations, for runtimes that register the catalog:
    # the edit tools write and may overwrite, the others only read
    for tool in catalog["tools"]:
        writes = tool["name"] in ("edit", "edit_symbol", "create_file", "rename")
        assert tool["annotations"] == {
            "title": tool["title"],
            "readOnlyHint": not writes,
            "destructiveHint": writes,
            "idempotentHint": not writes,
            "openWorldHint": False,
        }


async def test_read_by_request_pages_with_the_configured_budget(client: LanguageClient):
    first = await request(client, "read", path="long.py")
    assert len(first["text"]) <= 5000  # the budget from initializationOptions
    assert first["start"] == 1 and first["next"] == {"start": first["end"] + 1}
    second = await request(client, "read", path="long.py", **first["next"])
    assert second["text"].split("\n")[1].endswith(f"value_{first['end'] + 1} = {first['end'] + 1}")


async def test_read_by_command_answers_the_same(client: LanguageClient):
    by_command = await command(client, "read", path="long.py", start=490)
    by_request = await request(client, "read", path="long.py", start=490)
    assert by_command == by_request
    assert by_command["end"] == 500 and by_command["next"] is None


async def test_unsaved_buffer_after_incremental_change(client: LanguageClient, root):
    uri = (root / "long.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=(root / "long.py").read_text()
            )
        )
    )
    # Replace "value_2 = 2" by "renamed_2 = 2" on line 2 (0-based line 1), incrementally.
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        start=types.Position(line=1, character=0), end=types.Position(line=1, character=5)
                    ),
                    text="renamed",
                )
            ],
        )
    )
    answer = await request(client, "read", path="long.py", start=1, max_chars=300)
    assert "renamed_2 = 2" in answer["text"] and answer["from_editor"] is True
    assert (root / "long.py").read_text().splitlines()[1] == "value_2 = 2"  # disk untouched
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    answer = await request(client, "read", path="long.py", start=1, max_chars=300)
    assert "value_2 = 2" in answer["text"] and answer["from_editor"] is False


@pytest.mark.parametrize(
    "path, code",
    [("../secret.txt", "outside_workspace"), ("escape.txt", "outside_workspace"), ("blob.bin", "binary")],
)
async def test_refusals(client: LanguageClient, path, code):
    answer = await request(client, "read", path=path)
    assert answer["error"]["code"] == code
    assert "top secret" not in answer["text"]


async def test_bad_argument_types_are_invalid_params(client: LanguageClient):
    with pytest.raises(JsonRpcException) as error:
        await request(client, "read", path="long.py", start="ten")
    assert error.value.code == -32602 and "start" in str(error.value)
    with pytest.raises(JsonRpcException) as error:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspAgent.nope", arguments=[{}])
        )
    assert error.value.code == -32602 and "unknown command" in str(error.value)


@pytest_lsp.fixture(config=CONFIG)
async def misconfigured(lsp_client: LanguageClient, root):
    await lsp_client.initialize_session(initialize_params(root, {"max_chars": -3, "bogus": True}))
    yield
    await lsp_client.shutdown_session()


async def test_bad_options_are_reported_and_defaults_kept(misconfigured: LanguageClient):
    for _ in range(100):  # the message may arrive before or after initialize returns
        if misconfigured.messages:
            break
        await asyncio.sleep(0.05)
    messages = " ".join(m.message for m in misconfigured.messages)
    assert "max_chars" in messages and "bogus" in messages
    answer = await request(misconfigured, "read", path="long.py")
    assert answer["next"] is None  # the default 20,000 budget holds the whole file
