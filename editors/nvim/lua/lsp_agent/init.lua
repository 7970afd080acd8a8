-- lsp-agent for Neovim >= 0.10: attach the server to the buffers of a workspace, and run its
-- agent tools (search, read, symbols) as user commands that show each answer exactly as an
-- agent gets it, in a scratch buffer; search locations also go to the quickfix list.

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
  -- Sent as initializationOptions, e.g. { max_chars = 8000, search_engine = "rg" }.
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
  return {
    name = M.name,
    cmd = M.config.cmd,
    filetypes = M.config.filetypes,
    -- An empty Lua table would be sent as a JSON array; the server expects an object or nothing.
    init_options = next(init_options) and init_options or nil,
  }
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
    vim.lsp.config[M.name] = vim.tbl_extend("force", client_config(), {
      -- Attach only inside a workspace root: on_dir is not called otherwise.
      root_dir = function(bufnr, on_dir)
        local root = M.root(bufnr)
        if root then
          on_dir(root)
        end
      end,
    })
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
end

return M
