"""`make demo`: start the server over stdio as an agent runtime would, against this
repository, and print what an agent gets back from each tool (every agent tool of the
catalog, and the runtime tools for calls written as text)."""

from __future__ import annotations

import asyncio
import json
import sys
import textwrap
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient

from .server import plain_converter

REPO = Path(__file__).resolve().parent.parent


class Session:
    """A minimal agent runtime: one stdio connection, tool calls as custom requests."""

    def __init__(self, root: Path = REPO) -> None:
        self.root = root
        self.client = LanguageClient("lsp-agent-demo", "1", converter_factory=plain_converter)

    async def __aenter__(self) -> Session:
        await self.client.start_io(sys.executable, "-m", "lsp_agent", "serve")
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=self.root.as_uri(), name=self.root.name)],
            )
        )
        self.client.initialized(types.InitializedParams())
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    async def call(self, tool: str, **arguments: Any) -> dict:
        return await self.client.protocol.send_request_async(f"lspAgent/{tool}", arguments)


def show(title: str, tool: str, request: dict, answer: dict) -> None:
    print(f"\n=== {title}")
    print(f"--> lspAgent/{tool} {json.dumps(request)}")
    print(textwrap.indent(answer["text"], "    "))
    extra = {k: v for k, v in answer.items() if k != "text"}
    print(f"    (fields: {json.dumps(extra)})")


async def demo() -> None:
    async with Session() as agent:
        catalog = await agent.client.protocol.send_request_async("lspAgent/tools", {})
        print("=== lspAgent/tools: " + ", ".join(t["name"] for t in catalog["tools"]))
        await demo_reading(agent)
        await demo_symbols(agent)
        await demo_navigation(agent)
        await demo_text_calls(agent)
        await demo_search_over_budget(agent)


async def demo_reading(agent: Session) -> None:
    """read: pages, their continuation, refusals."""
    first = {"path": "lsp_agent/tools/read.py", "max_chars": 1500}
    page = await agent.call("read", **first)
    show("read, part 1 (a 1,500-character budget)", "read", first, page)
    second = {**first, **page["next"]}
    show("read, part 2 (following `next`)", "read", second, await agent.call("read", **second))

    refused = {"path": "lsp_agent/tools/read.py", "start": 100000}
    show("read, a start past the end (refused)", "read", refused, await agent.call("read", **refused))
    outside = {"path": "../../etc/passwd"}
    show(
        "read, a path outside the workspace (refused)",
        "read",
        outside,
        await agent.call("read", **outside),
    )


async def demo_symbols(agent: Session) -> None:
    """Symbols: an outline, a definition found by name, then exactly its lines."""
    outline = {"path": "lsp_agent/workspace.py", "max_chars": 1200}
    show("symbols: the outline of a file", "symbols", outline, await agent.call("symbols", **outline))
    found = {"name_path": "Workspace/display", "max_chars": 1200}
    show(
        "find_symbol: a definition by name path",
        "find_symbol",
        found,
        await agent.call("find_symbol", **found),
    )
    body = {"path": "lsp_agent/workspace.py", "symbol": "Workspace/display", "max_chars": 1200}
    show("read by symbol: one method, by its name path", "read", body, await agent.call("read", **body))


async def demo_navigation(agent: Session) -> None:
    """Navigation: who calls a method, where a name comes from, files, a ranked map."""
    callers = {"name": "Workspace/resolve", "roles": ["call"], "max_chars": 1200}
    show(
        "references: the calls of a method",
        "references",
        callers,
        await agent.call("references", **callers),
    )
    use = {"path": "lsp_agent/tools/read.py", "line": 1, "column": 1, "body": False, "max_chars": 800}
    use["line"], use["column"] = first_use(REPO / "lsp_agent/tools/read.py", "page(")
    show(
        "definition: from a use, through its import",
        "definition",
        use,
        await agent.call("definition", **use),
    )
    listing = {"path": "lsp_agent/syntax", "max_chars": 800}
    show(
        "list_files: files with line counts",
        "list_files",
        listing,
        await agent.call("list_files", **listing),
    )
    ranked = {"path": "lsp_agent", "max_chars": 1200}
    show("overview: the most used definitions", "overview", ranked, await agent.call("overview", **ranked))


async def demo_text_calls(agent: Session) -> None:
    """Tool calls written as text: prose, a valid call and a malformed block in one reply."""
    reply = (
        "Let me check the package metadata.\n"
        '<tool_call>\n{"name": "read", "arguments": {"path": "pyproject.toml", "max_chars": 400}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read", "arguments": {"path": "README.md"}\n</tool_call>\n'
    )
    print(f"\n=== a model's reply, written in text\n{textwrap.indent(reply, '    ')}")
    show(
        "decode_calls: the decoded call, the diagnostic and the nudge",
        "decode_calls",
        {"reply": "…"},
        await agent.call("decode_calls", reply=reply, max_chars=1600),
    )
    show(
        "run_calls: the good call reads a file; the bad block is reported",
        "run_calls",
        {"reply": "…"},
        {
            k: v
            for k, v in (await agent.call("run_calls", reply=reply, max_chars=1600)).items()
            if k in ("text", "nudges_left")
        },
    )


async def demo_search_over_budget(agent: Session) -> None:
    """A search that overflows its budget: it shrinks, and every line names its symbol."""
    overflow = {"pattern": r"def \w+\(self", "paths": ["lsp_agent/search"], "max_chars": 2000}
    searched = await agent.call("search", **overflow)
    show(
        f"search over budget (stage {searched['stage']}: {searched['stage_name']})",
        "search",
        overflow,
        {k: v for k, v in searched.items() if k in ("text", "stage", "next", "total_matches")},
    )


def first_use(path: Path, needle: str) -> tuple[int, int]:
    """(line, column) of the first line using `needle` that is not an import or a definition."""
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if needle in line and not line.lstrip().startswith(("from ", "import ", "def ")):
            return n, line.index(needle) + 1
    return 1, 1


def main() -> None:
    asyncio.run(demo())


if __name__ == "__main__":
    main()
