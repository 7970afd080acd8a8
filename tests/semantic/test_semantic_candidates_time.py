"""The by-name candidates never hold a references answer much past the server's: matched at
the same time as the server is asked, they may take what is left of 1.5 times the server's
time (references.ANSWER_WITHIN); past that the answer is the server's uses, and it says the
candidates were left out and how to get them. In a workspace of 100 files or more, the server
is given references.QUICK_SERVER alone first: after a quick answer the search starts only if
it would come in time (else the answer says it was left out); a slower server is asked while
the names are matched.
A real server process answers (tests/semantic/fault_server.py, modes ok, brisk and slow); the
by-name search is held until it is told to stop, so the cut does not depend on which
finishes first."""

from __future__ import annotations

import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL
from lsp_agent.tools import Context, call
from lsp_agent.tools import references as references_tool
from lsp_agent.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
SERVER = Path(__file__).parent / "fault_server.py"


def served(tmp_path: Path, mode: str) -> Context:
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    command = [sys.executable, str(SERVER), mode, str(tmp_path / "log")]
    chosen = Settings().replace(semantic_servers={"python": {"name": "fault-ok", "command": command}})
    return Context(Workspace([root]), chosen)


@pytest.fixture
def ctx(tmp_path):
    yield served(tmp_path, "ok")
    POOL.stop_all()


@pytest.fixture(autouse=True)
def no_times_kept():
    """Each test starts with no by-name search timed, nor the work after one (and leaves none)."""
    references_tool.BY_NAME_TOOK.clear()
    references_tool.AFTER_TOOK.clear()
    yield
    references_tool.BY_NAME_TOOK.clear()
    references_tool.AFTER_TOOK.clear()


def grown(ctx: Context) -> Context:
    """The workspace made SMALL_WORKSPACE files larger, its index built: no floor."""
    from lsp_agent.syntax.index import SymbolIndex

    root = ctx.workspace.roots[0]
    for n in range(references_tool.SMALL_WORKSPACE):
        (root / f"extra_{n}.py").write_text(f"def extra{n}():\n    return {n}\n")
    ctx.index = SymbolIndex(ctx.workspace)
    ctx.index.build()
    return ctx


def timed_parts(monkeypatch) -> tuple[list, list]:
    """(when each by-name search began, each both_at_once's (by-name uses, server's answer))."""
    began: list[float] = []
    real = references_tool.collect
    monkeypatch.setattr(references_tool, "collect", lambda *a: began.append(time.monotonic()) or real(*a))
    both: list = []
    real_both = references_tool.both_at_once
    monkeypatch.setattr(references_tool, "both_at_once", lambda *a: both.append(real_both(*a)) or both[-1])
    return began, both


def save_refs(ctx: Context) -> dict:
    return call(ctx, "references", {"path": "app/views.py", "line": 10, "column": 11})


def test_candidates_matched_in_time_are_listed_after_the_servers(ctx):
    answer = save_refs(ctx)
    sources = [r["source"] for r in answer["references"]]
    assert sources[0] == "fault-ok" and "name" in sources
    assert "by-name candidates, not matched" not in answer["text"]


@pytest.mark.parametrize("small", [True, False])
def test_candidates_not_matched_in_time_are_left_out_and_said(ctx, monkeypatch, small):
    if not small:
        grown(ctx)
    real = references_tool.collect
    told_to_stop = threading.Event()

    def held(quiet: Context, *arguments):
        if quiet.cancel_event.wait(30):  # until the answer gives up on it
            told_to_stop.set()
        return real(quiet, *arguments)

    monkeypatch.setattr(references_tool, "collect", held)
    both: list = []  # the by-name uses and the server's, as the call got them
    real_both = references_tool.both_at_once
    monkeypatch.setattr(references_tool, "both_at_once", lambda *a: both.append(real_both(*a)) or both[-1])
    answer = save_refs(ctx)
    assert [r["source"] for r in answer["references"]] == ["fault-ok"]
    # the time left them: ANSWER_WITHIN the server's own, less AFTER_CANDIDATES and the way to
    # the server and back beyond its time (in a small workspace, the floor past the server's
    # time, which is more)
    ((collected, typed),) = both
    floor = references_tool.CANDIDATES_FLOOR if small else 0.0
    most = max(
        references_tool.ANSWER_WITHIN * typed.took - references_tool.AFTER_CANDIDATES, typed.took + floor
    )
    assert typed.took > 0 and typed.took + floor - 1e-9 <= collected.cut <= most + 1e-9
    if small:
        assert collected.cut == pytest.approx(typed.took + floor, abs=1e-9)
    assert (
        f"note: left out: the by-name candidates, not matched within {references_tool.seconds(collected.cut)}"
        in answer["text"]
    )
    assert "precision=syntax lists every use by name" in answer["text"]
    assert "by name not matched in time" in answer["text"]
    assert told_to_stop.wait(30)
    monkeypatch.undo()
    syntax = call(
        ctx, "references", {"path": "app/views.py", "line": 10, "column": 11, "precision": "syntax"}
    )
    assert len(syntax["references"]) > 1  # by name alone, every use comes (the server is not asked)


