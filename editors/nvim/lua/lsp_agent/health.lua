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
  if lsp_agent.did_setup then
    health.ok("setup() has run.")
  elseif vim.lsp.is_enabled and vim.lsp.is_enabled(lsp_agent.name) then
    health.ok('vim.lsp.enable("lsp_agent") has run (no setup(): the defaults, or vim.lsp.config("lsp_agent")).')
  else
    health.warn("Nothing attaches the server.", {
      'Call require("lsp_agent").setup({}) in your init.lua, or vim.lsp.enable("lsp_agent") (Neovim 0.11).',
    })
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

  -- Every file buffer (checkhealth runs in its own buffer, so "the current one" is not useful).
  health.start("lsp-agent: buffers")
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local name = vim.api.nvim_buf_get_name(bufnr)
    if vim.bo[bufnr].buflisted and vim.bo[bufnr].buftype == "" and name ~= "" then
      local root = lsp_agent.root(bufnr)
      local attached = vim.lsp.get_clients({ bufnr = bufnr, name = lsp_agent.name })[1]
      if attached then
        health.ok(("%s: served by client %d (root %s)"):format(name, attached.id, root or "?"))
      elseif root then
        health.warn(("%s: inside root %s but no client is attached"):format(name, root), {
          "Check :LspInfo (or :checkhealth vim.lsp) and the server's log in :lua =vim.lsp.get_log_path()",
        })
      else
        health.info(("%s: not inside a workspace root (markers: %s), not served"):format(
          name,
          table.concat(config.root_markers, ", ")
        ))
      end
    end
  end
  health.start("lsp-agent: servers")
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
