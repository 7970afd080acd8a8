"""Heavy calls in worker processes (lanes.py, issue 28 item 4): the answer a worker gives is
the one the tool gives in-process (open buffers and the semantic source's answer included), a
cancel stops the worker's tool, a killed worker fails its call with an answer saying so and
the next call works, and a read is answered while heavy calls occupy the workers."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from lsp_agent import lanes
from lsp_agent import server as server_module
from lsp_agent.config import Settings
from lsp_agent.doors import Door
from lsp_agent.errors import Cancelled
from lsp_agent.semantic import POOL
from lsp_agent.server import create_server
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.tools import Context, run
from lsp_agent.tools import references as references_tool
from lsp_agent.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
SERVER = Path(__file__).parents[1] / "semantic" / "fault_server.py"
AT_SAVE = {"path": "app/views.py", "line": 10, "column": 11}  # order.save()


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    yield root
    POOL.stop_all()


@pytest.fixture
def processes():
    pool = lanes.ToolProcesses(workers=1)
    yield pool
    pool.stop()


@pytest.fixture(scope="module")
def shared():
    """One worker for the comparisons (starting one costs a second)."""
    pool = lanes.ToolProcesses(workers=1)
    yield pool
    pool.stop()


def context(root: Path, mode: str, log: Path) -> Context:
    """A workspace whose Python files' language server is the fault server in `mode`."""
    command = [sys.executable, str(SERVER), mode, str(log)]
    servers = {
        "python": {"name": f"fault-{mode}", "command": command, "warmup": 0}
    }  # never "may be indexing"
    settings = Settings().replace(semantic_servers=servers, semantic_timeout=60.0)
    return Context(Workspace([root]), settings)


def received(log: Path, method: str) -> list[dict]:
    lines = log.read_text().splitlines() if log.exists() else []
    return [m for m in map(json.loads, lines) if m.get("method") == method]


