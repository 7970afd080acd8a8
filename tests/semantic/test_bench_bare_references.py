"""The precision bench's served process (benchmarks/bare_references.py): the stock server
with one more request, `lspAgent/bare_references`, which answers the question `references`
asks from a use with the server's locations alone. A real server process answers
(tests/semantic/fault_server.py) over a real lsp-agent server over stdio."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

from benchmarks.common import Client
from tests.semantic.test_semantic_candidates_time import FIXTURE, SERVER

ASKED = {"path": "app/views.py", "line": 10, "column": 11}


async def both_answers(tmp_path: Path) -> tuple[dict, dict, object]:
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    command = [sys.executable, str(SERVER), "ok", str(tmp_path / "log")]
    options = {"semantic_servers": {"python": {"name": "fault-ok", "command": command}}}
    client = await Client.start(
        root, str(tmp_path / "cache"), options=options, module="benchmarks.bare_references"
    )
    try:
        ours = await asyncio.wait_for(client.request("lspAgent/references", ASKED), 60)
        bare = await asyncio.wait_for(client.request("lspAgent/bare_references", ASKED), 60)
        tools = await asyncio.wait_for(client.request("lspAgent/tools", {}), 60)
    finally:
        await client.stop()
    assert isinstance(ours, dict) and isinstance(bare, dict)
    return ours, bare, tools


def test_the_bare_answer_holds_the_servers_locations_of_the_same_question(tmp_path):
    ours, bare, tools = asyncio.run(both_answers(tmp_path))
    typed = {(r["path"], r["line"], r["column"]) for r in ours["references"] if r["source"] != "name"}
    assert typed, ours["text"]  # the server answered references
    assert {(r["path"], r["line"], r["column"]) for r in bare["references"]} == typed
    assert bare["text"] == f"{len(typed)} locations from fault-ok"
    assert "bare_references" not in str(tools)  # for the bench alone: not in the catalog
