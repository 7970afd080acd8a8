"""A hostile (or broken) editor over LSP: a didChange that cannot apply is an error the
editor sees and the server stops serving its wrong copy of the buffer until it gets the
whole text again; a file:// URI of another host never stands for a local file."""

from __future__ import annotations

import asyncio

import pytest

from .raw_rpc import RawClient

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
