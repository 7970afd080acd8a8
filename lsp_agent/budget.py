"""Fitting an answer to its budget, for any tool: the ladder and the pieces its stages share.

The ladder: a tool declares its stages, most detailed first, as a table of callables each
drawing a whole answer's lines (or None where it does not apply); `first_stage` tries them
in order and answers with the first that fits (`first_fit` is the same for stages drawn by a
`Writer`, which stops as soon as the text is over the budget). The shared pieces: one line
per item cut to a width (`plain`, `cut_line`, `widest_cut`, MIN_WIDTH), line numbers as
ranges (`numbers`), counts per file (`per_file`), a summary's largest groups (`top_counts`),
pages (`page_end`, `showing`, `page_size`), rows cut to what fits (`rows_that_fit`), one
budget shared fairly (`share_fairly`), and the words answers share (`plural`). A tool's own
stages live with the tool (tools/; search's shortening chain in tools/chain.py).
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import accumulate

from .errors import Refusal

INFINITE = float("inf")
MIN_WIDTH = 16  # narrower snippets stop telling items apart: go to line numbers instead
ELLIPSIS = "…"
TOP_LEVEL = "<module>"  # the "symbol" of an item outside every definition

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import TypeVar

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


def largest_fit_near(lo: int, hi: int, fits: Callable[[int], bool], guess: int | None) -> int:
    """largest_fit, tried first at a guess (say, from sizes added up instead of drawn): where
    fits(guess) and not fits(guess + 1), that is the answer, in two tries; else the bisection."""
    if guess is None or not lo <= guess <= hi:
        return largest_fit(lo, hi, fits)
    if (guess == lo or fits(guess)) and (guess == hi or not fits(guess + 1)):
        return guess
    return largest_fit(lo, hi, fits)


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


# A stage of a ladder: the whole answer's lines, or None where the stage does not apply.
Stage = Callable[[], "list[str] | None"]


def plain(text: str) -> str:
    """A line shown whole: a literal "…" at its end is escaped, so only cut lines end in one."""
    return text[:-1] + "\\u2026" if text.endswith(ELLIPSIS) else text


def cut_line(text: str, width: int | None) -> str:
    """One item's line, cut to `width` (None: whole) ending in "…" when cut."""
    if width is None or len(text) <= width:
        return plain(text)
    return text[: width - 1] + ELLIPSIS


def widest_cut(
    draw: Callable[[int], list[str]], widest: int, budget: int, guess: int | None = None
) -> int | None:
    """The widest cut width in MIN_WIDTH..widest-1 (a cut shortens the widest line) whose
    drawing fits `budget`; None when even MIN_WIDTH does not (the next stage shows no text).
    A `guess` of that width is checked first (see largest_fit_near)."""
    near = None if guess is None else max(guess - MIN_WIDTH + 1, 0)
    n = largest_fit_near(
        0, widest - MIN_WIDTH, lambda n: n == 0 or fits(draw(MIN_WIDTH + n - 1), budget), near
    )
    return MIN_WIDTH + n - 1 if n else None


def sizes_at(lengths: list[int], whole: list[int]) -> Callable[[int], int]:
    """width -> the sum over lines of `whole[i]` where `lengths[i] <= width`, else `width`:
    the size of lines cut to a width (a cut line is as wide as the cut), each asked in log
    time (the lines by length, their whole sizes added up)."""
    order = sorted(range(len(lengths)), key=lengths.__getitem__)
    ends = [lengths[i] for i in order]
    drawn = list(accumulate((whole[i] for i in order), initial=0))

    def at(width: int) -> int:
        k = bisect_right(ends, width)
        return drawn[k] + width * (len(ends) - k)

    return at


def numbers(lines: list[int]) -> str:
    """12, 15-17, 40: consecutive line numbers as a range."""
    out, i = [], 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and lines[j + 1] == lines[j] + 1:
            j += 1
        out.append(str(lines[i]) if i == j else f"{lines[i]}-{lines[j]}")
        i = j + 1
    return ", ".join(out)


def per_file(counts: Mapping[str, str]) -> list[str]:
    """The counts-per-file stage's rows: `path: counts`, one file a line."""
    return [f"{path}: {shown}" for path, shown in counts.items()]


def top_counts(counts: Counter, most: int = 8, *, rest: bool = True) -> str:
    """A summary's largest groups: `src 12; tests 4` (with `rest`, then `; 3 more`)."""
    top = "; ".join(f"{key} {n:,}" for key, n in counts.most_common(most))
    return top + (f"; {len(counts) - most:,} more" if rest and len(counts) > most else "")


def page_end(offset: int, limit: int | None, total: int, unit: str) -> int:
    """Where the page asked for by offset/limit ends; refuses an offset past the last item."""
    if offset and offset >= max(total, 1):
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last {unit}: there are {total:,}; use offset=0..{max(total - 1, 0)}.",
        )
    return total if limit is None else min(total, offset + limit)


def showing(start: int, stop: int, total: int) -> str:
    """A header's `, showing 11-20` when the page is not everything ("" when it is)."""
    return f", showing {start + 1:,}-{stop:,}" if (start or stop < total) else ""


def page_size(draw: Callable[[int], list[str]], most: int, budget: int, guess: int | None = None) -> int:
    """The most items (1..most) whose page, drawn by draw(n), fits `budget` (at least 1); a
    `guess` is checked first (see largest_fit_near)."""
    return largest_fit_near(1, most, lambda n: fits(draw(n), budget), guess)


def rows_that_fit(
    head: str, rows: list[str], budget: int, tail: Callable[[int], str], what: str = "this answer"
) -> list[str]:
    """`head`, as many rows as fit, and tail(rows left out); refuses, naming the least
    budget, when not even the head and tail fit."""
    kept = largest_fit(0, len(rows), lambda n: fits([head, *rows[:n], tail(len(rows) - n)], budget))
    lines = [head, *rows[:kept], tail(len(rows) - kept)]
    if not fits(lines, budget):
        minimum = size([head, lines[-1]])
        raise Refusal(
            "budget_too_small",
            f"max_chars={budget} is too small for {what}; use at least {minimum}.",
            minimum=minimum,
        )
    return lines


def share_fairly(room: int, items: Sequence[T], take: Callable[[T, int], int]) -> None:
    """Share `room` between `items`, served in order (shortest first): each is offered an
    equal share of what is left, and take(item, share) says how much it used, so a short
    item leaves its unused share to the longer ones (read's files, a report's bodies)."""
    for k, item in enumerate(items):
        room -= take(item, max(0, room // (len(items) - k)))
