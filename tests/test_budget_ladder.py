"""The ladder's shared pieces (budget.py), on their own: what every shortening answer and
every fair split of one budget relies on."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_agent.budget import (
    MIN_WIDTH,
    cut_line,
    first_stage,
    numbers,
    page_end,
    page_size,
    rows_that_fit,
    share_fairly,
    size,
    top_counts,
    widest_cut,
)
from lsp_agent.errors import Refusal


@given(room=st.integers(0, 5_000), wants=st.lists(st.integers(0, 3_000), max_size=12))
def test_a_fair_share_fits_the_room_and_leaves_what_a_short_item_does_not_use(room, wants):
    order = sorted(range(len(wants)), key=lambda k: wants[k])
    got: dict[int, int] = {}

    def take(k: int, share: int) -> int:
        got[k] = min(wants[k], share)
        return got[k]

    share_fairly(room, order, take)
    assert sum(got.values()) <= room
    if sum(wants) <= room:
        assert got == dict(enumerate(wants))  # all fit: everyone whole
    else:
        cut = [k for k in got if got[k] < wants[k]]
        whole = [got[k] for k in got if k not in cut]
        assert cut  # something was cut; whoever was, got as much as any whole one (up to rounding)
        assert min(got[k] for k in cut) >= max(whole, default=0) - 1
        assert max(got[k] for k in cut) - min(got[k] for k in cut) <= 1  # equal shares, up to rounding
        assert sum(got.values()) >= room - len(wants)  # and the room is used, up to rounding


def test_the_first_stage_that_fits_wins_and_a_stage_may_not_apply():
    stages = [lambda: ["x" * 50], lambda: None, lambda: ["short"], lambda: ["s"]]
    assert first_stage(stages, 10) == (2, ["short"])
    with pytest.raises(Refusal) as refused:
        first_stage(stages[:2], 10)
    assert refused.value.code == "budget_too_small" and "use at least 50" in refused.value.message


@given(st.integers(MIN_WIDTH, 200), st.integers(40, 400))
def test_the_widest_cut_is_the_widest_that_fits(widest, budget):
    text = "y" * widest

    def draw(width: int) -> list[str]:
        return ["head", cut_line(text, width)]

    width = widest_cut(draw, widest, budget)
    if width is None:
        assert widest <= MIN_WIDTH or size(draw(MIN_WIDTH)) > budget
    else:
        assert MIN_WIDTH <= width < widest and size(draw(width)) <= budget
        assert width == widest - 1 or size(draw(width + 1)) > budget


def test_a_cut_line_says_it_was_cut_and_a_whole_one_does_not():
    assert cut_line("abcdefghij", 5) == "abcd…"
    assert cut_line("whole…", None) == "whole\\u2026"  # only cut lines end in "…"


def test_pages_numbers_and_counts():
    assert numbers([3, 4, 5, 9, 11, 12]) == "3-5, 9, 11-12"
    assert page_end(0, None, 7, "use") == 7 and page_end(2, 3, 7, "use") == 5
    with pytest.raises(Refusal, match=r"offset=7 is past the last file: there are 7; use offset=0..6"):
        page_end(7, None, 7, "file")
    assert page_size(lambda n: ["x" * 10] * n, 50, 54) == 5
    from collections import Counter

    assert top_counts(Counter("aaabbc"), 2) == "a 3; b 2; 1 more"
    assert top_counts(Counter("aaabbc"), 2, rest=False) == "a 3; b 2"


def test_rows_that_fit_name_what_is_left_out_or_refuse():
    rows = [f"row {n}" for n in range(10)]
    lines = rows_that_fit("head", rows, 30, lambda left: f"[{left} more]")
    assert lines[0] == "head" and lines[-1] == f"[{10 - len(lines) + 2} more]" and size(lines) <= 30
    with pytest.raises(Refusal, match="too small for an outline; use at least 14"):
        rows_that_fit("head", rows, 5, lambda left: f"[{left} more]", "an outline")