def test_the_floor_is_for_small_workspaces_only(tmp_path):
    """A workspace of SMALL_WORKSPACE files or more gives the candidates what is left of
    ANSWER_WITHIN times the server's time, no floor; a smaller one (or one without an index)
    the floor."""
    from lsp_agent.syntax.index import SymbolIndex

    for count, floor in ((references_tool.SMALL_WORKSPACE - 1, references_tool.CANDIDATES_FLOOR),
                         (references_tool.SMALL_WORKSPACE, 0.0)):  # fmt: skip
        root = tmp_path / str(count)
        root.mkdir()
        for n in range(count):
            (root / f"m{n}.py").write_text(f"def f{n}():\n    return {n}\n")
        ws = Workspace([root])
        index = SymbolIndex(ws)
        index.build()
        assert references_tool.candidates_floor(Context(ws, Settings(), index=index)) == floor
        assert references_tool.candidates_floor(Context(ws, Settings())) == references_tool.CANDIDATES_FLOOR


def test_the_candidates_time_counts_from_when_the_question_began(ctx):
    """A question waiting for a free thread (every one busy) does not eat the candidates'
    time: in a small workspace they still get the floor past the server's answer."""
    from lsp_agent.tools import precise

    save_refs(ctx)  # the server started and warm
    for _ in range(precise.AHEAD._max_workers):
        precise.AHEAD.submit(time.sleep, 0.6)
    answer = save_refs(ctx)
    assert "by-name candidates, not matched" not in answer["text"]
    assert "name" in [r["source"] for r in answer["references"]]


def test_after_a_quick_answer_a_search_that_would_not_come_in_time_is_not_started(ctx, monkeypatch):
    """The last by-name search here took longer than what is left of the answer's time."""
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 5.0)  # (quick whatever the load)
    grown(ctx)
    searched = (tuple(ctx.workspace.roots), "python")
    references_tool.BY_NAME_TOOK[searched] = 10.0  # (from the start: no search runs, none writes it)
    save_refs(ctx)  # the server started (its first answer waits for that)
    monkeypatch.setitem(references_tool.BY_NAME_TOOK, searched, 10.0)
    began, _ = timed_parts(monkeypatch)
    answer = save_refs(ctx)
    assert began == [] and [r["source"] for r in answer["references"]] == ["fault-ok"]
    assert "note: left out: the by-name candidates, not matched within" in answer["text"]
    assert "precision=syntax lists every use by name" in answer["text"]
    # its time cut, so that one is tried again before long
    assert references_tool.BY_NAME_TOOK[searched] == pytest.approx(10.0 * references_tool.SKIPPED_DECAY)


def test_after_a_quick_answer_one_that_would_come_in_time_starts(tmp_path, monkeypatch):
    """(A server answering in 10 ms, held quick and its answer's time long enough for the
    candidates whatever the machine's load: the order is what is tested, not the times.)"""
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 5.0)
    monkeypatch.setattr(references_tool, "ANSWER_WITHIN", 1000.0)
    ctx = grown(served(tmp_path, "brisk"))
    try:
        save_refs(ctx)  # the server started
        monkeypatch.setitem(references_tool.BY_NAME_TOOK, (tuple(ctx.workspace.roots), "python"), 0.5)
        began, both = timed_parts(monkeypatch)
        save_refs(ctx)
    finally:
        POOL.stop_all()
    ((collected, typed),) = both
    assert len(began) == 1 and began[0] >= typed.began + typed.took
    assert collected.cut is None and "name" in [r.source for r in collected.refs]


