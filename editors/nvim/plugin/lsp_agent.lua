-- Loaded at startup: the user commands (the server is attached by setup() or by
-- vim.lsp.enable("lsp_agent")), and the help tags of a plain install (plugin managers write
-- them; a checkout on 'runtimepath' has none until :helptags), so :help lsp_agent works.
if vim.g.loaded_lsp_agent then
  return
end
vim.g.loaded_lsp_agent = true

require("lsp_agent.commands").create()

local doc = vim.fs.joinpath(vim.fs.dirname(vim.fs.dirname(debug.getinfo(1, "S").source:sub(2))), "doc")
if vim.uv.fs_stat(doc) and not vim.uv.fs_stat(vim.fs.joinpath(doc, "tags")) then
  pcall(vim.cmd.helptags, vim.fn.fnameescape(doc)) -- a read-only install keeps :helptags for later
end
