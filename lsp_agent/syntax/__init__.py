"""tree-sitter symbols: the language table, the parse cache, outlines and enclosing symbols.

language_for(path) -> "python" | … | None
outline(path, text) -> [Symbol]           nested, cached by (path, text.version)
enclosing_symbol(path, text, line) -> "Class/method" | None
enclosing_symbols(path, text, lines) -> {line: name path | None}
enclosing_lookup(path, text) -> (line -> name path | None)   keeps no text
line_symbols(path, text) -> LineSymbols   what labels search's match lines (a record makes the same)
"""

from .languages import EXTENSIONS, GRAMMARS, language_for
from .outline import (
    KINDS,
    LineSymbols,
    Symbol,
    enclosing_lookup,
    enclosing_symbol,
    enclosing_symbols,
    find_in_file,
    line_symbols,
    name_path_matcher,
    outline,
    walk,
)
from .parsing import PARSES

__all__ = [
    "EXTENSIONS",
    "GRAMMARS",
    "KINDS",
    "PARSES",
    "LineSymbols",
    "Symbol",
    "clear_caches",
    "enclosing_lookup",
    "enclosing_symbol",
    "enclosing_symbols",
    "find_in_file",
    "language_for",
    "line_symbols",
    "name_path_matcher",
    "outline",
    "walk",
]


def clear_caches() -> None:
    """Forget every cached tree and outline (for benchmarks measuring cold parses)."""
    from .outline import OUTLINES

    with OUTLINES._lock:
        OUTLINES._entries.clear()
    with PARSES._lock:
        PARSES._trees.clear()
        PARSES._bytes = 0