def test_a_server_not_answering_in_that_time_is_asked_while_the_names_are_matched(tmp_path, monkeypatch):
    """Once QUICK_SERVER is up (held at 0.25 s, the server taking 0.6 s; the answer's time
    held long enough for the candidates whatever the load)."""
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 0.25)
    monkeypatch.setattr(references_tool, "ANSWER_WITHIN", 1000.0)
    ctx = grown(served(tmp_path, "slow"))
    try:
        save_refs(ctx)  # the server started
        began, both = timed_parts(monkeypatch)
        entered: list[float] = []
        real_both = references_tool.both_at_once
        monkeypatch.setattr(
            references_tool, "both_at_once", lambda *a: entered.append(time.monotonic()) or real_both(*a)
        )
        answer = save_refs(ctx)
    finally:
        POOL.stop_all()
    ((_, typed),) = both
    assert len(began) == 1 and began[0] >= entered[0] + 0.25  # alone first, until that time was up
    assert began[0] < typed.began + typed.took  # then beside it, before it answered
    assert "name" in [r["source"] for r in answer["references"]]


def test_a_cut_by_name_search_counts_as_taking_longer_than_it_had(ctx, monkeypatch):
    grown(ctx)
    real = references_tool.collect
    entered: list[float] = []

    def held(quiet: Context, *arguments):
        entered.append(time.monotonic())
        quiet.cancel_event.wait(30)
        return real(quiet, *arguments)

    monkeypatch.setattr(references_tool, "collect", held)
    both: list = []
    real_both = references_tool.both_at_once
    monkeypatch.setattr(references_tool, "both_at_once", lambda *a: both.append(real_both(*a)) or both[-1])
    answer = save_refs(ctx)
    assert "note: left out: the by-name candidates, not matched within" in answer["text"]
    ((collected, typed),) = both
    # cut once the answer's time was up: it had run at least from its start until then, and is
    # taken to need CUT_BACKOFF times that
    ran = typed.began + collected.cut - entered[0]
    assert (
        references_tool.BY_NAME_TOOK[(tuple(ctx.workspace.roots), "python")]
        >= references_tool.CUT_BACKOFF * ran
    )


def piped(monkeypatch, delay: float) -> None:
    """Each semantic answer comes `delay` seconds after the server gave it, as over a worker's
    pipe (the server and its session are real)."""
    from lsp_agent.tools import precise

    real = precise.semantic

    class Piped:
        def __init__(self, source):
            self.source = source

        def locations(self, *arguments):
            answer = self.source.locations(*arguments)
            time.sleep(delay)
            return answer

    monkeypatch.setattr(precise, "semantic", lambda *a, **k: Piped(real(*a, **k)))


def test_the_candidates_time_counts_from_when_the_call_came_in_and_its_way_back(tmp_path, monkeypatch):
    """The answer's time counts from when its front door opened the call (Context.arrived),
    and a worker's answer has its pipe to go back (Context.way_back): the candidates get
    ANSWER_WITHIN the server's own time less both, less AFTER_CANDIDATES, and no less than
    the server's time."""
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 0.0)  # (asked while the names are matched)
    ctx = grown(served(tmp_path, "brisk"))
    real_collect = references_tool.collect

    def held(quiet: Context, *arguments):  # until the answer gives up on it
        quiet.cancel_event.wait(30)
        return real_collect(quiet, *arguments)

    def expected(typed, arrived: float | None, way_back: float, after: float) -> float:
        came = typed.began - arrived if arrived is not None else 0.0
        most = references_tool.ANSWER_WITHIN * typed.took - after
        return max(most - came - way_back, typed.took)

    try:
        save_refs(ctx)  # the server started
        monkeypatch.setattr(references_tool, "collect", held)
        _, both = timed_parts(monkeypatch)
        searched = (tuple(ctx.workspace.roots), "python")
        for arrived, way_back in ((0.05, 0.0), (None, 0.0), (0.001, 0.0005)):
            ctx.arrived = None if arrived is None else time.monotonic() - arrived
            ctx.way_back = way_back
            after = references_tool.after_candidates(searched)  # (the last answer's, at least 1 ms)
            save_refs(ctx)
            collected, typed = both[-1]
            assert collected.cut == pytest.approx(expected(typed, ctx.arrived, way_back, after), abs=1e-9)
        # (50 ms before, 1.5 times its 10 ms less that is less than its own time: that is all)
        assert both[0][0].cut == pytest.approx(both[0][1].took, abs=1e-9)
    finally:
        POOL.stop_all()


