"""The walk's order as one string per path compares as the tuple of its parts did: in each
folder its files by name, then its subfolders by name."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lsp_agent.search.walk import walk_order

ROOT = Path("/w/root")
name = st.text(st.characters(min_codepoint=1, blacklist_characters="/"), min_size=1, max_size=4).filter(
    lambda n: n not in (".", "..")
)


def parts_order(path: Path) -> tuple[tuple[int, str], ...]:
    parts = path.relative_to(ROOT).parts
    return (*((1, p) for p in parts[:-1]), (0, parts[-1]))


@given(st.lists(st.lists(name, min_size=1, max_size=4), min_size=1, max_size=30, unique_by=tuple))
def test_one_string_per_path_sorts_as_its_parts(paths):
    files = [ROOT.joinpath(*parts) for parts in paths]
    assert sorted(files, key=lambda p: walk_order(p, ROOT)) == sorted(files, key=parts_order)


def test_a_folder_s_files_come_before_its_subfolders():
    files = [
        ROOT / "b" / "x.py",
        ROOT / "a.py",
        ROOT / "a" / "z.py",
        ROOT / "c.py",
        ROOT / "a" / "b" / "y.py",
    ]
    assert sorted(files, key=lambda p: walk_order(p, ROOT)) == [
        ROOT / "a.py", ROOT / "c.py", ROOT / "a" / "z.py", ROOT / "a" / "b" / "y.py", ROOT / "b" / "x.py"
    ]  # fmt: skip
