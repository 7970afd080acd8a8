-- The agent tools for CodeCompanion.nvim's chat: one CodeCompanion tool per tool of the
-- server's catalog (lsp_agent_<tool>), and a group `lsp_agent` with all of them. A tool runs
-- as the request lspAgent/<tool> to the attached server (so it sees unsaved buffers) and gives
-- the model the answer's text. The tools only read: no approval is asked.
--
--   require("codecompanion").setup({
--     interactions = { chat = { tools = require("lsp_agent.codecompanion").tools() } },
--   })

local lsp_agent = require("lsp_agent")

local M = {}

M.READ_ONLY = " Read-only: it changes no file, and it sees the unsaved text of buffers open in Neovim."

--- CodeCompanion's tool for catalog entry `entry` (its interface: doc/extending/tools.md of
--- codecompanion.nvim: `cmds` functions(self, args, opts) ending in opts.output_cb, and
--- `output.success/error(self, stdout|stderr, meta)` adding the output to meta.tools.chat).
function M.tool(entry)
  local name = "lsp_agent_" .. entry.name
  return {
    name = name,
    schema = {
      type = "function",
      ["function"] = { name = name, description = entry.description .. M.READ_ONLY, parameters = entry.inputSchema },
    },
    cmds = {
      function(_, args, opts)
        lsp_agent.call(entry.name, args, function(err, answer)
          if err then
            opts.output_cb({ status = "error", data = err })
          else
            opts.output_cb({ status = "success", data = answer.text })
          end
        end)
      end,
    },
    output = {
      success = function(self, stdout, meta)
        meta.tools.chat:add_tool_output(self, stdout[#stdout])
      end,
      error = function(self, stderr, meta)
        meta.tools.chat:add_tool_output(self, stderr[#stderr])
      end,
    },
  }
end

--- The `interactions.chat.tools` table: the tools and their group `lsp_agent` (merge your own
--- tools into it with vim.tbl_deep_extend).
function M.tools()
  local tools, names = { groups = {} }, {}
  for _, entry in ipairs(lsp_agent.catalog()) do
    local tool = M.tool(entry)
    tools[tool.name] = {
      description = entry.description:match("^[^.]*%.") or entry.description,
      callback = tool,
      opts = { require_approval_before = false },
    }
    table.insert(names, tool.name)
  end
  tools.groups.lsp_agent = {
    description = "lsp-agent: read, search and outline the workspace within a budget, unsaved buffers included",
    tools = names,
    opts = { collapse_tools = true },
  }
  return tools
end

return M
