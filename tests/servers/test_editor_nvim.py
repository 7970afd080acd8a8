"""The editor as the semantic source in a real headless Neovim: basedpyright (installed by
`make test-servers`) attached to the buffer beside lsp-agent, which asks Neovim
(`lspAgent/semantic`) and Neovim asks basedpyright. No headless server of lsp-agent's own
runs: the answer is labelled with Neovim's client, and only the right class's uses of a
common method name are confirmed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.editors.test_nvim import private_xdg_dirs  # noqa: F401 (fixture)
from tests.servers.test_real_servers import CACHE, FIXTURES, servers
from tests.support.nvim_editor import Editor, server_command

pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")

# basedpyright beside lsp-agent, as a user's config starts it for Python buffers.
BASEDPYRIGHT = """
vim.api.nvim_create_autocmd("FileType", { pattern = "python", callback = function(args)
  vim.lsp.start({ name = "basedpyright", cmd = {cmd}, root_dir = {root!r} }, { bufnr = args.buf })
end })
"""

CALL = """
local c = vim.lsp.get_clients({ bufnr = 0, name = "lsp_agent" })[1]
_G.answer = nil
c:request("lspAgent/" .. ..., vim.json.decode(select(2, ...)), function(err, result)
  _G.answer = vim.json.encode(result or { error = err })
end, 0)
"""


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "py"
    shutil.copytree(FIXTURES / "py", root)
    (root / "pyproject.toml").write_text('[project]\nname = "fixture"\n')
    return root


@pytest.fixture
def nvim(project, tmp_path):
    command = servers()["python"]
    # lsp-agent's own server for Python would be this one too: told to use none, so that an
    # answer by type can only have come through Neovim.
    setup = f"{{ cmd = {server_command()}, init_options = {{ semantic_servers = {{ python = false }} }} }}"
    ed = Editor(project, tmp_path, setup)
    lua = "{ " + ", ".join(repr(part) for part in command) + " }"
    ed.lua(BASEDPYRIGHT.replace("{cmd}", lua).replace("{root!r}", repr(str(project))))
    yield ed
    ed.close()


def call(nvim: Editor, tool: str, **arguments) -> dict:
    nvim.lua(CALL, tool, json.dumps(arguments))
    nvim.wait("_G.answer ~= nil", timeout_ms=90000)
    return json.loads(nvim.lua("return _G.answer"))


def test_references_of_a_common_method_name_are_answered_by_type_through_neovim(nvim, project):
    nvim.edit(project / "app" / "views.py")
    nvim.wait(
        '(function() local c = vim.lsp.get_clients({ bufnr = 0, name = "basedpyright" })[1] '
        "return c ~= nil and c.initialized end)()",
        timeout_ms=60000,
    )
    answer = call(nvim, "references", path="app/views.py", line=5, column=9)  # Cache.get
    assert answer["semantic"]["server"] == "Neovim's attached clients: basedpyright", answer["text"]
    assert "by type, from Neovim's attached clients: basedpyright" in answer["text"]
    typed = {(r["path"], r["line"]) for r in answer["references"] if r["source"] != "name"}
    # The definition and cache.get(...): not settings.get(...) (a dict's get).
    assert typed == {("app/views.py", 5), ("app/views.py", 12)}
    definition = call(nvim, "definition", path="app/views.py", line=10, column=11)  # order.save()
    assert definition["semantic"]["server"] == "Neovim's attached clients: basedpyright"
    assert [(d["path"], d["name_path"]) for d in definition["definitions"]] == [
        ("app/models.py", "Order/save")
    ]
    # A file no buffer holds (models.py): asked of the client whose root holds it.
    assert not nvim.lua("return vim.fn.bufloaded(...) == 1", str(project / "app" / "models.py"))
    save = call(nvim, "references", path="app/models.py", line=7, column=9)  # Order.save
    assert save["semantic"]["server"] == "Neovim's attached clients: basedpyright", save["text"]
    typed = {(r["path"], r["line"]) for r in save["references"] if r["source"] != "name"}
    assert typed == {("app/models.py", 7), ("app/views.py", 10)}


def test_a_rename_previewed_and_applied_through_neovim(nvim, project):
    """rename asks Neovim (basedpyright attached) for the changes, shows them, and applies them
    with one workspace/applyEdit: Neovim's buffers change, unsaved, the disk does not."""
    nvim.edit(project / "app" / "views.py")
    nvim.wait(
        '(function() local c = vim.lsp.get_clients({ bufnr = 0, name = "basedpyright" })[1] '
        "return c ~= nil and c.initialized end)()",
        timeout_ms=60000,
    )
    on_disk = {rel: (project / rel).read_text() for rel in ("app/models.py", "app/views.py")}
    asked = {"path": "app/models.py", "line": 7, "column": 9, "new_name": "store"}  # Order.save
    preview = call(nvim, "rename", **asked)
    assert "error" not in preview, preview["text"]
    assert "Neovim's attached clients: basedpyright" in preview["text"]
    applied = call(nvim, "rename", **asked, apply=True, if_version=preview["version"])
    assert "error" not in applied, applied["text"]

    def buffer(rel: str) -> list[str]:
        return nvim.lua(
            "return vim.api.nvim_buf_get_lines(vim.fn.bufadd(...), 0, -1, false)", str(project / rel)
        )

    assert buffer("app/models.py")[6] == "    def store(self):"
    assert buffer("app/models.py")[7] == "        super().save()"  # Base.save: another symbol
    assert buffer("app/views.py")[9] == "    order.store()"
    assert buffer("app/views.py")[11] == '    cache.get("total")'
    assert nvim.lua("return vim.bo[vim.fn.bufadd(...)].modified", str(project / "app" / "views.py"))
    assert {rel: (project / rel).read_text() for rel in on_disk} == on_disk  # unsaved: the disk is as it was
