"""overview's confirmed ranking against the real sources, installed by `make test-servers`
under LSP_AGENT_TEST_SERVERS: basedpyright, and an index written by the real scip-python
(through `lsp-agent index scip`). On tests/fixtures/ranking/py `draw` and `clear` are
defined by three classes and only Star's are used, through a typed parameter: by name the
unused ones come first, confirmed they come last."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL, scip
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.semantic.test_confirmed_ranking import BY_NAME, CONFIRMED, order
from tests.servers.test_real_servers import servers

FIXTURE = Path(__file__).parents[1] / "fixtures" / "ranking" / "py"
CACHE = os.environ.get("LSP_AGENT_TEST_SERVERS")
if CACHE is None and os.environ.get("CI") == "true":
    raise RuntimeError("CI: run these through `make test-servers`, which installs the servers")
pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")


@pytest.fixture(scope="module", autouse=True)
def stop_servers():
    yield
    POOL.stop_all()


def settled(ctx: Context) -> dict:
    """overview once every candidate is confirmed and the server no longer says it is
    still loading (asked again from offset 0 while not)."""
    for _ in range(120):
        answer = call(ctx, "overview", {})
        ranking = answer["ranking"]
        if (
            ranking["by"] != "name"
            and ranking["confirmed"] == ranking["candidates"]
            and not ranking["partial"]
        ):
            return answer
        ctx.cancel_event.wait(0.5)
    raise AssertionError(f"overview: not confirmed after a minute: {answer['ranking']}")


def test_basedpyright_confirms_the_one_class_really_used(tmp_path):
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    by_name = call(Context(Workspace([root]), Settings().replace(precision="syntax")), "overview", {})
    assert order(by_name) == BY_NAME
    ctx = Context(Workspace([root]), Settings().replace(semantic_servers=servers(), semantic_timeout=60.0))
    answer = settled(ctx)
    assert order(answer) == CONFIRMED
    assert answer["ranking"]["sources"] == ["basedpyright"]
    assert "ranked by confirmed references from basedpyright · showing 1-7" in answer["text"].splitlines()[0]


def test_a_real_scip_python_index_confirms_the_same(tmp_path, monkeypatch):
    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    bin_folder = Path(CACHE or ".") / "scip" / "node_modules" / ".bin"
    run = subprocess.run(
        [sys.executable, "-m", "lsp_agent", "index", "scip", "--root", str(root), "--bin", str(bin_folder)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stdout + run.stderr
    scip.STORE.found.clear()
    ctx = Context(Workspace([root]), Settings().replace(semantic_servers={"python": False}))
    answer = call(ctx, "overview", {})
    assert order(answer) == CONFIRMED
    [source] = answer["ranking"]["sources"]
    assert source.startswith("scip-python ") and source.endswith(" index")
    assert answer["ranking"]["confirmed"] == answer["ranking"]["candidates"] == 7
