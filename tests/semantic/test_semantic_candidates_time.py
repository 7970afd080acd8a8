"""The by-name candidates never hold a references answer much past the server's: matched at
the same time as the server is asked, they may take what is left of 1.5 times the server's
time (references.ANSWER_WITHIN); past that the answer is the server's uses, and it says the candidates were left out and how to get them.
A real server process answers (tests/semantic/fault_server.py, mode ok); the by-name search
is held until it is told to stop, so the cut does not depend on which finishes first."""

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


@pytest.fixture
def ctx(tmp_path):
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    command = [sys.executable, str(SERVER), "ok", str(tmp_path / "log")]
    chosen = Settings().replace(semantic_servers={"python": {"name": "fault-ok", "command": command}})
    yield Context(Workspace([root]), chosen)
    POOL.stop_all()


def save_refs(ctx: Context) -> dict:
    return call(ctx, "references", {"path": "app/views.py", "line": 10, "column": 11})


def test_candidates_matched_in_time_are_listed_after_the_servers(ctx):
    answer = save_refs(ctx)
    sources = [r["source"] for r in answer["references"]]
    assert sources[0] == "fault-ok" and "name" in sources
    assert "by-name candidates, not matched" not in answer["text"]


@pytest.mark.parametrize("small", [True, False])
def test_candidates_not_matched_in_time_are_left_out_and_said(ctx, monkeypatch, small):
    if not small:  # a workspace of SMALL_WORKSPACE files or more, its index built: no floor
        from lsp_agent.syntax.index import SymbolIndex

        root = ctx.workspace.roots[0]
        for n in range(references_tool.SMALL_WORKSPACE):
            (root / f"extra_{n}.py").write_text(f"def extra{n}():\n    return {n}\n")
        ctx.index = SymbolIndex(ctx.workspace)
        ctx.index.build()
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
    # the time left them: ANSWER_WITHIN the server's own, less AFTER_CANDIDATES (in a small
    # workspace, the floor past the server's time, which is more)
    ((collected, typed),) = both
    floor = references_tool.CANDIDATES_FLOOR if small else 0.0
    allowed = max(
        references_tool.ANSWER_WITHIN * typed.took - references_tool.AFTER_CANDIDATES, typed.took + floor
    )
    assert typed.took > 0 and collected.cut == pytest.approx(allowed, abs=1e-9)
    assert f"note: left out: the by-name candidates, not matched within {allowed:.2f} s" in answer["text"]
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