def wait_for(condition, what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


HEAVY_CALLS = [
    ("search", {"pattern": "get|save", "max_chars": 2000}),
    ("references", {"name": "save", "max_chars": 2000}),  # the server's answer merged in, asked over the pipe
    ("symbols", {"path": "app", "max_chars": 2000}),
    ("find_symbol", {"name_path": "save"}),
    ("definition", {"name": "Order"}),
    ("callers", {"name": "save"}),
    ("list_files", {}),
    ("overview", {"max_chars": 800}),
]


@pytest.mark.parametrize(("name", "arguments"), HEAVY_CALLS, ids=[f"{n} {a}" for n, a in HEAVY_CALLS])
def test_a_heavy_call_answers_in_a_worker_as_in_process(project, tmp_path, shared, name, arguments):
    ctx = context(project, "ok", tmp_path / "log")
    # an unsaved buffer: the worker answers from it, not from the disk
    views = project / "app" / "views.py"
    ctx.workspace.open_document(views, views.read_text().replace("cache.get", "cache.save"))
    assert lanes.in_worker(ctx, name, arguments)
    # the language server is this process's either way; once it has answered, an overview
    # ranked from it is no longer partial ("had just started"), so both see it answered
    run(ctx, name, arguments)
    assert shared.run(ctx, name, arguments) == run(ctx, name, arguments)
    # the worker asked this process's server: no second one started in the worker
    assert len(received(tmp_path / "log", "initialize")) <= 1


def test_a_worker_is_sent_only_the_buffers_changed_since_its_last_call(project, shared):
    """Each call sends the buffers opened or changed since the worker's last and the paths
    closed; the worker answers from the buffers as they are here, per workspace."""
    ws = Workspace([project])
    views = project / "app" / "views.py"
    ctx = Context(ws)
    search = ("search", {"pattern": "edited_here|cache"})

    def same() -> dict:
        answer = shared.run(ctx, *search)
        assert answer == run(ctx, *search)
        return answer

    ws.open_document(views, views.read_text() + "\nedited_here = 1\n")
    assert "edited_here" in same()["text"]
    (worker,) = shared.alive
    assert worker.buffers_for(ws)[1:] == ({}, [])  # nothing changed since: nothing to send
    ws.open_document(views, views.read_text() + "\nedited_here = 2\n")
    assert "edited_here = 2" in same()["text"]
    other = Context(Workspace([project]))  # the same roots, no buffers: the disk
    assert shared.run(other, *search) == run(other, *search)
    assert "edited_here" not in shared.run(other, *search)["text"]
    ws.close_document(views)
    assert "edited_here" not in same()["text"]
    assert worker.buffers_for(ws)[1:] == ({}, [])
    assert shared.alive == {worker}


def test_semantic_answers_reach_a_tool_in_a_worker(project, tmp_path, shared):
    ctx = context(project, "ok", tmp_path / "log")
    answer = shared.run(ctx, "references", {"name": "save"})
    assert answer["semantic"]["server"] == "fault-ok"
    assert answer["by_source"]["fault-ok"] == 1
    assert received(tmp_path / "log", "textDocument/references")  # asked by this process's session


def test_a_server_that_has_answered_is_asked_as_the_call_goes_to_its_worker(
    project, tmp_path, shared, monkeypatch
):
    """From a use, references asks the server at that name first: once the server has
    answered before, the serving process asks it as it hands the call over, and the worker's
    question takes that answer (the server is asked once a call). A cold server, a question
    by name or precision=syntax are asked as before, by the tool."""
    log = tmp_path / "log"
    ctx = context(project, "ok", log)
    early: list[int] = []  # questions asked early, per call
    real = lanes.asked_early
    monkeypatch.setattr(lanes, "asked_early", lambda *a: (asked := real(*a), early.append(len(asked)))[0])
    at = {"path": "app/views.py", "line": 10, "column": 11}
    cold = shared.run(ctx, "references", at)
    assert early == [0] and len(received(log, "textDocument/references")) == 1
    warm = shared.run(ctx, "references", at)
    assert early == [0, 1]
    assert len(received(log, "textDocument/references")) == 2  # the worker's question took it
    assert warm == cold == run(ctx, "references", at)
    for other in ({"name": "save"}, {**at, "precision": "syntax"}):
        shared.run(ctx, "references", other)
        assert early[-1] == 0


def test_an_early_question_the_worker_does_not_ask_is_cancelled(project, tmp_path, shared, monkeypatch):
    """The tool asks elsewhere than the question asked early (here its use is moved to
    another line): the early question is cancelled, not left to the server, and the answer
    is the one asked for."""
    log = tmp_path / "log"
    ctx = context(project, "slow", log)  # 0.6 s an answer: the early one is still coming
    at = {"path": "app/views.py", "line": 10, "column": 11}
    run(ctx, "references", at)  # the server has answered once
    tool = lanes.REGISTRY["references"]

    def moved(c: Context, arguments: dict) -> list:
        assert tool.asks_first is not None
        return [(s, m, (a[0], a[1], a[2] + 1, a[3])) for s, m, a in tool.asks_first(c, arguments)]

    monkeypatch.setitem(lanes.REGISTRY.tools, "references", dataclasses.replace(tool, asks_first=moved))
    asked: list = []
    real = lanes.asked_early
    monkeypatch.setattr(lanes, "asked_early", lambda *a: (early := real(*a), asked.extend(early))[0])
    answer = shared.run(ctx, "references", at)
    assert answer == run(ctx, "references", at)
    (question,) = asked
    assert question.cancel.is_set()
    assert question.answer.exception(timeout=30) is not None  # cancelled at the server, not answered
    assert received(log, "$/cancelRequest")


@pytest.mark.parametrize(("mode", "stays"), [("brisk", True), ("slow", False)])
def test_references_from_a_use_beside_a_quick_server_stay_in_process(
    project, tmp_path, monkeypatch, mode, stays
):
    """Such a call is mostly its server's answer: a worker's hops would be a third of it.
    Beside a slower server (0.6 s), or one that has not answered yet, the by-name
    search may run long beside it: the call goes to a worker. By name it always does."""
    # quick: within 0.3 s here, which the brisk server's 10 ms are on a loaded machine too
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 0.3)
    ctx = context(project, mode, tmp_path / "log")
    at = {"path": "app/views.py", "line": 10, "column": 11}
    assert lanes.in_worker(ctx, "references", at)  # the server has not answered yet
    run(ctx, "references", at)
    assert lanes.in_worker(ctx, "references", at) is not stays
    assert lanes.in_worker(ctx, "references", {"name": "save"})
    assert lanes.in_worker(ctx, "references", {**at, "precision": "syntax"})
    assert lanes.in_worker(ctx, "references", {**at, "path": "../outside.py"})  # the tool refuses it


def test_calls_answered_from_the_built_index_stay_in_process(project):
    index = SymbolIndex(Workspace([project]))
    ctx = Context(index.workspace, index=index)
    assert lanes.in_worker(ctx, "find_symbol", {"name_path": "save"})  # not built yet
    index.build()
    assert not lanes.in_worker(ctx, "find_symbol", {"name_path": "save"})
    assert not lanes.in_worker(ctx, "definition", {"name": "Order"})
    assert lanes.in_worker(ctx, "references", {"name": "save"})
    # light: one small file
    assert not lanes.in_worker(ctx, "symbols", {"path": "app/views.py"})


