"""How a path is shown: relative to its root, as os.path.relpath makes it, for any path
under one root or several (the quick way is taken for normalized paths only)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lsp_agent.workspace import Workspace, escape_name

NAMES = st.sampled_from(["a", "b", ".", "..", "", ".git", "x.py", "..y", "名", "a b"])


def shown(ws: Workspace, path: Path) -> str:
    """What display showed before it had a quick way: relpath from the root holding it."""
    root = ws.root_of(path)
    if root is None:
        return escape_name(str(path))
    rel = os.path.relpath(path, root).replace(os.sep, "/")
    return escape_name(f"{root.name}/{rel}" if len(ws.roots) > 1 else rel)


@given(parts=st.lists(NAMES, max_size=6), several=st.booleans(), inner=st.booleans())
def test_a_path_is_shown_as_relpath_shows_it(tmp_path_factory, parts, several, inner):
    base = tmp_path_factory.getbasetemp() / "display"
    (base / "root" / "in").mkdir(parents=True, exist_ok=True)
    (base / "other").mkdir(exist_ok=True)
    roots = [base / "root"] + ([base / "other"] if several else [])
    ws = Workspace(roots)
    start = ws.roots[0] / "in" if inner else ws.roots[0]
    path = Path(str(start) + "".join("/" + p for p in parts))
    assert ws.display(path) == shown(ws, path)
    assert ws.display(ws.roots[0]) == (f"{ws.roots[0].name}/." if several else ".")
