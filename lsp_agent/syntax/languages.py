"""Which language a file is in, and that language's grammar and definitions query.

Grammars come from the official per-language wheels (`tree-sitter-python`, …) and are loaded
on first use, so importing the server loads none of them. Queries live in
`lsp_agent/grammars/<language>.scm` (shared parts in their own files: QUERY_FILES) and are
read from the installed package.
"""

from __future__ import annotations

import threading
from functools import cache
from importlib import import_module, resources
from pathlib import Path

# language -> (module of its grammar wheel, function returning the language pointer)
GRAMMARS: dict[str, tuple[str, str]] = {
    "python": ("tree_sitter_python", "language"),
    "javascript": ("tree_sitter_javascript", "language"),
    "typescript": ("tree_sitter_typescript", "language_typescript"),
    "tsx": ("tree_sitter_typescript", "language_tsx"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "c": ("tree_sitter_c", "language"),
    "cpp": ("tree_sitter_cpp", "language"),
    "csharp": ("tree_sitter_c_sharp", "language"),
    "ruby": ("tree_sitter_ruby", "language"),
    "php": ("tree_sitter_php", "language_php"),  # PHP inside HTML, as .php files are written
    "bash": ("tree_sitter_bash", "language"),
}

EXTENSIONS: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".pyw": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".c": "c",
    # .h goes to C++: its grammar reads C headers too, and many C++ projects use .h.
    ".h": "cpp",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".c++": "cpp",
    ".hh": "cpp",
    ".hpp": "cpp",
    ".hxx": "cpp",
    ".h++": "cpp",
    ".ipp": "cpp",
    ".inl": "cpp",
    ".cs": "csharp",
    ".rb": "ruby",
    ".rake": "ruby",
    ".gemspec": "ruby",
    ".php": "php",
    ".phtml": "php",
    ".sh": "bash",
    ".bash": "bash",
}

FILENAMES: dict[str, str] = {
    "Rakefile": "ruby",
    "Gemfile": "ruby",
    ".bashrc": "bash",
    ".bash_profile": "bash",
    ".bash_aliases": "bash",
}

_lock = threading.Lock()


def language_for(path: str | Path) -> str | None:
    """The language of `path` from its file name or extension; None when unsupported."""
    name = Path(path).name
    if name in FILENAMES:
        return FILENAMES[name]
    return EXTENSIONS.get(Path(name).suffix.lower())


@cache
def _grammar(language: str):
    import tree_sitter

    module_name, function = GRAMMARS[language]
    return tree_sitter.Language(getattr(import_module(module_name), function)())


def grammar(language: str):
    """The tree_sitter.Language of `language`, loaded from its wheel on first use."""
    with _lock:  # functools.cache does not stop two threads loading the same grammar at once
        return _grammar(language)


# Languages whose query is built from several files: what they share is written once.
QUERY_FILES: dict[str, tuple[str, ...]] = {
    "javascript": ("ecmascript", "javascript"),
    "typescript": ("ecmascript", "typescript"),
    "tsx": ("ecmascript", "typescript"),
    "cpp": ("c", "cpp"),
}


@cache
def _query(language: str, suffix: str = ""):
    import tree_sitter

    folder = resources.files("lsp_agent").joinpath("grammars")
    names = QUERY_FILES.get(language, (language,))
    files = [folder.joinpath(f"{name}{suffix}.scm") for name in names]
    source = "\n".join(f.read_text("utf-8") for f in files if f.is_file())
    return tree_sitter.Query(_grammar(language), source) if source else None


def query(language: str):
    """The compiled definitions query of `language`, from lsp_agent/grammars/<language>.scm
    (or the files QUERY_FILES names)."""
    with _lock:
        return _query(language)


def references_query(language: str):
    """The compiled query of the roles of names in `language` (calls, imports, members, …),
    from lsp_agent/grammars/<language>.references.scm; None for a language without one."""
    with _lock:
        return _query(language, ".references")
