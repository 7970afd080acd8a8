"""A question sent before it is asked (Session.send, lanes.sent_first): a references call run
in the serving process beside a server that has answered before sends the server's question
first and does its own syntax work while the server answers; the tool's question then waits
for that answer instead of asking again. A question sent and never asked is cancelled at the
server; one sent to a server since restarted is asked again. A real server process answers
(tests/semantic/fault_server.py)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from lsp_agent import lanes
from lsp_agent.semantic import POOL, Semantic
from lsp_agent.semantic import session as session_module
from lsp_agent.tools import Context, call, validate
from lsp_agent.tools import references as references_tool
from tests.semantic.test_semantic_candidates_time import served
from tests.semantic.test_semantic_faults import wait_for

ASKED = {"path": "app/views.py", "line": 10, "column": 11}


@pytest.fixture(autouse=True)
def stopped():
    yield
    POOL.stop_all()


def received(tmp_path: Path, method: str) -> list[dict]:
    log = tmp_path / "log"
    lines = log.read_text().splitlines() if log.exists() else []
    return [m for m in map(json.loads, lines) if m.get("method") == method]


def question(ctx: Context) -> tuple[Semantic, tuple]:
    """One call's semantic source (its own cancel event) and the question it asks."""
    path = ctx.workspace.roots[0] / ASKED["path"]
    source = Semantic(ctx.workspace, ctx.settings, threading.Event())
    return source, ("references", path, ASKED["line"], ASKED["column"])


def test_a_call_run_here_sends_its_question_first_and_asks_it_once(tmp_path, monkeypatch):
    ctx = served(tmp_path, "brisk")
    first = call(ctx, "references", ASKED)  # the server starts and answers: it has answered before
    steps: list[str] = []
    real_send, real_asked_for = session_module.Session.send, references_tool.asked_for

    def send(*args):
        sent = real_send(*args)
        if sent is not None:  # (sent, not merely tried)
            steps.append("sent")
        return sent

    monkeypatch.setattr(session_module.Session, "send", send)
    monkeypatch.setattr(
        references_tool, "asked_for", lambda *a: steps.append("own work") or real_asked_for(*a)
    )
    answer = lanes.run_tool(ctx, "references", validate("references", ASKED))
    assert steps == ["sent", "own work"]
    assert len(received(tmp_path, "textDocument/references")) == 2  # one per call: never asked again
    assert answer["by_source"] == first["by_source"] and answer["by_source"].get("fault-ok")
    assert answer["references"] == first["references"]
    assert not received(tmp_path, "$/cancelRequest")  # asked, so answered: nothing dropped


def test_a_question_sent_and_never_asked_is_cancelled_at_the_server(tmp_path):
    ctx = served(tmp_path, "slow")
    source, asked = question(ctx)
    source.locations(*asked)  # answered once
    unsend = source.send(*asked)
    assert unsend is not None
    unsend()
    wait_for(lambda: received(tmp_path, "$/cancelRequest"), "the $/cancelRequest")
    [sent] = received(tmp_path, "textDocument/references")[1:]
    assert received(tmp_path, "$/cancelRequest")[0]["params"]["id"] == sent["id"]
    session = source.answered_session(asked[1])
    assert session is not None and not session.sent and sent["id"] not in session.conn.pending


def test_nothing_is_sent_before_the_server_has_answered(tmp_path):
    ctx = served(tmp_path, "brisk")
    source, asked = question(ctx)
    assert source.send(*asked) is None  # not started: the question starts it, when asked
    assert not (tmp_path / "log").exists()


def test_a_question_sent_to_a_server_since_restarted_is_asked_again(tmp_path):
    ctx = served(tmp_path, "brisk")
    source, asked = question(ctx)
    before = source.locations(*asked)
    session = source.answered_session(asked[1])
    assert session is not None and source.send(*asked) is not None
    session._kill()  # (as a crash or the memory ceiling restarts it)
    after = source.locations(*asked)
    assert [loc.path for loc in after.locations] == [loc.path for loc in before.locations]
    assert not session.sent  # the old one was taken and dropped, not waited for
    assert len(received(tmp_path, "textDocument/references")) == 3  # once before, sent, asked again


def test_a_question_sent_by_one_call_is_not_taken_by_another(tmp_path):
    """Another call asking the same question asks its own: it came later, and a change
    written in between may be in its answer, not in the first call's."""
    ctx = served(tmp_path, "slow")
    first, asked = question(ctx)
    first.locations(*asked)
    unsend = first.send(*asked)
    assert unsend is not None
    other, _ = question(ctx)
    other.locations(*asked)
    [_, sent, own] = received(tmp_path, "textDocument/references")
    assert sent["id"] != own["id"]
    session = first.answered_session(asked[1])
    assert session is not None and len(session.sent) == 1  # still the first call's to take
    unsend()
    assert not session.sent
