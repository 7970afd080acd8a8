-- The user commands: each builds a tool call, sends it as the request `lspAgent/<tool>`, and
-- shows the answer's text in a scratch buffer `lsp-agent://<tool>`.

local M = {}

local function notify(message, level)
  vim.notify("lsp-agent: " .. message, level or vim.log.levels.ERROR)
end

--- The window showing answers in this tab page, if any.
local function answer_window()
  for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    if vim.bo[vim.api.nvim_win_get_buf(win)].filetype == "lsp_agent" then
      return win
    end
  end
end

--- The scratch buffer of `tool`, shown in the answer window: one window for every answer,
--- opened (config.open) only when none is showing one.
local function scratch(tool)
  local name = "lsp-agent://" .. tool
  local bufnr = vim.fn.bufnr(name)
  if bufnr == -1 then
    bufnr = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(bufnr, name)
  end
  local win = answer_window()
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.cmd(require("lsp_agent").config.open)
  end
  vim.api.nvim_win_set_buf(0, bufnr)
  -- Every time, not only on creation: a buffer unloaded by :bdelete comes back as a plain one
  -- (a file named lsp-agent://read that :w would write).
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  if vim.bo[bufnr].filetype ~= "lsp_agent" then -- (setting it fires FileType)
    vim.bo[bufnr].filetype = "lsp_agent"
  end
  return bufnr
end

--- Show an answer: its text in the tool's scratch buffer, the call and answer kept in
--- b:lsp_agent, and the User autocmd LspAgentAnswer fired (data: {tool, arguments, answer}).
local function show(tool, arguments, answer)
  local bufnr = scratch(tool)
  vim.bo[bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(answer.text, "\n", { plain = true }))
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].modified = false
  vim.api.nvim_win_set_cursor(0, { 1, 0 })
  local record = { tool = tool, arguments = arguments, answer = answer }
  vim.b[bufnr].lsp_agent = record
  if answer.error then
    notify(answer.error.message, vim.log.levels.WARN)
  end
  vim.api.nvim_exec_autocmds("User", { pattern = "LspAgentAnswer", data = record })
end

--- Send the call `tool(arguments)` for buffer `bufnr`, then `after(answer, client)` (default: show it).
function M.call(bufnr, tool, arguments, after)
  local lsp_agent = require("lsp_agent")
  lsp_agent.call(tool, arguments, function(err, answer)
    if err then
      vim.notify(err, vim.log.levels.ERROR)
    else
      (after or function(a)
        show(tool, arguments, a)
      end)(answer, lsp_agent.client(bufnr))
    end
  end, { bufnr = bufnr })
end

--- The current buffer's file, or nil (and the user is told) when it has none.
local function current_file()
  local bufnr = vim.api.nvim_get_current_buf()
  local path = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or path == "" then
    notify("this buffer is not a file of the workspace.")
    return nil
  end
  return path
end

local function read(opts)
  local bufnr = vim.api.nvim_get_current_buf()
  local shown = vim.b[bufnr].lsp_agent
  if opts.args == "" and shown and shown.tool == "read" then
    -- In the read buffer: the next page, as the answer's `next` says.
    if shown.answer.next == vim.NIL or not shown.answer.next then
      notify("that was the last page.", vim.log.levels.INFO)
      return
    end
    M.call(bufnr, "read", vim.tbl_extend("force", { path = shown.arguments.path }, shown.answer.next))
    return
  end
  local path = current_file()
  if not path then
    return
  end
  local start = opts.args == "" and vim.api.nvim_win_get_cursor(0)[1] or tonumber(opts.args)
  if not start or start < 1 or start % 1 ~= 0 then
    notify("usage: :LspAgentRead [start], start a line number from 1.")
    return
  end
  M.call(bufnr, "read", { path = path, start = start })
end

local function symbols()
  local path = current_file()
  if path then
    M.call(vim.api.nvim_get_current_buf(), "symbols", { path = path })
  end
end

--- The 1-based byte column of 1-based character column `col` of `text` (quickfix counts bytes).
--- The server counts code points, composing ones included, hence byteidxcomp, not byteidx.
local function byte_column(text, col)
  local byte = vim.fn.byteidxcomp(text, col - 1)
  return byte >= 0 and byte + 1 or col
end

--- The quickfix list from the answer's `locations` (every match the answer covers; nil when
--- the matches were too many to keep more than counts).
local function set_quickfix(answer, root, pattern)
  local title = "lsp-agent search " .. pattern
  local locations = answer.locations
  if type(locations) ~= "table" then
    if not answer.error then
      notify("too many matches to list their locations; narrow the search (see the answer).", vim.log.levels.INFO)
    end
    vim.fn.setqflist({}, " ", { title = title, items = {} })
    return
  end
  local items = {}
  for _, loc in ipairs(locations) do
    local path = loc.path:sub(1, 1) == "/" and loc.path or vim.fs.joinpath(root, loc.path)
    table.insert(items, {
      filename = path,
      lnum = loc.line,
      col = byte_column(loc.text, loc.column),
      end_col = byte_column(loc.text, loc.end_column),
      text = loc.text,
    })
  end
  vim.fn.setqflist({}, " ", { title = title, items = items })
end

local function search(opts)
  local arguments = { pattern = opts.args }
  M.call(vim.api.nvim_get_current_buf(), "search", arguments, function(answer, client)
    set_quickfix(answer, client.root_dir, opts.args)
    show("search", arguments, answer)
  end)
end

function M.create()
  vim.api.nvim_create_user_command("LspAgentSearch", search, {
    nargs = "+",
    desc = "lsp-agent: search the workspace for a regex (answer in a scratch buffer, locations in quickfix)",
  })
  vim.api.nvim_create_user_command("LspAgentRead", read, {
    nargs = "?",
    desc = "lsp-agent: read the current file from [start] (default: the cursor line); in the answer, the next page",
  })
  vim.api.nvim_create_user_command("LspAgentSymbols", symbols, {
    nargs = 0,
    desc = "lsp-agent: outline of the current file",
  })
end

return M
