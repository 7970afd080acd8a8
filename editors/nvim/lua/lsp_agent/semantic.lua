-- The editor as lsp-agent's semantic source: the server asks `lspAgent/semantic` with a plain
-- LSP request ({ method, params }: references, definition, implementation, call hierarchy,
-- rename); Neovim asks the other clients attached to the buffer (the user's own language
-- servers), so that no second copy of them runs beside Neovim's. The reply is
-- { result, source }: the first non-empty result and "Neovim's attached clients: <name>", or
-- source = null when no attached client supports the method (the server then asks its own).

local M = {}

M.method = "lspAgent/semantic"
M.capabilities = { experimental = { lspAgent = { semantic = true } } }

-- The client that gave a call hierarchy item, by the item (follow-ups go back to it).
local givers = {}

local function item_key(item)
  local at = type(item) == "table" and item.selectionRange and item.selectionRange.start or {}
  return ("%s:%s:%s:%s"):format(item and item.uri, item and item.name, at.line, at.character)
end

local function buffer_of(params)
  local uri = params.textDocument and params.textDocument.uri or (params.item and params.item.uri)
  if type(uri) ~= "string" then
    return nil
  end
  local bufnr = vim.uri_to_bufnr(uri)
  return vim.api.nvim_buf_is_loaded(bufnr) and bufnr or nil
end

--- The clients that may answer `method` about `params`, lsp-agent itself left out.
local function candidates(method, params, bufnr)
  if params.item then
    local giver = vim.lsp.get_client_by_id(givers[item_key(params.item)] or -1)
    if giver then
      return { giver }
    end
  end
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client.name ~= require("lsp_agent").name and client:supports_method(method, bufnr) then
      table.insert(found, client)
    end
  end
  return found
end

--- One request to `client`, waited for without blocking Neovim when the handler runs in a
--- coroutine (as Neovim runs a server's requests), else synchronously.
local function ask(client, method, params, bufnr)
  local co = coroutine.running()
  if co and coroutine.isyieldable() then
    local ok = client:request(method, params, function(err, result)
      coroutine.resume(co, err, result)
    end, bufnr)
    if not ok then
      return { message = "the client has stopped" }, nil
    end
    return coroutine.yield()
  end
  local response = client:request_sync(method, params, 30000, bufnr)
  if not response then
    return { message = "no answer within 30 s" }, nil
  end
  return response.err, response.result
end

local function empty(result)
  return result == nil or result == vim.NIL or (type(result) == "table" and next(result) == nil)
end

--- The handler of `lspAgent/semantic` (a server request: returns result, err).
function M.answer(_, request)
  local method, params = request.method, request.params
  if type(method) ~= "string" or type(params) ~= "table" then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InvalidParams, "{ method, params } expected")
  end
  local bufnr = buffer_of(params)
  local reply = { result = vim.NIL, source = vim.NIL }
  local errors = {}
  for _, client in ipairs(bufnr and candidates(method, params, bufnr) or {}) do
    local err, result = ask(client, method, params, bufnr)
    if err then
      table.insert(errors, ("%s: %s"):format(client.name, err.message or vim.inspect(err)))
    else
      if reply.source == vim.NIL or not empty(result) then
        reply = { result = result == nil and vim.NIL or result, source = "Neovim's attached clients: " .. client.name }
      end
      if method == "textDocument/prepareCallHierarchy" or method:match("^callHierarchy/") then
        for _, entry in ipairs(type(result) == "table" and result or {}) do
          givers[item_key(entry.from or entry.to or entry)] = client.id
        end
      end
      if not empty(result) then
        break
      end
    end
  end
  if reply.source == vim.NIL and #errors > 0 then
    return nil, vim.lsp.rpc_response_error(vim.lsp.protocol.ErrorCodes.InternalError, table.concat(errors, "; "))
  end
  return reply
end

return M
