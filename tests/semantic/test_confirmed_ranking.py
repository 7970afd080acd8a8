"""overview's confirmed ranking (tools/confirmed_ranking.py) on tests/fixtures/ranking/py,
where the by-name ranking and the confirmed one differ: `draw` and `clear` are defined by
three classes and only Star's are used (through a typed parameter the syntax cannot follow).
The confirmed source here is a SCIP index written like scip-python's (the real indexer and
basedpyright answer the same fixture in tests/servers/test_confirmed_ranking.py), or a
language server that misbehaves on purpose (fault_server.py)."""

from __future__ import annotations

import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.errors import Cancelled
from lsp_agent.semantic import POOL, scip
from lsp_agent.tools import Context, call, confirmed_ranking
from lsp_agent.tools.confirmed_ranking import Confirmation, reorder
from lsp_agent.workspace import Workspace
from tests.semantic.test_scip import field, occurrence
from tests.semantic.test_semantic_faults import wait_for

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ranking" / "py"
SERVER = Path(__file__).parent / "fault_server.py"

BY_NAME = ["Star", "Brush/draw", "Canvas/draw", "Star/draw", "Brush/clear", "Canvas/clear", "Star/clear"]
# Star: imported and annotated in main.py (2), Star/draw called twice, Star/clear once; the
# others never: they keep their by-name order below
CONFIRMED = ["Star", "Star/draw", "Star/clear", "Brush/draw", "Canvas/draw", "Brush/clear", "Canvas/clear"]


def symbol(name: str) -> str:
    return f"scip-python python app 0 {name}"


def fixture_index() -> bytes:
    """An index of the fixture as scip-python writes one (0-based positions; a range on
    one line has three numbers; role 1: a definition)."""
    documents = {
        "app/main.py": [((0, 21, 25), "app.star/Star#", 0), ((3, 15, 19), "app.star/Star#", 0),
                        ((4, 15, 19), "app.star/Star#draw().", 0), ((4, 28, 32), "app.star/Star#draw().", 0),
                        ((5, 9, 14), "app.star/Star#clear().", 0)],
    }  # fmt: skip
    for module, cls in (("star", "Star"), ("brush", "Brush"), ("canvas", "Canvas")):
        documents[f"app/{module}.py"] = [
            ((0, 6, 6 + len(cls)), f"app.{module}/{cls}#", 1),
            ((1, 8, 12), f"app.{module}/{cls}#draw().", 1),
            ((4, 8, 13), f"app.{module}/{cls}#clear().", 1),
        ]
    body = b""
    for path, occurrences in documents.items():
        document = field(1, path) + b"".join(field(2, occurrence(s, symbol(n), r)) for s, n, r in occurrences)
        body += field(2, document)
    return field(1, field(2, field(1, "scip-python") + field(2, "0.6.6"))) + body


