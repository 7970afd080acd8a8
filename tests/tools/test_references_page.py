"""references' page is sized from its uses' line sizes added up and checked by drawing, not
by drawing at each step of a bisection: the page, its cut width and the next page's size must
be what the bisection over real drawings finds, for any uses and budget."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.budget import fits, largest_fit, largest_fit_near
from lsp_agent.errors import Refusal
from lsp_agent.tools import references as references_tool
from lsp_agent.tools.references import (
    STAGES,
    Reference,
    Uses,
    answer_order,
    one_line,
    page_of,
    prefix_sizes,
)

ROLE = st.sampled_from(["definition", "call", "import", "use", "comment", "string"])
REF = st.builds(
    Reference,
    path=st.sampled_from(["a.py", "pkg/b.py", "notes.txt"]),
    line=st.integers(1, 5000),
    column=st.integers(1, 80),
    role=ROLE,
    symbol=st.sampled_from([None, "Model", "Model/save"]),
    text=st.text("ab …x(", max_size=90),
    match=st.sampled_from(["name", "receiver", "definition"]),
    source=st.sampled_from(["name", "name", "basedpyright"]),
)


def bisected(uses: Uses, start: int, most: int) -> int:
    """page_size as it was: a drawing at each step of the bisection."""
    more = f"more: the next page with offset={len(uses.chosen)} limit={len(uses.chosen)}"

    def draw(n: int) -> list[str]:
        return uses.render(start, start + n, STAGES[0], one_line(uses.chosen[start : start + n]), more)

    return largest_fit(1, most, lambda n: fits(draw(n), uses.budget))


@settings(max_examples=150, deadline=None)
@given(refs=st.lists(REF, min_size=1, max_size=60), budget=st.integers(200, 4000), start=st.integers(0, 59))
def test_a_page_holds_as_many_uses_as_the_bisection_over_drawings_finds(refs, budget, start):
    chosen = sorted(set(refs), key=answer_order)
    start = min(start, len(chosen) - 1)
    uses = Uses("save", chosen, ["a note"], 0, len(chosen), budget)
    most = len(chosen) - start
    assert uses.page_size(start, most) == bisected(uses, start, most)


def page_or_refusal(uses: Uses) -> dict | str:
    try:
        return page_of(uses)
    except Refusal as refused:
        return refused.message


@settings(max_examples=200, deadline=None)
@given(
    refs=st.lists(REF, min_size=1, max_size=60),
    budget=st.integers(150, 3000),
    offset=st.integers(0, 59),
    limit=st.one_of(st.none(), st.integers(1, 60)),
)
def test_the_page_is_the_one_drawn_at_each_step_of_the_bisections(refs, budget, offset, limit):
    chosen = sorted(set(refs), key=answer_order)
    offset = min(offset, len(chosen) - 1)
    end = len(chosen) if limit is None else min(len(chosen), offset + limit)
    uses = Uses("save", chosen, ["a note"], offset, end, budget)
    guessed = page_or_refusal(uses)
    with pytest.MonkeyPatch.context() as patch:  # no guesses: every step drawn, as before
        patch.setattr(references_tool.Uses, "guess", lambda *arguments: None)
        patch.setattr(references_tool, "width_guess", lambda *arguments: None)
        drawn = page_or_refusal(uses)
    assert guessed == drawn
    if isinstance(guessed, dict):
        assert len(guessed["text"]) <= budget


def test_sizes_added_up_are_the_sizes_drawn_for_every_prefix():
    chosen = sorted(
        [
            Reference("a.py", 3, 1, "definition", "Model", "def save(self):", "definition"),
            Reference("a.py", 9, 5, "call", "Model/run", "self.save()", "receiver"),
            Reference("b.py", 2, 5, "call", None, "m.save() …", "name"),
            Reference("b.py", 7, 1, "comment", None, "# save it", "name"),
        ],
        key=answer_order,
    )
    sizes = prefix_sizes(chosen)
    for n in range(1, len(chosen) + 1):
        assert sizes[n] == len("\n".join(one_line(chosen[:n])))


@given(hi=st.integers(0, 300), cut=st.integers(0, 300), guess=st.one_of(st.none(), st.integers(-5, 305)))
def test_a_guess_never_changes_the_largest_fit(hi, cut, guess):
    def under(n: int) -> bool:
        return n <= cut

    assert largest_fit_near(0, hi, under, guess) == largest_fit(0, hi, under)
