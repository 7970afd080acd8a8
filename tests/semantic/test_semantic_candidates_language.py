"""Beside a language server, the by-name candidates are searched in the files of the
definition's language only (another language's `save` is never this one by type, and not
walking those files is most of the time saved); the syntax source alone still searches every
file and counts the others, and so does the answer whose expected server did not answer. A real server process answers (tests/semantic/fault_server.py)."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
SERVER = Path(__file__).parent / "fault_server.py"
SAVE = {"path": "app/views.py", "line": 10, "column": 11}  # order.save()


def context(tmp_path: Path, mode: str) -> Context:
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    (root / "web").mkdir()
    (root / "web" / "cart.js").write_text("function save(order) { order.save(); }\n")
    (root / "web" / "CART.PY").write_text("def keep(order):\n    order.save()\n")  # any case
    command = [sys.executable, str(SERVER), mode, str(tmp_path / "log")]
    servers = {"python": {"name": f"fault-{mode}", "command": command}}
    return Context(Workspace([root]), Settings().replace(semantic_servers=servers, semantic_timeout=5.0))


@pytest.fixture(autouse=True)
def servers_stopped():
    yield
    POOL.stop_all()


def test_beside_the_server_only_the_definitions_language_is_searched(tmp_path):
    ctx = context(tmp_path, "ok")
    answer = call(ctx, "references", SAVE)
    paths = {r["path"] for r in answer["references"]}
    assert "web/cart.js" not in paths and "web/CART.PY" in paths
    assert "other languages" not in answer["text"]
    syntax = call(ctx, "references", {**SAVE, "precision": "syntax"})
    assert (
        "left out: 2 uses in files of other languages than the definitions' (javascript 2)" in syntax["text"]
    )


def test_when_the_expected_server_fails_every_file_is_searched_after_all(tmp_path):
    ctx = context(tmp_path, "crash")
    answer = call(ctx, "references", SAVE)
    assert "no type-aware answer" in answer["text"]
    assert {r["source"] for r in answer["references"]} == {"name"}
    assert "web/CART.PY" in {r["path"] for r in answer["references"]}
    assert (
        "left out: 2 uses in files of other languages than the definitions' (javascript 2)" in answer["text"]
    )


def test_with_no_server_for_the_language_every_file_is_searched(tmp_path):
    ctx = context(tmp_path, "ok")
    ctx = replace(ctx, settings=ctx.settings.replace(semantic_servers={"python": False}))
    answer = call(ctx, "references", SAVE)
    assert (
        "left out: 2 uses in files of other languages than the definitions' (javascript 2)" in answer["text"]
    )
