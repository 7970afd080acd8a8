-- lsp-agent for Neovim >= 0.10: attach the server to the buffers of a workspace, and run its
-- agent tools (search, read, symbols) as user commands that show each answer exactly as an
-- agent gets it, in a scratch buffer; search locations also go to the quickfix list.
-- `call` and `call_sync` give the same tools to Lua, and so to agent plugins (see
-- lsp_agent.codecompanion and lsp_agent.avante).

local M = {}

M.name = "lsp_agent"

local defaults = {
  -- The server command; it speaks LSP over stdio.
  cmd = { "lsp-agent", "serve" },
  -- A buffer is served when one of its parent directories holds one of these; that directory
  -- is the workspace root, the only place the tools read.
  root_markers = { ".git", "pyproject.toml", "setup.py", "setup.cfg", "package.json", "Cargo.toml", "go.mod", ".hg" },
  -- nil: every filetype (tools see every open buffer's unsaved text).
  filetypes = nil,
  -- Sent as initializationOptions, e.g. { max_chars = 8000, max_nudges = 2 }.
  init_options = {},
  -- How an answer's scratch buffer is opened when no window shows it yet.
  open = "botright split",
}

M.config = vim.deepcopy(defaults)

--- The workspace root of `bufnr` (an absolute path), or nil when it is not inside one.
function M.root(bufnr)
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return nil
  end
  return vim.fs.root(bufnr, M.config.root_markers)
end

local function client_config()
  local init_options = M.config.init_options
  local semantic = require("lsp_agent.semantic")
  return {
    name = M.name,
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    -- An empty Lua table would be sent as a JSON array; the server expects an object or nothing.
    init_options = next(init_options) and init_options or nil,
    -- The server's navigation asks the other clients of the buffer first (lsp_agent.semantic).
    capabilities = semantic.capabilities,
    handlers = { [semantic.method] = semantic.answer },
  }
end

--- The configuration of vim.lsp.config (Neovim 0.11): the client's, attached only inside a
--- workspace root (on_dir is not called otherwise). lsp/lsp_agent.lua returns it too.
function M.lsp_config()
  return vim.tbl_extend("force", client_config(), {
    root_dir = function(bufnr, on_dir)
      local root = M.root(bufnr)
      if root then
        on_dir(root)
      end
    end,
  })
end

--- The lsp-agent client of `bufnr` (default: the current buffer), else any running one: the
--- server itself refuses a path outside its workspace, and says so.
function M.client(bufnr)
  return vim.lsp.get_clients({ bufnr = bufnr or 0, name = M.name })[1] or vim.lsp.get_clients({ name = M.name })[1]
end

local function no_server()
  return "lsp-agent: no server is running: open a file inside a workspace root ("
    .. table.concat(M.config.root_markers, ", ")
    .. "). See :checkhealth lsp_agent."
end

-- An empty Lua table would be sent as a JSON array; a tool's arguments are an object.
local function params(arguments)
  return (arguments == nil or next(arguments) == nil) and vim.empty_dict() or arguments
end

--- Call agent tool `tool` (`lsp-agent tools` lists them, with the JSON Schema of their
--- arguments) with `arguments`, as the request `lspAgent/<tool>` to the attached server, which
--- sees the unsaved text of every buffer. `callback(err, answer)` runs when it answers: `err` a
--- message, or `answer` with `answer.text`, what an agent reads (a refusal is an answer too,
--- with `answer.error`). Returns a function that cancels the call; nil when no server runs
--- (`callback` has been told).
---@param tool string
---@param arguments table|nil
---@param callback fun(err: string|nil, answer: table|nil)
---@param opts? { bufnr?: integer }
---@return fun()|nil cancel
function M.call(tool, arguments, callback, opts)
  -- A real number: the client sends the buffer's pending changes first only for its own bufnr.
  local bufnr = opts and opts.bufnr or 0
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  local client = M.client(bufnr)
  if not client then
    callback(no_server(), nil)
    return nil
  end
  local function handler(err, answer)
    callback(err and ("lsp-agent %s failed: %s"):format(tool, err.message or vim.inspect(err)) or nil, answer)
  end
  local method = "lspAgent/" .. tool
  local ok, id
  if vim.fn.has("nvim-0.11") == 1 then
    ok, id = client:request(method, params(arguments), handler, bufnr)
  else
    ok, id = client.request(method, params(arguments), handler, bufnr)
  end
  if not ok then
    callback(("lsp-agent %s: the server has stopped"):format(tool), nil)
    return nil
  end
  return function()
    if vim.fn.has("nvim-0.11") == 1 then
      client:cancel_request(id)
    else
      client.cancel_request(id)
    end
  end
end

--- `call`, waiting for the answer at most `timeout_ms` (default 10000) milliseconds.
---@return table|nil answer
---@return string|nil err
function M.call_sync(tool, arguments, timeout_ms, opts)
  local done, answer, err = false, nil, nil
  local cancel = M.call(tool, arguments, function(e, a)
    done, err, answer = true, e, a
  end, opts)
  if not vim.wait(timeout_ms or 10000, function()
    return done
  end, 10) then
    if cancel then
      cancel()
    end
    return nil, ("lsp-agent %s: no answer within %d ms (the call was cancelled)"):format(tool, timeout_ms or 10000)
  end
  return answer, err
end

local catalog

--- The server's catalog of agent tools (name, description, inputSchema), from the running
--- server, else from `<cmd> tools`; read once.
function M.catalog()
  if not catalog then
    local client = M.client()
    if client then
      local answer, err = M.call_sync("tools", nil, 10000)
      assert(answer, err)
      catalog = answer.tools
    else
      local result = vim.system({ M.config.cmd[1], "tools" }, { text = true }):wait()
      assert(result.code == 0, ("lsp-agent: `%s tools` failed: %s"):format(M.config.cmd[1], result.stderr))
      catalog = vim.json.decode(result.stdout)
    end
  end
  return catalog
end

--- Start (or reuse) the client for `bufnr` when it lies in a workspace root (the Neovim 0.10 path).
local function attach(bufnr)
  local root = M.root(bufnr)
  if not root or #vim.lsp.get_clients({ bufnr = bufnr, name = M.name }) > 0 then
    return
  end
  local filetypes = M.config.filetypes
  if filetypes and not vim.tbl_contains(filetypes, vim.bo[bufnr].filetype) then
    return
  end
  vim.lsp.start(vim.tbl_extend("force", client_config(), { root_dir = root }), { bufnr = bufnr })
end

function M.setup(opts)
  opts = opts or {}
  -- A shallow merge: list options (cmd, root_markers) replace the defaults rather than mix with them.
  M.config = vim.tbl_extend("force", vim.deepcopy(defaults), opts)

  local program = M.config.cmd[1]
  if vim.fn.executable(program) ~= 1 then
    vim.notify(
      ("lsp-agent: the server command %q is not executable; install lsp-agent or set cmd in "
        .. 'require("lsp_agent").setup({ cmd = { "/path/to/lsp-agent", "serve" } }). See :checkhealth lsp_agent.'):format(
        program
      ),
      vim.log.levels.WARN
    )
  end

  local group = vim.api.nvim_create_augroup("lsp_agent", { clear = true })
  if vim.lsp.config and vim.lsp.enable then
    -- Assigned, not `vim.lsp.config(name, ...)`, which deep-merges into the previous config:
    -- a second setup() would keep options it no longer gives (init_options, filetypes).
    vim.lsp.config[M.name] = M.lsp_config()
    vim.lsp.enable(M.name)
    if not M.config.filetypes then
      -- vim.lsp.enable attaches on FileType, which never fires for a file with no filetype.
      vim.api.nvim_create_autocmd("BufEnter", {
        group = group,
        callback = function(args)
          if vim.bo[args.buf].filetype == "" then
            attach(args.buf)
          end
        end,
      })
    end
  else
    vim.api.nvim_create_autocmd({ "FileType", "BufEnter" }, {
      group = group,
      callback = function(args)
        attach(args.buf)
      end,
    })
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(bufnr) then
        attach(bufnr)
      end
    end
  end
  require("lsp_agent.commands").create()
  M.did_setup = true
end

return M
