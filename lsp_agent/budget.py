"""Fitting an answer to its budget, for any tool: a writer that stops as soon as the text is
over the budget, "first stage that fits", "largest count that fits", and the words answers
share. A tool's own stages live with the tool (search's shortening chain in search/chain.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from .errors import Refusal

INFINITE = float("inf")

T = TypeVar("T")


class Overflow(Exception):
    """The text being written is over the budget."""


class Writer:
    """Lines joined by newlines, refusing (Overflow) the line that takes the text past
    `limit` characters: trying a stage costs at most its budget."""

    def __init__(self, limit: float = INFINITE):
        self.lines: list[str] = []
        self.size = -1  # no newline before the first line
        self.limit = limit

    def room_for(self, line: str) -> bool:
        return self.size + 1 + len(line) <= self.limit

    def add(self, line: str) -> None:
        self.size += len(line) + 1
        if self.size > self.limit:
            raise Overflow()
        self.lines.append(line)

    def text(self) -> str:
        return "\n".join(self.lines)


def size(lines: Iterable[str]) -> int:
    """Characters of the lines joined by newlines."""
    return sum(len(line) + 1 for line in lines) - 1


def fits(lines: Iterable[str], budget: float) -> bool:
    return size(lines) <= budget


def first_fit(stages: Iterable[Callable[[], T]]) -> T | None:
    """The first stage that renders without Overflow (None when none does). Stages are
    tried lazily, so a later, costlier one is built only when the earlier ones overflow."""
    for stage in stages:
        try:
            return stage()
        except Overflow:
            continue
    return None


def largest_fit(lo: int, hi: int, fits: Callable[[int], bool]) -> int:
    """The largest n in lo..hi with fits(n), by bisection; fits(n) may only turn False as n
    grows, and fits(lo) is taken as true (the caller's floor)."""
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def most_that_fit(count: int, render: Callable[[int], list[str]], budget: int, one: str) -> int:
    """The largest k in 1..count whose `render(k)` fits `budget`; refuses, naming the size of
    one `one` ("file", "ranked definition"), when not even one fits."""
    k = largest_fit(0, count, lambda k: k == 0 or fits(render(k), budget))
    if k == 0:
        minimum = size(render(1))
        raise Refusal(
            "budget_too_small",
            f"max_chars={budget} is too small for one {one}; use at least {minimum}.",
            minimum=minimum,
        )
    return k


def cut(text: str, budget: int, note: str) -> str:
    """`text` cut so that it and `note` (saying what was cut) fit `budget` together."""
    return text[: max(0, budget - len(note))] + note


def plural(n: int, word: str) -> str:
    """'1 match', '1,300 files': the count with thousands separators, the word in plural."""
    return f"{n:,} {word}{'' if n == 1 else ('es' if word.endswith('ch') else 's')}"


def first_stage(stages: Sequence[Callable[[], list[str] | None]], budget: int) -> tuple[int, list[str]]:
    """(index, lines) of the first stage whose lines fit `budget` (a stage answering None
    does not apply); refuses, naming the smallest size seen, when none fits."""
    smallest: int | None = None
    for index, stage in enumerate(stages):
        lines = stage()
        if lines is None:
            continue
        if fits(lines, budget):
            return index, lines
        smallest = size(lines) if smallest is None else min(smallest, size(lines))
    raise Refusal(
        "budget_too_small",
        f"max_chars={budget} is too small for this answer; use at least {smallest}.",
        minimum=smallest,
    )
