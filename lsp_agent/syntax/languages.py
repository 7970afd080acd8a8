"""Which language a file is in, and that language's grammar and definitions query.

The table is data: each folder of grammars/ (shipped as the package lsp_agent.grammars) is
one language, described by its `language.json`:

- `grammar`: the official grammar wheel serving it (`package` on PyPI, `module`, and the
  `function` returning the language pointer);
- `extensions` and `filenames` of its files;
- `queries`: the query files whose concatenation is its definitions query, relative to the
  folder (`../c/definitions.scm`: what C++ shares with C is written once);
- `references`: the query files of the roles of names (calls, imports, members, bases, type
  uses; see syntax/references.py), the same way;
- `leading`: node types written before a definition, as its siblings, that belong to it
  (decorators, attributes);
- `opaque`: node types (or supertypes, standing for all their subtypes) whose subtrees never
  hold a definition when they parse without errors, such as Python's expressions: a full
  query skips them (see outline.py) instead of walking every node of the tree;

Adding a language is adding a folder. Grammars are loaded on first use, so importing the
server loads none of them.
"""

from __future__ import annotations

import json
import os
import posixpath
import sys
import threading
from dataclasses import dataclass
from functools import cache
from importlib import import_module
from pathlib import Path

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from importlib.abc import Traversable

    import tree_sitter


@dataclass(frozen=True)
class Language:
    """A language of the table (its folder's language.json)."""

    name: str
    package: str  # the grammar's distribution on PyPI
    module: str
    function: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...]
    queries: tuple[str, ...]  # paths under grammars/
    references: tuple[str, ...]  # the query files of the roles of names (calls, imports, …)
    leading: frozenset[str]
    opaque: frozenset[str]


def grammars_folder() -> Traversable:
    """The package's grammars/ folder: where its __init__ is, as importlib.resources.files
    finds a package on disk (whose import, with tempfile, shutil and zipfile, is a one-shot
    command's milliseconds)."""
    return Path(import_module("lsp_agent.grammars").__file__ or "").parent


def _read_table() -> dict[str, Language]:
    table = {}
    for folder in sorted(grammars_folder().iterdir(), key=lambda f: f.name):
        entry = folder.joinpath("language.json")
        if not entry.is_file():
            continue
        data = json.loads(entry.read_text("utf-8"))
        grammar = data["grammar"]
        table[folder.name] = Language(
            name=folder.name,
            package=grammar["package"],
            module=grammar["module"],
            function=grammar["function"],
            extensions=tuple(data.get("extensions", ())),
            filenames=tuple(data.get("filenames", ())),
            queries=tuple(posixpath.normpath(f"{folder.name}/{q}") for q in data["queries"]),
            references=tuple(posixpath.normpath(f"{folder.name}/{q}") for q in data.get("references", ())),
            leading=frozenset(data.get("leading", ())),
            opaque=frozenset(data.get("opaque", ())),
        )
    return table


GRAMMARS: dict[str, Language] = _read_table()
EXTENSIONS: dict[str, str] = {ext: lang.name for lang in GRAMMARS.values() for ext in lang.extensions}
FILENAMES: dict[str, str] = {name: lang.name for lang in GRAMMARS.values() for name in lang.filenames}

_lock = threading.Lock()


def language_for(path: str | Path) -> str | None:
    """The language of `path` from its file name or extension; None when unsupported."""
    name = os.path.basename(path)  # not pathlib: the index asks for every file of a workspace
    if name in FILENAMES:
        return FILENAMES[name]
    dot = name.rfind(".")
    return EXTENSIONS.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None


@cache
def _grammar(language: str) -> tree_sitter.Language:
    import tree_sitter

    entry = GRAMMARS[language]
    return tree_sitter.Language(getattr(import_module(entry.module), entry.function)())


def grammar(language: str) -> tree_sitter.Language:
    """The tree_sitter.Language of `language`, loaded from its wheel on first use."""
    with _lock:  # functools.cache does not stop two threads loading the same grammar at once
        return _grammar(language)


def query_source(language: str) -> str:
    folder = grammars_folder()
    return "\n".join(folder.joinpath(*q.split("/")).read_text("utf-8") for q in GRAMMARS[language].queries)


@cache
def _query(language: str) -> tree_sitter.Query:
    import tree_sitter

    return tree_sitter.Query(_grammar(language), query_source(language))


def query(language: str) -> tree_sitter.Query:
    """The compiled definitions query of `language` (its folder's query files, joined)."""
    with _lock:
        return _query(language)


@cache
def _references_query(language: str) -> tree_sitter.Query | None:
    import tree_sitter

    files = GRAMMARS[language].references
    if not files:
        return None
    source = "\n".join(grammars_folder().joinpath(*q.split("/")).read_text("utf-8") for q in files)
    return tree_sitter.Query(_grammar(language), source)


def references_query(language: str) -> tree_sitter.Query | None:
    """The compiled query of the roles of names in `language` (its folder's references
    files, joined); None for a language without one."""
    with _lock:
        return _references_query(language)


@cache  # asked by the index's grammar versions and by the use tables' stamps alike
def installed_version(package: str) -> str:
    """The installed version of a distribution: from the name of the first `.dist-info`
    folder on sys.path that is its (`name-version.dist-info`, as a wheel installs it), as
    importlib.metadata finds it, without its imports (a one-shot command's largest);
    importlib.metadata's answer for any other kind of install; "?" when not installed."""
    prefix = package.replace("-", "_").replace(".", "_").lower() + "-"
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:
            continue
        for name in names:
            if name.lower().startswith(prefix):  # a wheel's dist-info: `_` for `-` and `.` in the name
                if name.endswith(".dist-info"):
                    return name[len(prefix) : -len(".dist-info")]
                if name.endswith(".egg-info"):
                    return metadata_version(package)
    return metadata_version(package)


def metadata_version(package: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"
