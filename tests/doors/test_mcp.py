"""End-to-end tests of `lsp-agent mcp` over stdio, with the MCP Python SDK's own client."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from lsp_agent.mcp import ANSWER_META
from lsp_agent.tools import Context, call, catalog
from lsp_agent.workspace import Workspace

SLOW_TOOL_SERVER = str(Path(__file__).parents[1] / "support" / "mcp_slow_tool.py")


def client(
    root: Path | None, *extra: str, cwd: Path | None = None, mode: str = "legacy", script=None
) -> Client:
    """A client that starts the server as a subprocess. 'legacy' is the initialize handshake
    today's hosts (Claude Code, Codex) use; 'auto' probes the 2026 discovery first."""
    args = [script] if script else ["-m", "lsp_agent", "mcp"]
    args += ["--root", str(root)] if root else []
    params = StdioServerParameters(command=sys.executable, args=[*args, *extra], cwd=cwd)
    return Client(params, mode=mode, read_timeout_seconds=20)


def text_of(result) -> str:
    [block] = result.content
    assert block.type == "text"
    return block.text


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    (root / "lines.txt").write_text("".join(f"line {n:03} of the file\n" for n in range(1, 121)))
    return root


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_tools_list_is_the_registry_catalog(root, mode):
    async with client(root, mode=mode) as mcp:
        assert mcp.server_info.name == "lsp-agent"
        listed = (await mcp.list_tools()).tools
    expected = catalog()
    assert [t.name for t in listed] == [t["name"] for t in expected]
    for tool, entry in zip(listed, expected, strict=True):
        assert tool.description == entry["description"]
        assert tool.input_schema == entry["inputSchema"]
        # every tool only reads the workspace: hosts may run the calls in parallel and in plan mode
        assert tool.title == tool.annotations.title == entry["title"]
        assert tool.annotations.read_only_hint is True
        assert tool.annotations.idempotent_hint is True
        assert tool.annotations.open_world_hint is False
        assert tool.annotations.model_dump(by_alias=True, exclude_none=True) == entry["annotations"]
    # runtime-only tools (decoding replies) are not offered to a model
    assert {t["name"] for t in catalog(include_runtime=True)} - {t.name for t in listed}


async def test_read_pages_with_next_give_every_line_once(root):
    lines = (root / "lines.txt").read_text().splitlines()
    shown: list[str] = []
    pages = 0
    async with client(root) as mcp:
        arguments = {"path": "lines.txt", "max_chars": 600}
        for pages in range(1, 20):  # noqa: B007 (the count is checked after the loop)
            result = await mcp.call_tool("read", arguments)
            assert not result.is_error
            text = text_of(result)
            answer = result.meta[ANSWER_META]
            assert answer["text"] == text and len(text) <= 600
            assert result.structured_content is None  # off by default: hosts show it instead of the text
            shown += [m[2] for m in re.finditer(r"(?m)^(\d+):(.*)$", text)]
            if answer["next"] is None:
                break
            assert f"start={answer['next']['start']}" in text  # the text says how to read on
            arguments |= answer["next"]
    assert shown == lines
    assert pages > 3


async def test_refusal_is_a_tool_error_with_the_refusal_text(root):
    (root.parent / "secret.txt").write_text("outside\n")
    async with client(root) as mcp:
        result = await mcp.call_tool("read", {"path": "../secret.txt"})
    assert result.is_error
    assert "outside the workspace" in text_of(result) and "outside\n" not in text_of(result)
    assert result.meta[ANSWER_META]["error"]["code"] == "outside_workspace"
    assert result.meta[ANSWER_META]["text"] == text_of(result)


async def test_bad_arguments_are_tool_errors_naming_the_argument(root):
    async with client(root) as mcp:
        wrong_type = await mcp.call_tool("read", {"path": "lines.txt", "start": "ten"})
        unknown = await mcp.call_tool("read", {"path": "lines.txt", "line": 3})
        missing = await mcp.call_tool("read", {})
        with pytest.raises(MCPError) as unknown_tool:
            await mcp.call_tool("decode_calls", {"reply": "hi"})  # runtime-only: not served here
        still_serving = await mcp.call_tool("read", {"path": "lines.txt", "max_chars": 200})
    assert wrong_type.is_error and "'start'" in text_of(wrong_type) and "integer" in text_of(wrong_type)
    assert unknown.is_error and "'line'" in text_of(unknown)
    assert missing.is_error and "'path'" in text_of(missing)
    assert "unknown tool 'decode_calls'" in unknown_tool.value.message
    assert not still_serving.is_error


