"""`lsp-agent mcp` in both revisions hosts speak, with the MCP SDK's own client: the
2025-11-25 initialize handshake (Claude Code and Codex today) and 2026-07-28, stateless,
found by `server/discover` (rolling out in Claude Code, behind a flag in Codex). In each,
every tool the server lists is listed whole and called.

And the catalog stays small enough for hosts to show in full: Claude Code defers an MCP
server's tools once their descriptions pass a share of the context."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters

from lsp_agent.mcp import ANSWER_META
from lsp_agent.tools import Context, call, catalog
from lsp_agent.workspace import Workspace

REVISIONS = {"2025-11-25": "legacy", "2026-07-28": "auto"}  # revision: the client's mode for it
CATALOG_LIMIT = 25_000

# A call of each tool on the project below, and a line its answer must hold.
CALLS: dict[str, tuple[dict, str]] = {
    "read": ({"path": "shop.py", "max_chars": 400}, "1:class Cart:"),
    "search": ({"pattern": "total", "max_chars": 600}, "2 Cart:    def total(self):"),
    "symbols": ({"path": "shop.py"}, "method total"),
    "find_symbol": ({"name_path": "Cart/total"}, "method Cart/total"),
    "references": ({"name": "total"}, "5 call main: return Cart().total()"),
    "definition": ({"path": "app.py", "line": 5, "column": 12}, "through `from shop import Cart`"),
    "list_files": ({"path": "."}, "shop.py"),
    "overview": ({"path": "."}, "1: class Cart"),
}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    (root / "shop.py").write_text("class Cart:\n    def total(self):\n        return 0\n")
    (root / "app.py").write_text("from shop import Cart\n\n\ndef main():\n    return Cart().total()\n")
    return root


def client(root: Path, mode: str) -> Client:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lsp_agent", "mcp", "--root", str(root)]
    )
    return Client(params, mode=mode, read_timeout_seconds=30)


def example_arguments(schema: dict) -> dict[str, Any]:
    """The required arguments of a tool this test has no call for, each a plain value."""
    plain = {"string": "Cart", "integer": 1, "boolean": False, "array": [], "object": {}}
    properties = schema.get("properties", {})
    return {name: plain.get(properties[name].get("type"), "Cart") for name in schema.get("required", [])}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_every_tool_is_listed_and_called_in_each_revision(revision, project):
    async with client(project, REVISIONS[revision]) as mcp:
        assert mcp.protocol_version == revision
        assert (mcp.session.discover_result is not None) == (revision == "2026-07-28")  # found by discover
        assert mcp.server_info is not None and mcp.server_info.name == "lsp-agent"
        listed = (await mcp.list_tools()).tools
        assert [(t.name, t.description, t.input_schema) for t in listed] == [
            (t["name"], t["description"], t["inputSchema"]) for t in catalog()
        ]
        for tool in listed:
            arguments, says = CALLS.get(tool.name, (example_arguments(tool.input_schema), ""))
            result = await mcp.call_tool(tool.name, arguments)
            [block] = result.content
            answer = result.meta[ANSWER_META]
            assert block.type == "text" and block.text == answer["text"], tool.name
            assert "internal_error" not in json.dumps(answer), f"{tool.name}: {answer['text']}"
            if tool.name in CALLS:
                assert not result.is_error, f"{tool.name}: {block.text}"
                assert says in block.text, f"{tool.name}: {block.text}"
                assert answer == call(Context(Workspace([project])), tool.name, arguments)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_malformed_call_is_a_tool_error_in_each_revision(revision, project):
    async with client(project, REVISIONS[revision]) as mcp:
        wrong = await mcp.call_tool("read", {"path": "shop.py", "start": "ten"})
        after = await mcp.call_tool("read", {"path": "shop.py", "max_chars": 200})
    assert wrong.is_error and "'start'" in wrong.content[0].text
    assert not after.is_error


def test_the_whole_catalog_fits_in_25000_characters():
    """What `tools/list` carries for all the tools: names, titles, descriptions, schemas."""
    size = len(json.dumps(catalog()))
    assert size <= CATALOG_LIMIT, f"the catalog is {size:,} characters, over {CATALOG_LIMIT:,}"


@pytest.mark.parametrize("tool", catalog(), ids=lambda t: t["name"])
def test_each_description_says_when_to_use_the_tool(tool):
    """A description is read by a model choosing a tool: it says when this one is the right
    one (what each argument means is the schema's to say)."""
    description = tool["description"]
    assert re.search(r"\b(Use it|Start here)\b", description), description
    assert len(description) <= 1200, f"{len(description)} characters"
