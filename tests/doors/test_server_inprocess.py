"""Server internals that a client cannot see: cancellation reaches a running tool, neither
requests nor commands leave entries behind in pygls' table of pending futures, the lane an
outline runs in, and documentSymbol's JSON kept across edits.

The server runs in a thread of this process (over TCP) so the test can inspect it; a test
tool that waits for its cancel event stands in for a long search.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from lsp_agent.server import OutlineJson, create_server, document_symbols, outline_is_heavy, plain_converter
from lsp_agent.syntax import outline
from lsp_agent.syntax.index import Columns
from lsp_agent.syntax.outline import OUTLINES, build
from lsp_agent.syntax.parsing import PARSES
from lsp_agent.tools import REGISTRY, SMALL_FILE_BYTES, tool
from lsp_agent.workspace import Text

# `exit` raises SystemExit in the server's thread, as it ends the process in production.
pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")

started = threading.Event()
observed = threading.Event()


@pytest.fixture(scope="module", autouse=True)
def waiting_tool():
    """`wait_for_cancel`: loops until its context is cancelled, then records it."""
    if "wait_for_cancel" not in REGISTRY:

        @tool(
            "wait_for_cancel",
            "Wait",
            "Test tool: waits until cancelled.",
            {"type": "object", "properties": {}},
        )
        def wait_for_cancel(ctx):
            for _ in range(1000):
                ctx.progress("waiting", None, every=0)
                started.set()
                if ctx.cancel_event.wait(0.01):
                    observed.set()
                    ctx.check_cancelled()
            return {"text": "never cancelled"}

    yield
    REGISTRY.pop("wait_for_cancel", None)


@pytest.fixture(scope="module", autouse=True)
def exploding_tool():
    """`explode`: a tool with a bug (the server registers its tools when created)."""

    @tool("explode", "Explode", "Test tool: raises.", {"type": "object", "properties": {}})
    def explode(ctx):
        raise RuntimeError("a defect on purpose")

    yield
    REGISTRY.pop("explode")


@pytest.fixture
async def connected(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = create_server()
    thread = threading.Thread(target=server.start_tcp, args=("127.0.0.1", port), daemon=True)
    thread.start()
    client = LanguageClient("test", "1", converter_factory=plain_converter)
    for _ in range(100):
        try:
            await client.start_tcp("127.0.0.1", port)
            break
        except OSError:
            await asyncio.sleep(0.05)
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True)
            ),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        )
    )
    yield client, server
    await client.shutdown_async(None)
    client.exit(None)  # pygls answers `exit` with SystemExit: here it ends the server thread
    await client.stop()
    thread.join(timeout=5)


async def test_commands_and_requests_leave_no_pending_futures(connected):
    client, server = connected
    for _ in range(5):
        await client.protocol.send_request_async("lspAgent/read", {"path": "a.txt"})
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="lspAgent.read", arguments=[{"path": "a.txt"}])
        )
    await asyncio.sleep(0.1)
    assert server.protocol._request_futures == {}


async def test_notifications_leave_no_pending_futures(connected, tmp_path):
    """A long editing session sends thousands of didChange: none may leave a future behind."""
    client, server = connected
    uri = (tmp_path / "a.txt").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="plaintext", version=1, text="alpha\n")
        )
    )
    for version in range(2, 52):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                [types.TextDocumentContentChangeWholeDocument(text=f"alpha {version}\n")],
            )
        )
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri=uri)))
    await client.protocol.send_request_async("lspAgent/read", {"path": "a.txt"})  # all handled
    await asyncio.sleep(0.1)
    assert server.protocol._request_futures == {}


@pytest.mark.parametrize("via", ["request", "command"])
async def test_cancel_reaches_the_running_tool(connected, via):
    client, server = connected
    started.clear()
    observed.clear()
    if via == "request":
        future = client.protocol.send_request("lspAgent/wait_for_cancel", {})
    else:
        future = client.protocol.send_request(
            types.WORKSPACE_EXECUTE_COMMAND,
            types.ExecuteCommandParams(command="lspAgent.wait_for_cancel", arguments=[{}]),
        )
    # The tool is running and reporting progress. A cancel that came before it started
    # would cancel a call that never ran, and the tool would never see it.
    assert await asyncio.to_thread(started.wait, 10), "the tool never started"
    msg_id = next(reversed(client.protocol._request_futures))
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
    with pytest.raises(JsonRpcException) as error:
        await asyncio.wait_for(asyncio.wrap_future(future), 5)
    assert error.value.code == -32800  # RequestCancelled
    assert await asyncio.to_thread(observed.wait, 5), "the tool never saw the cancellation"
    await asyncio.sleep(0.1)
    assert server.protocol._request_futures == {}


def test_an_outline_of_a_large_file_is_heavy_only_until_it_was_parsed(tmp_path):
    """documentSymbol while typing in a large file runs in the light lane: after the first
    outline, each one re-parses incrementally."""
    big = tmp_path / "big.py"
    big.write_text("def f():\n    return 1\n" * (SMALL_FILE_BYTES // 20))
    small = tmp_path / "small.py"
    small.write_text("def f():\n    return 1\n")
    assert outline_is_heavy(big) and not outline_is_heavy(small)
    outline(big, Text.from_str(big.read_text()))
    assert not outline_is_heavy(big)


# Names after characters UTF-8 and UTF-16 count differently, on lines shared by symbols.
EDITED_JS = """const s = "𝄞é"; function later() {}
function first(a = "é") { return a; }
class Second { method(b = "𝄞") { return b; } other() {} }
const third = () => "é"; function fourth() { function inner() {} }
"""
PIECES = ["x", "ab", "é", "𝄞", "\n", "{", "}", "(", ")", '"', "function f() {}\n", "class C { m() {} }", ""]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    edits=st.lists(
        st.tuples(st.floats(0, 1), st.integers(0, 4), st.sampled_from(PIECES)), min_size=1, max_size=8
    ),
    encoding=st.sampled_from(["utf-16", "utf-32", "utf-8"]),
)
def test_document_symbols_after_edits_are_those_of_a_cold_outline(edits, encoding):
    """documentSymbol after each edit, reusing the JSON of the symbols the edit left as they
    were, answers what an outline made afresh of the same tree would (a fresh parse may
    recover from syntax errors differently from an incremental one)."""
    path = Path(__file__).parent / "edited" / "typed.js"  # never on disk: only its texts are parsed
    OUTLINES._entries.pop(path, None)
    PARSES._trees.pop(path, None)
    kept, content = OutlineJson(), EDITED_JS
    for where, length, piece in edits:
        kept.encode(path, Columns(Text.from_str(content), encoding), outline(path, Text.from_str(content)))
        at = int(where * len(content))
        content = content[:at] + piece + content[at + length :]
        text = Text.from_str(content)
        answer = kept.encode(path, Columns(text, encoding), outline(path, text))
        fresh = build(PARSES._trees[path])  # the outline of the same (incrementally parsed) tree
        assert json.loads(answer) == document_symbols(Columns(text, encoding), fresh)


async def test_a_tool_defect_answers_as_an_internal_error_and_the_server_serves_on(connected):
    """A bug in a tool reaches the client as an answer it can show an agent, never as a
    JSON-RPC internal error carrying the traceback (pygls puts it in the error's data)."""
    client, _ = connected
    by_request = await client.protocol.send_request_async("lspAgent/explode", {})
    by_command = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspAgent.explode", arguments=[{}])
    )
    for answer in (by_request, by_command):
        assert answer["error"]["code"] == "internal_error"
        assert "RuntimeError: a defect on purpose" in answer["text"] and "Traceback" not in json.dumps(answer)
    after = await client.protocol.send_request_async("lspAgent/read", {"path": "a.txt"})
    assert "alpha" in after["text"]
