"""Cancelling a request at a real basedpyright leaves it answering the next ones.

basedpyright 1.40 cancels the previous references request's token source at the start of each
one; a request whose cancel reached it before its handler made that source left one that
vscode-jsonrpc cannot cancel again, and every later references request was answered with
`this._token.cancel is not a function` until a restart. The session starts it with its
file-based cancellation strategy (servers.launch_command), whose sources can."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from lsp_agent.semantic.connection import RequestCancelled
from lsp_agent.semantic.servers import spec_for
from lsp_agent.semantic.session import Session, file_uri

from .test_real_servers import CACHE, FIXTURES, servers

pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")

ROOT = (FIXTURES / "py").resolve()
VIEWS = ROOT / "app" / "views.py"
CACHE_GET = {  # cache.get("total") in views.py, 0-based
    "textDocument": {"uri": file_uri(VIEWS)},
    "position": {"line": 11, "character": 10},
    "context": {"includeDeclaration": True},
}


def lines(answer: list) -> set[tuple[str, int]]:
    return {(Path(a["uri"]).name, a["range"]["start"]["line"]) for a in answer}


def ask(session: Session, cancel: threading.Event | None = None) -> list:
    return session.ask(
        "textDocument/references", CACHE_GET, VIEWS, timeout=60.0, cancel=cancel, report=lambda m: None
    )


def test_a_references_request_cancelled_before_its_handler_runs_leaves_the_server_answering():
    spec, _ = spec_for("python", {"python": servers()["python"]})
    assert spec is not None
    session = Session(spec, ROOT)
    try:
        first = ask(session)
        assert lines(first) == {("views.py", 4), ("views.py", 11)}
        # asked without a progress token of ours (as another client may ask), basedpyright asks
        # us for one (window/workDoneProgress/create) before it makes the request's token
        # source: our answer is held until the request was cancelled, so the cancel reaches
        # its handler first
        cancel, cancelled, ended = threading.Event(), threading.Event(), threading.Event()
        conn = session.conn
        assert conn is not None
        answer_it, notified = conn.on_request, conn.on_notify
        tokens: list = []

        def held(method, params):
            if method == "window/workDoneProgress/create":
                tokens.append(params["token"])
                cancel.set()
                cancelled.wait(30)
            return answer_it(method, params)

        def progress(method, params):  # the cancelled request's progress ends as it is answered
            if method == "$/progress" and params["token"] in tokens and params["value"]["kind"] == "end":
                ended.set()
            notified(method, params)

        conn.on_request, conn.on_notify = held, progress
        with pytest.raises(RequestCancelled):
            conn.request("textDocument/references", CACHE_GET, timeout=60.0, cancel=cancel)
        cancelled.set()
        assert ended.wait(30)  # the next request comes after it, as it would from an agent
        conn.on_request, conn.on_notify = answer_it, notified
        for _ in range(3):
            assert lines(ask(session)) == lines(first)
    finally:
        session.stop()


def test_references_carry_a_progress_token_of_ours():
    """Given one, basedpyright begins at once: it asks us for none (a round trip through our
    process, where the syntax source's parsing holds the GIL), and its reports on it are not
    taken for its loading."""
    spec, _ = spec_for("python", {"python": servers()["python"]})
    assert spec is not None
    session = Session(spec, ROOT)
    try:
        assert lines(ask(session)) == {("views.py", 4), ("views.py", 11)}
        conn = session.conn
        assert conn is not None
        session._settle(60.0, None)  # its own loading's progress (it asks tokens for it) is over
        assert not session.progress
        answer_it, asked = conn.on_request, []
        conn.on_request = lambda method, params: asked.append(method) or answer_it(method, params)
        for _ in range(3):
            assert lines(ask(session)) == {("views.py", 4), ("views.py", 11)}
        assert "window/workDoneProgress/create" not in asked
        assert not session.progress
    finally:
        session.stop()
