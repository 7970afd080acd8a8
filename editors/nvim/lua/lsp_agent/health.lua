-- :checkhealth lsp_agent

local M = {}

function M.check()
  local health = vim.health
  local lsp_agent = require("lsp_agent")
  local config = lsp_agent.config

  health.start("lsp-agent: Neovim")
  local v = vim.version()
  local version = ("%d.%d.%d"):format(v.major, v.minor, v.patch)
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. version)
  else
    health.error("Neovim " .. version .. " is too old: lsp-agent needs Neovim 0.10 or newer.")
  end
  if vim.fn.exists(":LspAgentSearch") == 2 then
    health.ok("setup() has run: :LspAgentSearch, :LspAgentRead and :LspAgentSymbols are defined.")
  else
    health.warn('setup() has not run.', { 'Call require("lsp_agent").setup({}) in your init.lua.' })
  end

  health.start("lsp-agent: server command")
  local program = config.cmd[1]
  local path = vim.fn.exepath(program)
  if path == "" then
    health.error(("%q is not executable."):format(program), {
      "Install lsp-agent (`pip install -e .` in its checkout), or",
      'point setup({ cmd = { "/path/to/.venv/bin/lsp-agent", "serve" } }) at it.',
    })
  else
    health.ok(("cmd = %s (%s)"):format(table.concat(config.cmd, " "), path))
    -- The command up to `serve`, asked for its version.
    local serve = vim.fn.index(config.cmd, "serve")
    if serve > 0 then
      local probe = vim.list_slice(config.cmd, 1, serve)
      table.insert(probe, "--version")
      local ok, result = pcall(function()
        return vim.system(probe, { text = true }):wait(10000)
      end)
      if ok and result.code == 0 then
        health.ok(vim.trim(result.stdout))
      else
        health.error(("`%s` failed: %s"):format(
          table.concat(probe, " "),
          ok and vim.trim((result.stderr or "") .. (result.stdout or "")) or tostring(result)
        ))
      end
    end
  end

  health.start("lsp-agent: this buffer")
  local bufnr = vim.api.nvim_get_current_buf()
  local root = lsp_agent.root(bufnr)
  if root then
    health.ok("workspace root: " .. root)
  else
    health.info("the current buffer is not inside a workspace root (markers: "
      .. table.concat(config.root_markers, ", ") .. "), so it is not served.")
  end
  local clients = vim.lsp.get_clients({ name = lsp_agent.name })
  if #clients == 0 then
    health.info("no lsp-agent server is running.")
  end
  for _, client in ipairs(clients) do
    local info = client.server_info or {}
    local buffers = vim.tbl_count(client.attached_buffers or {})
    health.ok(("client %d: %s %s, root %s, %d buffer(s) attached"):format(
      client.id,
      info.name or "?",
      info.version or "",
      client.root_dir or client.config.root_dir or "?",
      buffers
    ))
  end
end

return M