async def test_settings_flags_and_structured_content(root):
    async with client(root, "--default-max-chars", "300", "--structured-content") as mcp:
        result = await mcp.call_tool("read", {"path": "lines.txt"})
    assert len(text_of(result)) <= 300
    assert result.structured_content == result.meta[ANSWER_META]
    assert result.structured_content["next"] == {"start": result.structured_content["end"] + 1}


async def test_default_root_is_the_current_directory(root):
    async with client(None, cwd=root) as mcp:
        result = await mcp.call_tool("read", {"path": "lines.txt", "max_chars": 200})
    assert not result.is_error and "line 001 of the file" in text_of(result)


async def test_cancellation_stops_the_tool_and_progress_arrives(root):
    progress: list[tuple[float, float | None, str | None]] = []
    first = asyncio.Event()

    async def on_progress(value, total, message):
        progress.append((value, total, message))
        first.set()

    async with client(root, script=SLOW_TOOL_SERVER) as mcp:
        call = asyncio.create_task(mcp.call_tool("wait_for_cancel", {}, progress_callback=on_progress))
        await asyncio.wait_for(first.wait(), 10)
        call.cancel()  # the client sends notifications/cancelled
        with pytest.raises(asyncio.CancelledError):
            await call
        marker = root / "cancelled"
        for _ in range(100):
            if marker.exists():
                break
            await asyncio.sleep(0.05)
        assert marker.read_text().startswith("cancelled at step")
        after = await mcp.call_tool("read", {"path": "lines.txt", "max_chars": 200})
    assert not after.is_error
    values = [value for value, _, _ in progress]
    assert values == sorted(set(values)) and values[0] >= 1  # MCP progress must increase
    assert progress[0][2].startswith("waiting, step")


async def test_a_tool_defect_is_a_tool_error_the_model_reads(root):
    """Not a JSON-RPC error (code 0 under the legacy handshake, which hosts may not show the
    model): a tool result with isError, no traceback, and the server serving on."""
    async with client(root, script=SLOW_TOOL_SERVER) as mcp:
        failed = await mcp.call_tool("defect", {})
        after = await mcp.call_tool("read", {"path": "lines.txt", "max_chars": 200})
    assert failed.is_error
    assert "RuntimeError: a defect on purpose" in text_of(failed) and "bug in lsp-agent" in text_of(failed)
    assert "Traceback" not in text_of(failed)
    assert not after.is_error and "line 001 of the file" in text_of(after)


@pytest.mark.parametrize("missing", ["mcp", "anyio"])  # the extra brings both
def test_without_the_extra_the_command_says_how_to_install_it(missing):
    hide = f"import sys; sys.modules[{missing!r}] = None; from lsp_agent.cli import main; main(['mcp'])"
    done = subprocess.run(
        [sys.executable, "-c", hide], capture_output=True, text=True, timeout=30, check=False
    )
    assert done.returncode == 1
    assert "pip install 'lsp-agent[mcp]'" in done.stderr
    assert "Traceback" not in done.stderr


async def test_search_answers_as_the_registry_does(root):
    (root / "m.py").write_text(
        "class Message777:\n"
        + "".join(f"    def to_dict_{n}(self):\n        return {{'needle': {n}}}\n" for n in range(60))
    )
    arguments = {"pattern": "needle", "max_chars": 2500}
    async with client(root) as mcp:
        result = await mcp.call_tool("search", arguments)
        bad_regex = await mcp.call_tool("search", {"pattern": "needle("})
    answer = result.meta[ANSWER_META]
    assert answer == call(Context(Workspace([root])), "search", arguments)  # same tool, same answer
    assert not result.is_error and text_of(result) == answer["text"] and len(answer["text"]) <= 2500
    assert answer["total_matches"] == 60 and answer["stage"] > 1  # shortened, and it says so
    assert "Message777/to_dict_" in answer["text"]  # shortened lines still name their symbol
    assert bad_regex.is_error and bad_regex.meta[ANSWER_META]["error"]["code"] == "invalid_regex"
    assert "unclosed group" in text_of(bad_regex)
