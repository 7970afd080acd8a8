"""Whatever a language server answers, the semantic source keeps to the workspace: a
property test over arbitrary JSON where locations belong, and the UTF-16 columns of LSP."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.semantic import (
    Answer,
    Location,
    Semantic,
    Unavailable,
    in_order,
    index_to_utf16,
    utf16_to_index,
)
from lsp_agent.workspace import Workspace

ROOT = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
INSIDE = (ROOT / "app" / "views.py").resolve()
SOURCE = Semantic(Workspace([ROOT]), Settings())

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
uris = st.sampled_from(
    [
        INSIDE.as_uri(),
        (ROOT / "app" / "missing.py").as_uri(),
        (ROOT.parent / "secret.py").as_uri(),
        INSIDE.as_uri() + "/../../../../etc/passwd",
        "file:///etc/passwd",
        "file://host/share/x.py",
        "untitled:Untitled-1",
        "file:",
        "",
    ]
) | st.text(max_size=30)
numbers = st.integers(min_value=-3, max_value=40) | st.just(2**40)
positions = st.fixed_dictionaries({"line": numbers, "character": numbers}) | json_values
spans = st.fixed_dictionaries({"start": positions, "end": positions}) | json_values
locations = (
    st.fixed_dictionaries({"uri": uris, "range": spans})
    | st.fixed_dictionaries({"targetUri": uris, "targetSelectionRange": spans, "targetRange": spans})
    | json_values
)


@settings(max_examples=200, deadline=None)
@given(locations)
def test_any_answer_is_a_workspace_location_a_count_or_a_reason(item):
    answer = Answer("fake")
    try:
        SOURCE.add(answer, item, "fake")
    except Unavailable as reason:
        assert str(reason).startswith("fake ")
        return
    assert answer.dropped + answer.invalid + len(answer.locations) == 1
    for loc in answer.locations:
        assert isinstance(loc, Location)
        assert loc.path == INSIDE  # the one file inside the workspace among the URIs
        assert 1 <= loc.line <= SOURCE.ws.text(loc.path).line_count


@given(st.text(max_size=40), st.integers(min_value=0, max_value=45))
def test_utf16_columns_round_trip(line, index):
    index = min(index, len(line))
    assert utf16_to_index(line, index_to_utf16(line, index)) == index


def test_a_column_after_an_astral_character_counts_two_units():
    assert index_to_utf16("😀x", 1) == 2
    assert utf16_to_index("😀x", 2) == 1


def units_walked(line: str, offset: int) -> int:
    """The first index whose prefix holds at least `offset` UTF-16 units, else the line's end."""
    for index in range(len(line) + 1):
        if len(line[:index].encode("utf-16-le", "surrogatepass")) // 2 >= offset:
            return index
    return len(line)


@given(st.text(max_size=40) | st.text(st.characters(max_codepoint=127), max_size=40), st.integers(-5, 90))
def test_utf16_to_index_is_the_walk_for_ascii_lines_and_any_other(line, offset):
    assert utf16_to_index(line, offset) == units_walked(line, offset)


names = st.sampled_from(["a", "a-b", "a.b", "b", "A", "a b", "é"])
locations = st.builds(
    Location,
    st.lists(names, min_size=1, max_size=4).map(lambda parts: Path("/ws", *parts)),
    *[st.integers(1, 3)] * 4,
)


@given(st.lists(locations, max_size=30))
def test_in_order_is_locations_sorted_as_they_compare(found):
    assert in_order(found) == sorted(set(found))
