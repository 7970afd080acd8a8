"""The source files under a folder of the workspace, as a folder outline sees them: the files
ripgrep searches there (the search package's one walker: .gitignore, .ignore and .rgignore,
hidden entries skipped, symlinks not followed), those with a grammar by default.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from ..search import Prefetch, Query, Target, list_files, run_search
from ..search.walk import walk_files
from ..workspace import Workspace
from .languages import EXTENSIONS, FILENAMES, language_for


def source_files(
    workspace: Workspace,
    folder: Path,
    *,
    check: Callable[[], None] | None = None,
    wanted: Callable[[Path], bool] = lambda p: language_for(p) is not None,
    in_order: bool = True,
    globs: tuple[str, ...] = (),
) -> Iterator[Path]:
    """Resolved paths of the files under `folder` (resolved, inside the workspace) that
    `wanted` accepts (default: files with a grammar), each folder's files before its
    subfolders, by name; without `in_order`, as the walk lists them (sooner: the first
    before the walk ends). `globs` choose files as search's `glob` does."""
    root = workspace.confining_root(folder) or folder
    rel = folder.relative_to(root).as_posix()
    if in_order:  # only the files wanted are sorted (a monorepo lists twice as many)
        yield from list_files(root, ["" if rel == "." else rel], globs, check=check, keep=wanted)
        return
    yield from filter(wanted, walk_files(root, ["" if rel == "." else rel], globs, check=check))


def files_containing(
    workspace: Workspace,
    folders: list[Path],
    needle: str,
    *,
    ignore_case: bool,
    cancelled=lambda: False,
    prefetch: Prefetch | None = None,
) -> list[Path]:
    """The source files under `folders` whose text (an editor's buffer when open) contains
    `needle`, found by the search engine (ripgrep) rather than by parsing them; `prefetch`
    as run_search's."""
    globs = tuple(f"*{ext}" for ext in EXTENSIONS) + tuple(FILENAMES)
    targets = []
    for folder in folders:
        root = workspace.confining_root(folder) or folder
        rel = folder.relative_to(root).as_posix()
        targets.append(Target(root, ["" if rel == "." else rel]))
    query = Query(needle, fixed_strings=True, ignore_case=ignore_case, globs=globs)
    outcome = run_search(
        workspace, query, targets, keep_details=lambda *_: False, cancelled=cancelled, prefetch=prefetch
    )
    return [f.path for f in outcome.files if language_for(f.path) is not None]


def globbed(
    workspace: Workspace,
    targets: list[Path],
    globs: tuple[str, ...],
    *,
    check: Callable[[], None] | None = None,
) -> set[Path]:
    """The files under `targets` that ripgrep's `globs` choose, as search's `glob` does
    ('*.py' includes, '!*_test.py' excludes); a file named is kept, as ripgrep keeps it."""
    found: set[Path] = set()
    for target in targets:
        root = workspace.confining_root(target) or target
        rel = target.relative_to(root).as_posix()
        found.update(walk_files(root, ["" if rel == "." else rel], globs, check=check))
    return found
