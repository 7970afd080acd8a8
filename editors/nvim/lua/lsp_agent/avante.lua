-- The agent tools for avante.nvim: one custom tool per tool of the server's catalog
-- (lsp_agent_<tool>). A tool runs as the request lspAgent/<tool> to the attached server (so it
-- sees unsaved buffers) and returns the answer's text to the model. The tools only read.
--
--   require("avante").setup({
--     custom_tools = function() return require("lsp_agent.avante").tools() end,
--   })

local lsp_agent = require("lsp_agent")
local READ_ONLY = require("lsp_agent.codecompanion").READ_ONLY

local M = {}

-- JSON Schema keywords avante's fields cannot carry, told to the model in the description.
local NOTES = { "default", "minimum", "maximum", "minLength" }

--- An avante parameter field (AvanteLLMToolParamField: name, description, type, optional,
--- items, choices) from a property of a JSON Schema.
local function field(name, property, optional)
  -- A choice of types (anyOf) becomes its first: avante's fields have one type.
  local schema = property.anyOf and property.anyOf[1] or property
  local notes = {}
  for _, keyword in ipairs(NOTES) do
    if property[keyword] ~= nil then
      table.insert(notes, ("%s %s"):format(keyword, vim.json.encode(property[keyword])))
    end
  end
  local description = property.description or ""
  if #notes > 0 then
    description = ("%s (%s)"):format(description, table.concat(notes, ", "))
  end
  return {
    name = name,
    description = description,
    type = schema.type or "string",
    optional = optional,
    choices = schema.enum,
    items = schema.items and field("item", schema.items, false) or nil,
  }
end

--- avante's `param` of a tool's JSON Schema: required fields first, then the rest, by name.
function M.param(schema)
  local required = {}
  for _, name in ipairs(schema.required or {}) do
    required[name] = true
  end
  local names = vim.tbl_keys(schema.properties or {})
  table.sort(names, function(a, b)
    if required[a] ~= required[b] then
      return required[a] ~= nil
    end
    return a < b
  end)
  local fields = {}
  for _, name in ipairs(names) do
    table.insert(fields, field(name, schema.properties[name], not required[name]))
  end
  return { type = "table", fields = fields }
end

--- avante's custom tool for catalog entry `entry` (its interface: AvanteLLMTool in
--- lua/avante/types.lua of avante.nvim: func(input, opts) returning (result, error), or nil
--- and later opts.on_complete(result, error) when asynchronous).
function M.tool(entry)
  return {
    name = "lsp_agent_" .. entry.name,
    description = entry.description .. READ_ONLY,
    param = M.param(entry.inputSchema),
    returns = {
      { name = "result", description = "The answer: what the model reads, within its budget", type = "string" },
      { name = "error", description = "Why the call failed", type = "string", optional = true },
    },
    func = function(input, opts)
      if not (opts and opts.on_complete) then
        local answer, err = lsp_agent.call_sync(entry.name, input)
        return answer and answer.text, err
      end
      lsp_agent.call(entry.name, input, function(err, answer)
        opts.on_complete(answer and answer.text, err)
      end)
    end,
  }
end

--- avante's `custom_tools`: one per agent tool of the server.
function M.tools()
  return vim.tbl_map(M.tool, lsp_agent.catalog())
end

return M
