"""Edits in a real headless Neovim: the edit tool's change arrives through workspace/applyEdit
in the unsaved buffer (the disk unchanged), and Neovim's undo takes it back."""

from __future__ import annotations

import json

import pytest

from tests.editors.test_nvim import APP, private_xdg_dirs, workspace  # noqa: F401 (fixtures)
from tests.support.nvim_editor import Editor, server_command

CALL = """
local c = vim.lsp.get_clients({ bufnr = 0, name = "lsp_agent" })[1]
_G.answer = nil
c:request("lspAgent/" .. ..., vim.json.decode(select(2, ...)), function(err, result)
  _G.answer = vim.json.encode(result or { error = err })
end, 0)
"""


@pytest.fixture
def nvim(workspace, tmp_path):  # noqa: F811
    ed = Editor(workspace, tmp_path, f"{{ cmd = {server_command()} }}")
    yield ed
    ed.close()


def call(nvim: Editor, tool: str, **arguments) -> dict:
    nvim.lua(CALL, tool, json.dumps(arguments))
    nvim.wait("_G.answer ~= nil")
    return json.loads(nvim.lua("return _G.answer"))


def test_an_edit_lands_in_the_unsaved_buffer_and_undo_restores_it(nvim, workspace):  # noqa: F811
    nvim.edit(workspace / "app.py")
    buffer = nvim.nvim.current.buffer
    answer = call(
        nvim, "edit", path="app.py", old_text='return f"hello {name}"', new_text='return f"hi {name}"'
    )
    assert "error" not in answer, answer
    assert answer["applied_by"] == "editor"
    assert buffer[4] == '        return f"hi {name}"'
    assert nvim.lua("return vim.bo.modified") is True
    assert (workspace / "app.py").read_text() == APP  # unsaved
    read = call(nvim, "read", path="app.py")
    assert read["version"] == answer["version"] and "hi {name}" in read["text"]
    nvim.nvim.command("undo")
    assert buffer[:] == APP.rstrip("\n").split("\n")
    symbol = call(nvim, "edit_symbol", path="app.py", symbol="main", action="insert_after",
                  new_text="def other():\n    return 1")  # fmt: skip
    assert "error" not in symbol, symbol
    assert buffer[-2:] == ["def other():", "    return 1"]
