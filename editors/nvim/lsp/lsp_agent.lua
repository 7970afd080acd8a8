-- The server for Neovim 0.11's vim.lsp.enable("lsp_agent"): with this plugin on 'runtimepath',
-- that one line attaches lsp-agent to the buffers of a workspace, with setup()'s defaults
-- (the command `lsp-agent serve` from PATH). Change them with vim.lsp.config("lsp_agent", {...})
-- or setup({...}).
return require("lsp_agent").lsp_config()
