"""A one-shot command's tool call, without the command line's parser: the Context it runs
with (the index a server saved, where it helps) and its answer. cli.run_tool calls it after
parsing; the head start (head_start.py) for a command given positionals only, with no
parser built at all (argparse and the tools' flags are a one-shot's slowest imports)."""

from __future__ import annotations

from functools import partial

from .config import Settings
from .errors import ArgumentError
from .tools import Context, call
from .workspace import Workspace

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Any

# Tools that answer from the symbol index a server saved for the roots, brought up to date
# first (see saved_index): they look in every file. Others would spend more loading it (a
# monorepo's: half a second) than they save.
INDEXED = {"definition", "overview"}
# Tools that take from the saved index the records of the files they look in (those whose
# stat vouches for them), made one at a time: search's enclosing symbols, find_symbol's
# definitions in the files holding the name, without parsing them.
RECORDS = {"search", "find_symbol"}


def tool_context(name: str, roots: list[str] | None, settings: Settings) -> Context:
    workspace = Workspace(roots)
    if name in INDEXED:
        from .syntax.index import saved_index

        return Context(workspace, settings, index=saved_index(workspace, current=True))
    if name in RECORDS:  # loaded when first used: while rg runs, or never for an answer of counts
        return Context(workspace, settings, index_later=partial(saved_records, workspace))
    return Context(workspace, settings)


def saved_records(workspace: Workspace):
    """The saved index for the roots, its records made one at a time as they are asked for."""
    from .syntax.index import saved_index

    return saved_index(workspace, lazily=True)


def answer(name: str, arguments: dict[str, Any], roots: list[str] | None, settings: Settings) -> dict:
    """The tool's answer; raises ArgumentError for arguments it refuses, ValueError for a
    root that is no folder."""
    return call(tool_context(name, roots, settings), name, arguments)


def plain(name: str, arguments: dict[str, Any], roots: list[str] | None) -> dict | None:
    """The answer to a call with the default settings; None when the arguments or the root
    are refused (the command line's parser then says why, in its words)."""
    try:
        return answer(name, arguments, roots, Settings())
    except (ArgumentError, ValueError):
        return None
