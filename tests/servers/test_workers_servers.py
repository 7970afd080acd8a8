"""A heavy call in a worker process (lanes.py) asks the serving process's real language
server over the pipe (basedpyright, typescript-language-server) and answers as in-process."""

from __future__ import annotations

import pytest

from lsp_agent import lanes
from lsp_agent.config import Settings
from lsp_agent.tools import Context
from lsp_agent.workspace import Workspace

from .test_real_servers import FIXTURES, ask, pytestmark, servers, stop_servers  # noqa: F401 (fixture, mark)

CASES = [
    ("py", "references", {"path": "app/views.py", "line": 12, "column": 11}),  # cache.get
    ("py", "references", {"name": "save"}),
    ("py", "definition", {"path": "app/models.py", "line": 8, "column": 17}),  # super().save()
    ("py", "callers", {"name": "order_lines", "depth": 3}),
    ("ts", "implementations", {"path": "src/shapes.ts", "line": 1, "column": 18}),
]


@pytest.fixture(scope="module")
def processes():
    pool = lanes.ToolProcesses(workers=1)
    yield pool
    pool.stop()


@pytest.mark.parametrize(("language", "tool", "arguments"), CASES, ids=[f"{t} {a}" for _, t, a in CASES])
def test_a_worker_asks_the_servers_language_server(processes, language, tool, arguments):
    here = ask(language, tool, **arguments)  # once the server no longer says it may be incomplete
    settings = Settings().replace(semantic_servers=servers(), semantic_timeout=60.0)
    ctx = Context(Workspace([FIXTURES / language]), settings)
    there = processes.run(ctx, tool, arguments)
    assert there == here
    assert there["semantic"]["server"] in ("basedpyright", "typescript-language-server")
