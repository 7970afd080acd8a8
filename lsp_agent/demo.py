"""`make demo`: start the server over stdio as an agent runtime would, against this
repository, and print what an agent gets back from each tool (every agent tool of the
catalog, and the runtime tools for calls written as text)."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
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
        await reads(agent)
        await symbols_and_navigation(agent)
        await demo_hierarchy(agent)
        await calls_written_as_text(agent)
        await search_chain(agent)
    with tempfile.TemporaryDirectory() as scratch:
        await edits_demo(Path(scratch))


async def shown(agent: Session, title: str, tool: str, request: dict) -> dict:
    """Call `tool` with `request`, show the answer, and return it."""
    answer = await agent.call(tool, **request)
    show(title, tool, request, answer)
    return answer


async def reads(agent: Session) -> None:
    first = {"path": "lsp_agent/tools/read.py", "max_chars": 1500}
    page = await shown(agent, "read, part 1 (a 1,500-character budget)", "read", first)
    await shown(agent, "read, part 2 (following `next`)", "read", {**first, **page["next"]})
    refused = {"path": "lsp_agent/tools/read.py", "start": 100000}
    await shown(agent, "read, a start past the end (refused)", "read", refused)
    await shown(agent, "read, a path outside the workspace (refused)", "read", {"path": "../../etc/passwd"})


async def symbols_and_navigation(agent: Session) -> None:
    # Symbols: an outline, a definition found by name, then exactly its lines.
    outline = {"path": "lsp_agent/workspace.py", "max_chars": 1200}
    await shown(agent, "symbols: the outline of a file", "symbols", outline)
    found = {"name_path": "Workspace/display", "max_chars": 1200}
    await shown(agent, "find_symbol: a definition by name path", "find_symbol", found)
    body = {"path": "lsp_agent/workspace.py", "symbol": "Workspace/display", "max_chars": 1200}
    await shown(agent, "read by symbol: one method, by its name path", "read", body)

    # Navigation: who calls a method, where a name comes from, files, a ranked map.
    callers = {"name": "Workspace/resolve", "roles": ["call"], "max_chars": 1200}
    await shown(agent, "references: the calls of a method", "references", callers)
    line, column = first_use(REPO / "lsp_agent/tools/read.py", "page(")
    use = {"path": "lsp_agent/tools/read.py", "line": line, "column": column, "body": False, "max_chars": 800}
    await shown(agent, "definition: from a use, through its import", "definition", use)
    listing = {"path": "lsp_agent/syntax", "max_chars": 800}
    await shown(agent, "list_files: files with line counts", "list_files", listing)
    ranked = {"path": "lsp_agent", "max_chars": 1200}
    await shown(agent, "overview: the most used definitions", "overview", ranked)


async def demo_hierarchy(agent: Session) -> None:
    """Callers, callees and implementations: the language's server where one runs, else by name."""
    for tool, arguments in (
        ("callers", {"name": "Workspace/resolve", "max_chars": 900}),
        ("callees", {"name": "use_at", "max_chars": 700}),
        ("implementations", {"name": "Engine", "max_chars": 500}),
    ):
        show(f"{tool}: {arguments['name']}", tool, arguments, await agent.call(tool, **arguments))


async def calls_written_as_text(agent: Session) -> None:
    """Prose, a valid call and a malformed block in one reply: decoded, then run."""
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
    ran = await agent.call("run_calls", reply=reply, max_chars=1600)
    show(
        "run_calls: the good call reads a file; the bad block is reported",
        "run_calls",
        {"reply": "…"},
        {k: v for k, v in ran.items() if k in ("text", "nudges_left")},
    )


async def search_chain(agent: Session) -> None:
    """One search at ever smaller budgets, shown at each new stage of the shortening chain
    it comes to (found by trying, so it holds whatever the grammars' fixtures hold)."""
    search = {"pattern": r"def |fn |class ", "paths": ["tests/fixtures/grammars"], "context_after": 1}
    budget = len((await agent.call("search", **search, max_chars=100_000))["text"])
    seen: set[int] = set()
    while budget >= 200:
        request = {**search, "max_chars": budget}
        answer = await agent.call("search", **request)
        if answer["stage"] not in seen:
            seen.add(answer["stage"])
            title = "search within its budget" if answer["stage"] == 1 else "search over budget: it shrinks"
            show(
                f"{title} (stage {answer['stage']}: {answer['stage_name']})",
                "search",
                request,
                {k: v for k, v in answer.items() if k in ("text", "stage", "next", "total_matches")},
            )
        budget = int(budget * 0.97)  # small steps: a stage that fits only a narrow range is not skipped


async def edits_demo(scratch: Path) -> None:
    """The edit tools, in a scratch workspace (never this repository)."""
    async with Session(scratch) as agent:
        steps = [
            ("create_file: a new file", "create_file",
             {"path": "shop.py", "content": "def price(x):\n    return x\n\n\ndef tax(x):\n    return x\n"}),
            ("edit: old text that occurs twice is refused, each occurrence listed", "edit",
             {"path": "shop.py", "old_text": "return x", "new_text": "return x * 2"}),
            ("edit: the same, inside one symbol", "edit",
             {"path": "shop.py", "old_text": "return x", "new_text": "return x * 2", "symbol": "tax"}),
            ("edit_symbol: a function inserted after another, by name", "edit_symbol",
             {"path": "shop.py", "symbol": "price", "action": "insert_after",
              "new_text": "def discount(x):\n    return x * 0.9"}),
            ("rename: a preview, by the language's own server (without one: refused, never by name)", "rename",
             {"path": "shop.py", "symbol": "tax", "new_name": "levy"}),
        ]  # fmt: skip
        for title, tool, request in steps:
            show(title, tool, request, await agent.call(tool, **request))


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
