"""Shared fixtures: a scratch workspace and a tool context over it."""

from __future__ import annotations

import os

import pytest

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


@pytest.fixture(autouse=True, scope="session")
def index_cache(tmp_path_factory):
    """Servers the tests start persist their symbol index here, not in the user's cache."""
    folder = tmp_path_factory.mktemp("cache")
    os.environ["LSP_AGENT_CACHE_DIR"] = str(folder)
    yield folder
    del os.environ["LSP_AGENT_CACHE_DIR"]


@pytest.fixture
def ws(tmp_path):
    return Workspace([tmp_path])


@pytest.fixture
def run(ws):
    """run(tool, **arguments) -> answer, through the registry like every front door."""

    def run(tool: str, **arguments):
        return call(Context(ws), tool, arguments)

    return run
