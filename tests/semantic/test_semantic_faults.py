"""The semantic source against a real misbehaving server (tests/fault_server.py): whatever
it does, the answer comes from the syntax source, says why, and shows nothing outside the
workspace; a cancelled call cancels the request at the server."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.errors import Cancelled
from lsp_agent.semantic import POOL, pool
from lsp_agent.semantic import session as session_module
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
SERVER = Path(__file__).parent / "fault_server.py"


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    yield root
    POOL.stop_all()


def context(root: Path, mode: str, log: Path, **settings) -> Context:
    servers = {"python": {"name": f"fault-{mode}", "command": [sys.executable, str(SERVER), mode, str(log)]}}
    chosen = Settings().replace(**{"semantic_servers": servers, "semantic_timeout": 2.0, **settings})
    return Context(Workspace([root]), chosen)


def received(log: Path) -> list[dict]:
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def wait_for(condition, what: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def save_refs(ctx: Context) -> dict:
    return call(ctx, "references", {"path": "app/views.py", "line": 10, "column": 11})


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("crash", "exited with code 3"),
        ("garbage", "answered a location without a range"),
        ("noise", "not LSP"),
        ("hang", "no answer to textDocument/references within 6 s"),  # 3x: the first question
    ],
)
def test_a_faulty_server_gives_the_syntax_answer_and_says_why(project, tmp_path, mode, why):
    ctx = context(project, mode, tmp_path / "log")
    started = time.monotonic()
    answer = save_refs(ctx)
    assert time.monotonic() - started < 15
    assert "error" not in answer
    assert why in answer["semantic"]["unavailable"]
    assert f"note: no type-aware answer: fault-{mode}" in answer["text"]
    assert {r["source"] for r in answer["references"]} == {"name"}
    assert {(r["path"], r["line"]) for r in answer["references"]} >= {
        ("app/views.py", 10),
        ("app/models.py", 7),  # Order.save: the syntax shows `order: Order` (Base.save is left out)
    }


def test_work_a_server_reports_marks_its_answers_partial_unless_it_is_pyright_s_checker(project, tmp_path):
    """A server still loading may miss uses; pyright's progress is its checker at work on the
    open files (never ended, for a client that pulls diagnostics, until it pulls), which its
    answers do not wait on: they are not marked partial for it."""
    pyright = tmp_path / "bin" / "basedpyright-langserver"
    pyright.parent.mkdir()
    pyright.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVER}" "$@"\n')
    pyright.chmod(0o755)
    for command, partial in (([sys.executable, str(SERVER)], True), ([str(pyright)], False)):
        servers = {
            "python": {"name": "busy", "command": [*command, "busy", str(tmp_path / "log")], "warmup": 0}
        }
        settings = Settings().replace(semantic_servers=servers, semantic_timeout=0.5)
        answer = save_refs(Context(Workspace([project]), settings))
        assert {r["source"] for r in answer["references"]} >= {"busy"}, answer["text"]
        assert (answer["semantic"].get("partial") == "busy is still indexing (loading)") is partial
        assert ("may be incomplete" in answer["text"]) is partial, answer["text"]
        POOL.stop_all()


def test_a_crashed_server_restarts_after_a_back_off(project, tmp_path):
    ctx = context(project, "crash", tmp_path / "log")
    first = save_refs(ctx)
    assert "exited with code 3" in first["semantic"]["unavailable"]
    second = save_refs(ctx)  # within the back-off: not started again
    assert "back-off" in second["semantic"]["unavailable"]
    starts = [m for m in received(tmp_path / "log") if m.get("method") == "initialize"]
    assert len(starts) == 1


def test_locations_outside_the_workspace_are_dropped_and_counted(project, tmp_path):
    ctx = context(project, "outside", tmp_path / "log")
    answer = save_refs(ctx)
    shown = answer["text"]
    assert "/etc/passwd" not in shown and "secret.py" not in shown and "untitled" not in shown
    assert answer["semantic"]["outside_workspace"] == 3
    assert "left out: 3 locations outside the workspace" in shown
    assert all(not r["path"].startswith(("/", "..")) for r in answer["references"])


def test_cancelling_the_call_cancels_the_request_at_the_server(project, tmp_path):
    log = tmp_path / "log"
    ctx = context(project, "hang", log, semantic_timeout=60.0)
    outcome: list = []

    def ask():
        try:
            outcome.append(save_refs(ctx))
        except Cancelled as exc:
            outcome.append(exc)

    worker = threading.Thread(target=ask)
    worker.start()
    asked = lambda: [m for m in received(log) if m.get("method") == "textDocument/references"]  # noqa: E731
    wait_for(asked, "the references request to reach the server")
    ctx.cancel_event.set()
    worker.join(10)
    assert outcome and isinstance(outcome[0], Cancelled)
    ident = asked()[0]["id"]
    wait_for(
        lambda: any(
            m.get("method") == "$/cancelRequest" and m["params"]["id"] == ident for m in received(log)
        ),
        "the $/cancelRequest",
    )


def test_precision_syntax_never_starts_a_server(project, tmp_path):
    ctx = context(project, "ok", tmp_path / "log", precision="syntax")
    answer = save_refs(ctx)
    assert answer["semantic"] == {"unavailable": "precision=syntax"}
    assert not received(tmp_path / "log")
    per_call = call(
        context(project, "ok", tmp_path / "log2"), "references", {"name": "save", "precision": "syntax"}
    )
    assert per_call["semantic"] == {"unavailable": "precision=syntax"} and not received(tmp_path / "log2")


def test_a_missing_server_is_not_a_fault(project):
    servers = {"python": ["/nonexistent/basedpyright-langserver", "--stdio"]}
    ctx = Context(Workspace([project]), Settings().replace(semantic_servers=servers))
    answer = save_refs(ctx)
    assert "could not be started" in answer["semantic"]["unavailable"]
    assert "note: no type-aware answer" in answer["text"]  # configured but broken: said


def test_the_server_is_shared_by_every_caller(project, tmp_path):
    log = tmp_path / "log"
    for _ in range(3):
        answer = save_refs(context(project, "ok", log))
        assert answer["semantic"]["server"] == "fault-ok"
    assert len([m for m in received(log) if m.get("method") == "initialize"]) == 1


def test_an_idle_server_is_stopped(project, tmp_path):
    log = tmp_path / "log"
    save_refs(context(project, "ok", log, semantic_idle=0.01))
    session = next(iter(POOL.sessions.values()))
    wait_for(lambda: (POOL.sweep(), not session.running)[1], "the idle server to stop")
    wait_for(lambda: any(m.get("method") == "exit" for m in received(log)), "exit")


def test_a_server_above_its_memory_ceiling_restarts(project, tmp_path):
    log = tmp_path / "log"
    ctx = context(project, "ok", log, semantic_memory_mb=64)
    save_refs(ctx)
    session = next(iter(POOL.sessions.values()))
    # a Python process holds more than 64 MB? not always: lower the bar to what it holds
    held = session.memory_mb()
    assert held is not None and held > 1
    key = next(k for k, s in POOL.sessions.items() if s is session)
    POOL.limits[key] = (600.0, int(held // 2))
    POOL.sweep()
    assert not session.running and session.restarts == 1
    assert save_refs(ctx)["semantic"]["server"] == "fault-ok"  # started again on the next question
    assert len([m for m in received(log) if m.get("method") == "initialize"]) == 2


def test_an_answer_restarts_a_server_above_its_ceiling_looking_at_memory_once_a_while(
    project, tmp_path, monkeypatch
):
    log = tmp_path / "log"
    ctx = context(project, "ok", log)
    save_refs(ctx)  # started, and its memory looked at after that first answer
    session = next(iter(POOL.sessions.values()))
    looked = []
    monkeypatch.setattr(POOL, "sweep", lambda: None)  # (the pool's monitor looks at memory too)
    monkeypatch.setattr(session_module, "tree_rss_mb", lambda pid: looked.append(pid) or 10**6)
    monkeypatch.setattr(pool, "CHECK_MEMORY_EVERY", 3600.0)
    for _ in range(3):  # within CHECK_MEMORY_EVERY of that look: memory is not read again
        assert save_refs(ctx)["semantic"]["server"] == "fault-ok"
    assert looked == [] and session.running
    monkeypatch.setattr(pool, "CHECK_MEMORY_EVERY", 0.0)
    save_refs(ctx)  # its answer stands; then the server, above the ceiling, is restarted
    assert len(looked) == 1 and not session.running and session.restarts == 1


def test_doctor_says_per_language_which_source_answers_and_why(capsys, project):
    from lsp_agent.cli import main

    servers = {"python": [sys.executable, str(SERVER), "ok", "/dev/null"], "typescript": False}
    assert main(["doctor", "--root", str(project), "--semantic-servers", json.dumps(servers)]) == 0
    rows = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()[1:]}
    assert rows["python"].split()[1] == Path(sys.executable).name
    assert "starts on the first question" in rows["python"]
    assert (
        rows["typescript"].split()[1] == "syntax"
        and "semantic_servers.typescript is false" in rows["typescript"]
    )
    assert main(["doctor", "--root", str(project), "--precision", "syntax"]) == 0
    assert all(
        " syntax " in line and "precision=syntax" in line for line in capsys.readouterr().out.splitlines()[1:]
    )
