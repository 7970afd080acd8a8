"""Beneath opens many files of a tree as open_beneath opens each (no link on the way, nothing
outside the root) while keeping the folders on the way open: whatever the tree and the order
of the paths asked, each open succeeds or fails as open_beneath's does and reaches the same
file, and no more descriptors stay open than the tree is deep."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.workspace import Beneath, open_beneath

NAMES = ("a", "b", "a-b", "a.b", "link_dir", "link_file", "link_out", "f.py", "..", ".", "")


def tree(base: Path) -> Path:
    """root/ with folders, files and links (in, out, to a folder, to a file); secret/ beside it."""
    root, outside = base / "root", base / "secret"
    outside.mkdir()
    (outside / "f.py").write_text("secret\n")
    for folder in ("a", "a/b", "a/a-b", "a.b", "b", "a/b/a"):
        (root / folder).mkdir(parents=True)
        (root / folder / "f.py").write_text(f"{folder}\n")
    (root / "a" / "link_dir").symlink_to(root / "b")
    (root / "a" / "b" / "link_file").symlink_to(root / "a" / "f.py")
    (root / "link_out").symlink_to(outside)
    (root / "b" / "link_out").symlink_to(outside / "f.py")
    return root


def identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def opened(open_one, rel: str) -> tuple[int, int] | str:
    try:
        fd = open_one(rel)
    except OSError as exc:
        return f"error {exc.errno}"
    try:
        return identity(fd)
    finally:
        os.close(fd)


@pytest.fixture(scope="module")
def root(tmp_path_factory) -> Path:
    return tree(tmp_path_factory.mktemp("beneath"))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4).map("/".join), min_size=1, max_size=12)
)
def test_each_open_is_open_beneath_s(root: Path, rels: list[str]) -> None:
    """… and `reaches` says, without opening, whether open would open."""
    with Beneath(root) as beneath:
        for rel in rels:
            if rel.strip("/.") == "":  # no file named: open_beneath would open the root itself
                continue
            found = opened(beneath.open, rel)
            assert found == opened(lambda r: open_beneath(root, r), rel), rel
            assert len(beneath.chain) <= rel.count("/") + 1
            assert reached(beneath, rel) == (not isinstance(found, str)), rel
            if beneath.last is not None:  # the folder a file beside the last one is taken from
                folders = [p for p in beneath.last.split("/") if p not in ("", ".")]
                assert [name for name, _ in beneath.chain[1:]] == folders, rel


def reached(beneath: Beneath, rel: str) -> bool:
    try:
        return beneath.reaches(rel)
    except OSError:
        return False


def test_a_link_on_the_way_or_at_the_end_is_refused_and_the_files_beside_it_still_open(root: Path) -> None:
    with Beneath(root) as beneath:
        with pytest.raises(OSError):
            beneath.open("a/link_dir/f.py")
        with pytest.raises(OSError):
            beneath.open("a/b/link_file")
        with pytest.raises(OSError):
            beneath.open("link_out/f.py")
        with pytest.raises(OSError):
            beneath.open("a/../link_out/f.py")
        fd = beneath.open("a/b/f.py")
        assert os.read(fd, 100) == b"a/b\n"
        os.close(fd)


def test_every_folder_it_opened_is_closed_on_leaving(root: Path) -> None:
    before = len(os.listdir("/proc/self/fd"))
    with Beneath(root) as beneath:
        for rel in ("a/b/a/f.py", "a/f.py", "b/f.py", "a/b/a/f.py"):
            os.close(beneath.open(rel))
        assert len(os.listdir("/proc/self/fd")) > before
    assert len(os.listdir("/proc/self/fd")) == before
