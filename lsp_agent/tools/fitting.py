"""Shaping navigation answers to a budget: the first stage that fits, the largest page that
fits, and the lines of a page with its continuation."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..errors import Refusal


def size(lines: Sequence[str]) -> int:
    return sum(len(line) + 1 for line in lines) - 1 if lines else 0


def first_fit(stages: Sequence[Callable[[], list[str] | None]], budget: int) -> tuple[int, list[str]]:
    """(index, lines) of the first stage whose lines fit `budget` (a stage returning None
    does not apply); refuses with the smallest size seen."""
    smallest = None
    for index, stage in enumerate(stages):
        lines = stage()
        if lines is None:
            continue
        if size(lines) <= budget:
            return index, lines
        smallest = size(lines) if smallest is None else min(smallest, size(lines))
    raise Refusal(
        "budget_too_small",
        f"max_chars={budget} is too small for this answer; use at least {smallest}.",
        minimum=smallest,
    )


def largest_fit(most: int, fits: Callable[[int], bool]) -> int:
    """The largest n in 1..most with fits(n) (fits only turns False as n grows); 0 if none."""
    if most < 1 or not fits(1):
        return 0
    lo, hi = 1, most
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def plural(n: int, word: str) -> str:
    if n == 1:
        return f"1 {word}"
    if word.endswith(("ch", "s", "sh", "x")):
        return f"{n:,} {word}es"
    return f"{n:,} {word}s"
