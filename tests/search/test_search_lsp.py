"""search end to end over stdio: the custom request, the command, progress, cancellation."""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcRequestCancelled
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_agent.search import find_rg
from lsp_agent.server import plain_converter

pytestmark = pytest.mark.skipif(find_rg() is None, reason="no rg")


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)
    return client


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("lsp-search")
    (root / "pkg").mkdir()
    for n in range(300):
        (root / "pkg" / f"m{n}.py").write_text(
            f"class Model{n}:\n    def save(self):\n        return 'foo {n}'\n"
        )
    (root / "big").mkdir()
    (root / "big" / "huge.txt").write_bytes(b"foo bar baz\n" * 3_000_000)  # a search that takes seconds
    return root


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
    )
)
async def client(lsp_client: LanguageClient, tree: Path):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                window=types.WindowClientCapabilities(work_done_progress=True)
            ),
            workspace_folders=[types.WorkspaceFolder(uri=tree.as_uri(), name="ws")],
        )
    )
    await index_built(lsp_client)
    yield
    await lsp_client.shutdown_session()


async def index_built(client: LanguageClient, timeout: float = 60) -> None:
    """Wait for the server's background symbol index to finish: a server told to exit while
    it still indexes keeps reporting progress to a closed pipe (see the report)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for reports in client.progress_reports.values():
            if (
                reports
                and getattr(reports[0], "title", "") == "lsp-agent: indexing symbols"
                and reports[-1].kind == "end"
            ):
                return
        await asyncio.sleep(0.05)


def rg_processes_in(root: Path) -> list[int]:
    """ripgrep processes working in `root` or a folder under it (their cwd), from /proc."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if os.readlink(f"/proc/{pid}/exe").endswith("/rg") and Path(
                os.readlink(f"/proc/{pid}/cwd")
            ).is_relative_to(root):
                found.append(int(pid))
        except OSError:
            continue
    return found


async def test_search_request_and_command_give_the_same_answer(client: LanguageClient, tree: Path):
    arguments = {"pattern": "return 'foo 7\\d*'", "paths": ["pkg"], "max_chars": 2000}
    answer = await client.protocol.send_request_async("lspAgent/search", arguments)
    assert answer["total_matches"] == 11 and answer["stage"] == 1
    assert "3 Model7/save:        return 'foo 7'" in answer["text"]
    command = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspAgent.search", arguments=[arguments])
    )
    assert command == answer


async def test_an_overflowing_search_shrinks_and_names_symbols(client: LanguageClient):
    answer = await client.protocol.send_request_async(
        "lspAgent/search", {"pattern": "return 'foo", "paths": ["pkg"], "max_chars": 12_000}
    )
    assert answer["total_matches"] == 300 and answer["stage"] in (3, 4) and len(answer["text"]) <= 12_000
    assert "Model42/save" in answer["text"]


async def test_refusals_are_answers_and_bad_arguments_are_errors(client: LanguageClient):
    refused = await client.protocol.send_request_async("lspAgent/search", {"pattern": "(unclosed"})
    assert refused["error"]["code"] == "invalid_regex"
    with pytest.raises(Exception, match="max_chars"):
        await client.protocol.send_request_async("lspAgent/search", {"pattern": "x", "max_chars": "many"})


async def test_progress_notifications_arrive(client: LanguageClient):
    answer = await client.protocol.send_request_async("lspAgent/search", {"pattern": "foo", "paths": ["pkg"]})
    assert answer["total_matches"] == 300
    ours = [
        v for v in client.progress_reports.values() if v and getattr(v[0], "title", "") == "lsp-agent search"
    ]
    assert len(ours) == 1  # one token for this search (the server may report other work too)
    kinds = [r.kind for r in ours[0]]
    assert kinds[0] == "begin" and kinds[-1] == "end"
    assert "files with matches" in ours[0][0].message


async def test_cancelling_a_long_search_leaves_no_rg_process(client: LanguageClient, tree: Path):
    request_id = "long-search"
    pending = client.protocol.send_request(
        "lspAgent/search", {"pattern": "foo", "paths": ["big"]}, msg_id=request_id
    )
    deadline = time.monotonic() + 10
    while not rg_processes_in(tree):  # wait until ripgrep is running
        assert time.monotonic() < deadline, "rg never started"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.3)
    client.protocol.notify("$/cancelRequest", types.CancelParams(id=request_id))
    with pytest.raises(JsonRpcRequestCancelled):  # not a timeout: the request really ended
        await asyncio.wait_for(asyncio.wrap_future(pending), 10)
    deadline = time.monotonic() + 3
    while rg_processes_in(tree):
        assert time.monotonic() < deadline, "rg left running after cancellation"
        await asyncio.sleep(0.02)
    # the server is still serving
    answer = await client.protocol.send_request_async(
        "lspAgent/search", {"pattern": "Model299\\b", "paths": ["pkg"]}
    )
    assert answer["total_matches"] == 1
