"""Language support as data: one folder per language (language.json and its tree-sitter
queries; their test fixtures are in tests/fixtures/grammars). This file only makes the folder the package lsp_agent.grammars, so that
importlib.resources finds it from an editable install as from a wheel."""
