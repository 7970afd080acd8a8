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

local function file_of(params)
  local uri = params.textDocument and params.textDocument.uri or (params.item and params.item.uri)
  return type(uri) == "string" and vim.startswith(uri, "file:") and vim.uri_to_fname(uri) or nil
end

local function fits(client, method, bufnr, fname)
  if client.name == require("lsp_agent").name or not client:supports_method(method, bufnr) then
    return false
  end
  if bufnr then
    return true
  end
  -- A file no buffer holds: the clients whose root holds it and whose filetypes take it.
  local filetypes = client.config.filetypes
  local root = client.root_dir
  return (root == nil or vim.startswith(fname, root .. "/"))
    and (filetypes == nil or vim.tbl_contains(filetypes, vim.filetype.match({ filename = fname }) or ""))
end

--- The clients that may answer `method` about `params`, lsp-agent itself left out: those
--- attached to the file's buffer, or when no buffer holds it those serving its root.
local function candidates(method, params, bufnr, fname)
  if params.item then
    local giver = vim.lsp.get_client_by_id(givers[item_key(params.item)] or -1)
    if giver then
      return { giver }
    end
  end
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients(bufnr and { bufnr = bufnr } or nil)) do
    if fits(client, method, bufnr, fname) then
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
  local fname = file_of(params)
  local bufnr = fname and vim.fn.bufnr(fname) or -1
  bufnr = bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) and bufnr or nil
  local reply = { result = vim.NIL, source = vim.NIL }
  local errors = {}
  for _, client in ipairs(fname and candidates(method, params, bufnr, fname) or {}) do
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
