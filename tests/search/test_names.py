"""A file rg names is known by its absolute path as a string, joined without a Path: the
string must be the one the Path `base / name` would give, whatever the name's parts."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from lsp_agent.search.ripgrep import under

PARTS = st.sampled_from(["a", "b.py", ".", "..", "", ".git", "x y", "é", "-", "./"])


@given(
    base=st.sampled_from(["/", "/r", "/r/s", "/r/.s"]), parts=st.lists(PARTS, max_size=6), dot=st.booleans()
)
def test_a_name_is_joined_as_its_path_would_be(base, parts, dot):
    name = ("./" if dot else "") + "/".join(parts)
    assert under(base, name) == str(Path(base) / name.removeprefix("./"))


def test_the_usual_name_is_joined_without_a_path():
    assert under("/r", "./pkg/mod.py") == "/r/pkg/mod.py"
    assert under("/", "./mod.py") == "/mod.py"
