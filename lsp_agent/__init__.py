"""lsp-agent: a language server that serves tools to AI coding agents."""

__version__ = "0.1.0"
