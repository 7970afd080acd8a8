"""The paths a call names, as ripgrep targets: grouped by workspace root, each refused path
noted. Shared by every tool that searches (search, references, definition, find_symbol)."""

from __future__ import annotations

import stat
from pathlib import Path

from ..errors import Refusal
from ..workspace import Workspace, escape_name
from .model import Target


def targets_of(ws: Workspace, paths: list[str] | None) -> tuple[list[Target], list[str]]:
    """The searched paths grouped by root, and a note for each path left out."""
    chosen: dict[Path, list[str]] = {}
    left_out: list[str] = []
    if not paths:  # each root, beneath the outermost root holding it
        for each in ws.roots:
            outer = ws.confining_root(each) or each
            rel = each.relative_to(outer).as_posix()
            chosen.setdefault(outer, []).append("" if rel == "." else rel)
        return [Target(outer, sorted(set(rels))) for outer, rels in chosen.items()], []
    for raw in paths:
        try:
            real = ws.resolve(raw)
        except Refusal as refusal:
            left_out.append(refusal.message)
            continue
        try:
            mode: int | None = real.stat().st_mode
        except OSError:
            mode = None
        if (mode is None or not (stat.S_ISDIR(mode) or stat.S_ISREG(mode))) and ws.open_text(real) is None:
            # an unsaved new buffer is searched, as read reads it; a FIFO, socket or device is
            # never opened (a reader could block on it forever)
            why = "does not exist" if mode is None else "is not a regular file (a device, socket or pipe)"
            left_out.append(f"{escape_name(raw)} {why}.")
            continue
        root = ws.confining_root(real)
        assert root is not None  # resolve() keeps paths inside the roots
        rel = real.relative_to(root).as_posix()
        chosen.setdefault(root, []).append("" if rel == "." else rel)
    targets = []
    for root, rels in chosen.items():
        # all given to rg, as a user would: a path inside another is searched as named (an ignored
        # folder named explicitly is searched); a file reached twice is reported once
        targets.append(Target(root, sorted(set(rels))))
    if not targets:
        raise Refusal(
            "no_paths",
            "None of the paths can be searched: "
            + " ".join(left_out)
            + " Give paths of files or folders, relative to the workspace root.",
        )
    return targets, left_out