@pytest.fixture
def project(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    scip.STORE.found.clear()
    yield root
    POOL.stop_all()


def indexed(root: Path) -> Path:
    (root / "index.scip").write_bytes(fixture_index())
    old = os.stat(root / "index.scip").st_mtime_ns - 10**9  # the sources are older than their index
    for source in (root / "app").iterdir():
        os.utime(source, ns=(old, old))
    scip.STORE.found.clear()
    return root


def with_server(root: Path, mode: str, **settings) -> Context:
    servers = {
        "python": {"name": f"fault-{mode}", "command": [sys.executable, str(SERVER), mode, str(root / "log")]}
    }
    return Context(
        Workspace([root]),
        Settings().replace(**{"semantic_servers": servers, "semantic_timeout": 2.0, **settings}),
    )


def order(answer: dict) -> list[str]:
    return [s["name_path"] for s in answer["shown"]]


def test_by_name_the_unused_methods_come_first(project):
    answer = call(Context(Workspace([project]), Settings().replace(precision="syntax")), "overview", {})
    assert order(answer) == BY_NAME
    assert "ranked by use from other files (by name)" in answer["text"].splitlines()[0]
    assert answer["ranking"] == {"by": "name", "unavailable": "precision=syntax"}


def test_a_scip_index_ranks_by_its_confirmed_references(project):
    answer = call(Context(Workspace([indexed(project)]), Settings()), "overview", {})
    assert order(answer) == CONFIRMED
    head = answer["text"].splitlines()[0]
    assert "ranked by confirmed references from scip-python 0.6.6 index · showing 1-7" in head
    assert answer["ranking"] == {
        "by": "confirmed references", "sources": ["scip-python 0.6.6 index"], "confirmed": 7,
        "candidates": 7, "partial": None, "unconfirmed": None,
    }  # fmt: skip
    # grouped by file in the order of each file's best definition, as by name
    assert answer["text"].splitlines()[1:5] == ["app/star.py", "1: class Star", "  2: def draw(self) -> str", "  5: def clear(self) -> None"]  # fmt: skip


def test_precision_syntax_leaves_the_index_unasked(project):
    answer = call(
        Context(Workspace([indexed(project)]), Settings().replace(precision="syntax")), "overview", {}
    )
    assert order(answer) == BY_NAME


def test_paging_on_keeps_the_confirmed_order(project):
    ctx = Context(Workspace([indexed(project)]), Settings())
    first = call(ctx, "overview", {"max_chars": 260})
    seen, calls = order(first), 1
    while first["next"] is not None:
        calls += 1
        first = call(ctx, "overview", {"max_chars": 260, **first["next"]})
        seen += order(first)
    assert seen == CONFIRMED and calls > 2


def test_a_stale_file_is_ranked_by_name_and_the_rest_by_the_index(project):
    root = indexed(project)
    (root / "app" / "canvas.py").write_text((root / "app" / "canvas.py").read_text() + "\n# edited\n")
    answer = call(Context(Workspace([root]), Settings()), "overview", {})
    assert answer["ranking"]["confirmed"] == 5 and answer["ranking"]["candidates"] == 7
    assert "for 5 of the top 7 (the rest by name; unconfirmed: " in answer["text"].splitlines()[0]
    assert "older than app/canvas.py" in answer["ranking"]["unconfirmed"]
    # the two of canvas.py keep their places; the five confirmed are sorted into the others
    assert order(answer) == ["Star", "Star/draw", "Canvas/draw", "Star/clear", "Brush/draw", "Canvas/clear", "Brush/clear"]  # fmt: skip


@pytest.mark.parametrize("mode", ["crash", "garbage", "noise"])
def test_a_failing_server_leaves_the_by_name_order_and_says_why(project, mode):
    answer = call(with_server(project, mode), "overview", {})
    assert order(answer) == BY_NAME
    assert answer["ranking"]["by"] == "name" and answer["ranking"]["unavailable"]
    assert f"(by name; {answer['ranking']['unavailable']})" in answer["text"].splitlines()[0]
    assert "Traceback" not in answer["text"]


def test_a_hanging_server_is_left_in_bounded_time_without_a_cancel(project, monkeypatch):
    monkeypatch.setattr(confirmed_ranking, "CONFIRM_SECONDS", 1.5)
    started = time.monotonic()
    answer = call(with_server(project, "hang", semantic_timeout=60.0), "overview", {})
    assert time.monotonic() - started < 30  # not the server's 60 s per request, nor 7 of them
    assert order(answer) == BY_NAME
    assert answer["ranking"]["unavailable"] == "7 not answered within 1.5 s"
    assert "(by name; 7 not answered within 1.5 s)" in answer["text"].splitlines()[0]
    # a server is asked one request at a time, and the one in flight at the deadline is left
    # to finish (basedpyright cancelled before it began a request failed every later one)
    log = (project / "log").read_text()
    assert log.count('"textDocument/references"') == 1 and '"$/cancelRequest"' not in log


def test_cancelling_the_call_cancels_the_request_at_the_server(project):
    ctx = with_server(project, "hang", semantic_timeout=60.0)
    outcome: list = []

    def ask():
        try:
            outcome.append(call(ctx, "overview", {}))
        except Cancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    log = project / "log"
    wait_for(lambda: log.exists() and '"textDocument/references"' in log.read_text(), "the request")
    ctx.cancel_event.set()
    worker.join(10)
    assert outcome and isinstance(outcome[0], Cancelled)
    wait_for(lambda: '"$/cancelRequest"' in log.read_text(), "the $/cancelRequest")


def test_locations_outside_the_roots_are_never_counted(project):
    # each answer holds 3 locations outside the workspace and one inside, at the asked file's start
    answer = call(with_server(project, "outside"), "overview", {})
    assert answer["ranking"]["confirmed"] == 7
    assert order(answer) == BY_NAME  # one use in its own file each: a tie, kept in by-name order
    assert "passwd" not in answer["text"] and "secret" not in answer["text"]


def test_no_server_for_the_language_is_the_by_name_ranking_without_a_note(project):
    ctx = Context(Workspace([project]), Settings().replace(semantic_servers={"python": False}))
    answer = call(ctx, "overview", {})
    assert order(answer) == BY_NAME
    assert answer["ranking"] == {"by": "name", "unavailable": "semantic_servers.python is false"}
    assert "ranked by use from other files (by name) · showing" in answer["text"].splitlines()[0]


def test_a_server_that_cannot_start_is_said(project):
    servers = {"python": {"name": "absent", "command": [str(project / "no-such-server")]}}
    answer = call(Context(Workspace([project]), Settings().replace(semantic_servers=servers)), "overview", {})
    assert order(answer) == BY_NAME
    assert "(by name; " in answer["text"].splitlines()[0] and answer["ranking"]["unavailable"]


@given(st.integers(0, 40).flatmap(lambda n: st.tuples(st.just(n), st.dictionaries(st.integers(0, max(n - 1, 0)), st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=n))))  # fmt: skip
def test_a_reordering_is_a_permutation_that_moves_only_the_confirmed(case):
    n, counts = case
    ranked = list(range(n))
    shown = reorder(ranked, Confirmation(candidates=n, counts=counts, ranked=n))  # type: ignore[arg-type]
    assert sorted(shown[i] for i in range(n)) == ranked and len(shown) == n
    assert [shown[i] for i in range(n) if i not in counts] == [i for i in range(n) if i not in counts]
    moved = [shown[i] for i in sorted(counts)]
    assert moved == sorted(counts, key=lambda i: (-counts[i][0], -counts[i][1], i))
    assert shown[0:n] == [shown[i] for i in range(n)]


async def test_over_mcp_the_worker_process_ranks_by_the_index_too(project):
    """The MCP door runs overview in a worker process (lanes.py): the index is read there."""
    from mcp import Client, StdioServerParameters

    root = indexed(project)
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lsp_agent", "mcp", "--root", str(root)],
        env={**os.environ, "XDG_CACHE_HOME": os.environ["XDG_CACHE_HOME"]},
    )  # fmt: skip
    async with Client(params, mode="legacy", read_timeout_seconds=60) as mcp:
        result = await mcp.call_tool("overview", {})
    [block] = result.content
    lines = block.text.splitlines()
    assert "ranked by confirmed references from scip-python 0.6.6 index · showing 1-7" in lines[0]
    assert [line.strip() for line in lines[1:5]] == ["app/star.py", "1: class Star", "2: def draw(self) -> str", "5: def clear(self) -> None"]  # fmt: skip