def hung_call(processes: lanes.ToolProcesses, ctx: Context, log: Path) -> tuple[threading.Thread, list]:
    """references from a use, in a worker, waiting on a language server that never answers."""
    outcome: list = []

    def ask() -> None:
        try:
            outcome.append(processes.run(ctx, "references", AT_SAVE))
        except Cancelled as exc:
            outcome.append(exc)

    thread = threading.Thread(target=ask)
    thread.start()
    wait_for(lambda: received(log, "textDocument/references"), "the question to reach the server")
    return thread, outcome


def test_a_cancel_stops_the_tool_in_its_worker(project, tmp_path, processes):
    log = tmp_path / "log"
    ctx = context(project, "hang", log)
    thread, outcome = hung_call(processes, ctx, log)
    (worker,) = processes.alive
    ctx.cancel_event.set()
    thread.join(30)
    assert outcome and isinstance(outcome[0], Cancelled)
    asked = received(log, "textDocument/references")[0]["id"]
    wait_for(
        lambda: any(m["params"]["id"] == asked for m in received(log, "$/cancelRequest")),
        "the request cancelled at the language server",
    )
    # the server never answers: the worker is free again only because its tool stopped
    wait_for(lambda: processes.idle == [worker], "the worker's tool to stop")
    assert worker.process.is_alive()
    again = context(project, "ok", tmp_path / "log-ok")
    assert processes.run(again, "search", {"pattern": "save"}) == run(again, "search", {"pattern": "save"})
    assert processes.alive == {worker}  # the same process answered


def test_a_killed_worker_fails_its_call_clearly_and_the_next_call_works(project, tmp_path, processes):
    log = tmp_path / "log"
    ctx = context(project, "hang", log)
    thread, outcome = hung_call(processes, ctx, log)
    (worker,) = processes.alive
    os.kill(worker.process.pid, signal.SIGKILL)
    thread.join(30)
    (answer,) = outcome
    assert answer["error"]["code"] == "worker_stopped"
    assert "killed by signal 9" in answer["text"] and "Traceback" not in answer["text"]
    assert "A new worker runs the next call" in answer["text"]
    asked = received(log, "textDocument/references")[0]["id"]
    wait_for(  # the question it left at the language server is withdrawn
        lambda: any(m["params"]["id"] == asked for m in received(log, "$/cancelRequest")),
        "the orphaned request cancelled",
    )
    again = context(project, "ok", tmp_path / "log-ok")
    assert processes.run(again, "references", {"name": "save"}) == run(again, "references", {"name": "save"})
    assert worker not in processes.alive and len(processes.alive) == 1


def test_a_read_is_answered_while_heavy_calls_hold_the_workers(project, tmp_path, monkeypatch):
    log = tmp_path / "log"
    ctx = context(project, "hang", log)
    monkeypatch.setattr(lanes, "PROCESSES", lanes.ToolProcesses(workers=1))
    door = Door(ctx.workspace, lanes.Lanes(), lambda: ctx.settings)

    async def scenario() -> tuple[list[asyncio.Task], dict]:
        heavy = [
            asyncio.ensure_future(door.run(door.open("references", AT_SAVE), lanes.run_tool))
            for _ in range(8)
        ]
        await asyncio.to_thread(wait_for, lambda: received(log, "textDocument/references"), "a heavy call")
        read = await door.run(door.open("read", {"path": "app/models.py"}), lanes.run_tool)
        running = [not task.done() for task in heavy]
        for task in heavy:
            task.cancel()
        await asyncio.gather(*heavy, return_exceptions=True)
        return running, read

    try:
        running, read = asyncio.run(scenario())
    finally:
        lanes.PROCESSES.stop()
        door.lanes.shutdown()
    assert read == run(ctx, "read", {"path": "app/models.py"})
    assert all(running)  # answered while all 8 were still running (or waiting for the worker)


def test_a_definition_by_name_on_a_ready_index_goes_in_the_light_lane(project, tmp_path):
    """By name over the server's ready index, definition and find_symbol answer in
    milliseconds: light calls, which heavy work (the use tables after a warm start) steps
    aside for. From a use (a file parsed, a server asked), in a path, for a base's
    subclasses (searched) or before the index is ready they stay heavy."""
    index = SymbolIndex(Workspace([project]), cache=tmp_path / "cache")
    door = Door(index.workspace, lanes.Lanes(), index=index)
    try:
        assert door.open("definition", {"name": "save"}).heavy  # not ready yet: a search
        index.build()
        assert not door.open("definition", {"name": "save"}).heavy
        assert not door.open("find_symbol", {"name_path": "Order/save"}).heavy
        assert door.open("definition", dict(AT_SAVE)).heavy
        assert door.open("find_symbol", {"name_path": "save", "path": "app"}).heavy  # a folder: looked in
        assert door.open("find_symbol", {"extends": "Model"}).heavy  # subclasses: searched
        assert door.open("references", {"name": "save"}).heavy
    finally:
        door.lanes.shutdown()