def test_the_servers_time_is_its_answers_own_not_the_way_to_it_and_back(tmp_path, monkeypatch):
    """A tool in a worker asks the serving process's session over a pipe: the answer's time
    is taken where it was asked (Answer.took), so the hops there and back (here 0.1 s added
    after each answer) are not counted as the server's."""
    from lsp_agent.tools import precise

    ctx = served(tmp_path, "brisk")
    piped(monkeypatch, 0.1)
    at = (ctx.workspace.roots[0] / "app" / "views.py", 10, 11)
    try:
        precise.confirmed(ctx, "references", [at], None)  # the server started
        began = time.monotonic()
        typed = precise.confirmed(ctx, "references", [at], None)
        whole = time.monotonic() - began
    finally:
        POOL.stop_all()
    assert typed.answered and whole >= 0.1
    assert 0.01 <= typed.took < whole - 0.05  # (fault_server.BRISK: at least its 10 ms)


@pytest.mark.parametrize(("mode", "here"), [("brisk", True), ("slow", False)])
def test_a_server_quick_last_time_is_asked_on_the_calls_own_thread(tmp_path, monkeypatch, mode, here):
    """Its answer is waited for before the search starts anyway: asked on the call's thread,
    the hops to another and back are saved. A slower server is asked from another thread,
    while the names are matched once QUICK_SERVER is up."""
    from lsp_agent.tools import precise

    monkeypatch.setattr(references_tool, "QUICK_SERVER", 0.3)  # (10 ms brisk, 0.6 s slow, on any load)
    ctx = grown(served(tmp_path, mode))
    asked_on: list[threading.Thread] = []
    real = precise.confirmed
    monkeypatch.setattr(
        precise, "confirmed", lambda *a, **k: asked_on.append(threading.current_thread()) or real(*a, **k)
    )
    try:
        save_refs(ctx)  # the server's first answer: asked from another thread
        save_refs(ctx)
    finally:
        POOL.stop_all()
    assert asked_on[0] is not threading.current_thread()
    assert (asked_on[1] is threading.current_thread()) is here


def test_the_candidates_leave_time_for_what_the_answer_does_after_them(tmp_path, monkeypatch):
    """What the last answer did after its candidates (its merge with them, its page) is kept
    of the next one's time: the candidates get ANSWER_WITHIN the server's time less that."""
    monkeypatch.setattr(references_tool, "QUICK_SERVER", 0.0)  # (asked while the names are matched)
    monkeypatch.setattr(references_tool, "ANSWER_WITHIN", 30.0)  # (room for the 0.1 s below)
    ctx = grown(served(tmp_path, "brisk"))
    real_collect, real_merge = references_tool.collect, references_tool.merge_confirmed

    def held(quiet: Context, *arguments):  # until the answer gives up on it
        quiet.cancel_event.wait(30)
        return real_collect(quiet, *arguments)

    def slow_merge(*arguments):
        time.sleep(0.1)
        return real_merge(*arguments)

    searched = (tuple(ctx.workspace.roots), "python")
    try:
        save_refs(ctx)  # the server started
        monkeypatch.setattr(references_tool, "collect", held)
        monkeypatch.setattr(references_tool, "merge_confirmed", slow_merge)
        _, both = timed_parts(monkeypatch)
        save_refs(ctx)
        assert references_tool.after_candidates(searched) >= 0.1
        kept = references_tool.after_candidates(searched)
        save_refs(ctx)
        collected, typed = both[-1]
        assert collected.cut == pytest.approx(max(30.0 * typed.took - kept, typed.took), abs=1e-9)
        assert collected.cut < 30.0 * typed.took - 0.1
    finally:
        POOL.stop_all()
