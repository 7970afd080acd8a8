"""The source files under a folder of the workspace, as a folder outline sees them.

Like ripgrep's defaults: .gitignore files are honoured (each applies below its own folder,
a deeper one overriding a shallower one), hidden entries and .git are skipped, and symlinks
are followed only to files that stay inside the workspace (never into folders: no cycles).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pathspec

from ..errors import Refusal
from ..search import Query, Target, run_search
from ..workspace import Workspace
from .languages import EXTENSIONS, FILENAMES, language_for

Ignore = tuple[str, pathspec.GitIgnoreSpec]  # a folder, and the rules of its .gitignore


def _gitignore(workspace: Workspace, folder: str) -> Ignore | None:
    path = Path(folder, ".gitignore")
    if not path.is_file():
        return None
    try:
        lines = workspace.text(path).content.splitlines()
    except Refusal:
        return None
    return folder, pathspec.GitIgnoreSpec.from_lines(lines)


def ignored(path: str, is_dir: bool, rules: list[Ignore]) -> bool:
    """Whether the innermost .gitignore with a rule about `path` (inside each rule's
    folder) excludes it."""
    for base, spec in reversed(rules):
        rel = path[len(base) + 1 :].replace(os.sep, "/") + ("/" if is_dir else "")
        verdict = spec.check_file(rel).include
        if verdict is not None:
            return verdict
    return False


def source_files(
    workspace: Workspace,
    folder: Path,
    *,
    check: Callable[[], None] | None = None,
    wanted: Callable[[str | Path], bool] = lambda p: language_for(p) is not None,
) -> Iterator[Path]:
    """Resolved paths of the files under `folder` (resolved, inside the workspace) that
    `wanted` accepts (default: files with a grammar), in a stable sorted order."""
    root = workspace.root_of(folder) or folder
    rules: list[Ignore] = []
    for ancestor in reversed(folder.relative_to(root).parents):  # the folder's own: in _walk
        if (rule := _gitignore(workspace, str(root / ancestor))) is not None:
            rules.append(rule)
    yield from _walk(workspace, str(folder), rules, check, wanted)


def _walk(workspace: Workspace, folder: str, rules: list[Ignore], check, wanted) -> Iterator[Path]:
    """Paths are strings until a file is kept: pathlib would cost more than the walk."""
    if check is not None:
        check()
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda e: e.name)
    except OSError:
        return
    if any(e.name == ".gitignore" for e in entries) and (rule := _gitignore(workspace, folder)) is not None:
        rules = [*rules, rule]
    files, folders = [], []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_symlink():
                target = Path(entry.path).resolve()
                if not target.is_file() or workspace.root_of(target) is None:
                    continue  # no symlinked folders, nothing outside the workspace
                if not ignored(entry.path, False, rules) and wanted(entry.path):
                    files.append(target)
            elif entry.is_dir(follow_symlinks=False):
                if not ignored(entry.path, True, rules):
                    folders.append(entry.path)
            elif (
                entry.is_file(follow_symlinks=False)
                and wanted(entry.path)
                and not ignored(entry.path, False, rules)
            ):
                files.append(Path(entry.path))
        except OSError:
            continue
    yield from files
    for sub in folders:
        yield from _walk(workspace, sub, rules, check, wanted)


def files_containing(
    workspace: Workspace, folders: list[Path], needle: str, *, ignore_case: bool, cancelled=lambda: False
) -> list[Path]:
    """The source files under `folders` whose text (an editor's buffer when open) contains
    `needle`, found by the search engine (ripgrep) rather than by parsing them."""
    globs = tuple(f"*{ext}" for ext in EXTENSIONS) + tuple(FILENAMES)
    targets = []
    for folder in folders:
        root = workspace.root_of(folder) or folder
        rel = folder.relative_to(root).as_posix()
        targets.append(Target(root, ["" if rel == "." else rel]))
    query = Query(needle, fixed_strings=True, ignore_case=ignore_case, globs=globs)
    outcome = run_search(workspace, query, targets, keep_details=lambda *_: False, cancelled=cancelled)
    return [f.path for f in outcome.files if language_for(f.path) is not None]