def test_warm_workers_are_the_ones_that_answer(project, tmp_path, processes, monkeypatch):
    monkeypatch.setenv("LSP_AGENT_CACHE_DIR", str(tmp_path / "cache"))
    index = SymbolIndex(Workspace([project]), cache=tmp_path / "cache")
    index.build()  # and saved: the worker loads it when warmed
    processes.warm(index.workspace.roots, index.encoding)
    (worker,) = processes.idle
    ctx = Context(index.workspace)
    arguments = {"name_path": "save", "include_body": True}
    assert processes.run(ctx, "find_symbol", arguments) == run(ctx, "find_symbol", arguments)
    assert processes.alive == {worker}


def test_a_large_file_typed_into_is_indexed_in_a_worker_as_here(project, monkeypatch):
    """The record the server puts for a large buffer (AgentServer.reindex, after a pause in
    typing) is made in a worker and is the one its own update would make."""
    path = project / "app" / "large.py"
    body = "".join(f"def handler_{n}(request):\n    return request.save({n})\n\n\n" for n in range(2000))
    path.write_text(body)
    monkeypatch.setattr(lanes, "RECORDS", lanes.ToolProcesses(workers=1))
    monkeypatch.setattr(server_module, "RECORDS", lanes.RECORDS)
    server = create_server(roots=[project])
    index = server.symbol_index
    server.agent_workspace.open_document(path, body.replace("handler_7(", "handler_seven("))
    assert server.agent_workspace.open_text(path).size >= lanes.RECORD_IN_WORKER_BYTES
    try:
        server.reindex(path)
        assert lanes.RECORDS.alive  # made there
    finally:
        lanes.RECORDS.stop()
    made = index.files[path]
    assert index.is_current(path)
    index.update(path)  # in this process, from the same buffer
    assert index.files[path] == made
    assert [entry.name_path for _, entry in index.find("handler_seven", under=[project])] == ["handler_seven"]


def test_a_worker_hands_the_interpreter_over_as_often_as_the_serving_process():
    """A reply on the worker's pipe thread waits at most the serving process's switch
    interval for a busy tool thread, not Python's default 5 ms."""
    report = (
        "import os, sys\nfrom lsp_agent import lanes\nlanes._start_worker()\n"
        "os.write(2, repr(sys.getswitchinterval()).encode())"
    )
    done = subprocess.run(
        [sys.executable, "-c", report], capture_output=True, text=True, timeout=60, check=True
    )
    assert float(done.stderr) == lanes.SWITCH_INTERVAL < 0.005


def test_a_worker_takes_the_servers_roots_as_they_are(tmp_path, shared):
    """Roots [ws/pkg, ws], pkg swapped for a link out after the server resolved them: a
    worker does not resolve the roots again (which would make the link's target a root), so
    what it reads stays beneath ws."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "pkg").mkdir(parents=True)
    outside.mkdir()
    (root / "top.py").write_text("def top():\n    return 1\n")
    (root / "pkg" / "mod.py").write_text("def inside():\n    return 2\n")
    (outside / "f.py").write_text("def OUTSIDE_SECRET():\n    return 3\n")
    ctx = Context(Workspace([root / "pkg", root]))
    os.rename(root / "pkg", root / "parked")
    os.symlink(outside, root / "pkg")
    for name, arguments in [
        ("search", {"pattern": "return"}),
        ("find_symbol", {"name_path": "SECRET", "substring": True}),
        ("list_files", {"path": str(root)}),
    ]:
        answer = shared.run(ctx, name, arguments)
        assert "OUTSIDE_SECRET" not in json.dumps(answer) and "error" not in answer, (name, answer["text"])
    assert "top.py" in shared.run(ctx, "search", {"pattern": "return"})["text"]


def test_a_refusal_and_any_other_answer_cross_the_pipe_whole():
    """What the serving process raises for a worker's semantic question comes out the other
    side: a Refusal with its code and fields; one that could not be made again there, as
    Unavailable (it would have stopped the worker's listening thread, and its call)."""
    import pickle

    from lsp_agent.errors import Refusal

    again = pickle.loads(pickle.dumps(Refusal("budget_too_small", "too small", minimum=300)))
    assert (again.code, again.message, again.fields) == ("budget_too_small", "too small", {"minimum": 300})

    class Picky(Exception):
        def __init__(self, a, b):
            super().__init__(f"{a} {b}")

    assert lanes.crosses(again) and not lanes.crosses(Picky(1, 2))
