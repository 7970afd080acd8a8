"""Shared fixtures: a scratch workspace and a tool context over it."""

from __future__ import annotations

import pytest

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


@pytest.fixture
def ws(tmp_path):
    return Workspace([tmp_path])


@pytest.fixture
def run(ws):
    """run(tool, **arguments) -> answer, through the registry like every front door."""

    def run(tool: str, **arguments):
        return call(Context(ws), tool, arguments)

    return run
