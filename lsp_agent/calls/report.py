"""Fitting a report to a budget: head lines stay whole, long bodies (an answer, the visible
text) are cut fairly, and each cut says how much is left out and where the whole is."""

from __future__ import annotations

from dataclasses import dataclass

from ..budget import cut


@dataclass
class Section:
    head: str  # always shown
    body: str = ""  # shown whole, or cut to fit
    where: str = ""  # where the whole body is, e.g. "results[0].answer.text"


def cut_note(left_out: int, where: str) -> str:
    return f"\n… {left_out} more characters cut to fit the budget; the whole text is in `{where}`"


def fit(sections: list[Section], budget: int) -> str:
    fixed = sum(len(s.head) + 1 for s in sections)
    bodies = [s for s in sections if s.body]
    need = sum(len(s.body) + 1 for s in bodies)
    shares: dict[int, int] = {}
    if fixed + need - 1 > budget:
        room = budget - fixed - len(bodies)
        # Water-filling: bodies shorter than an equal share stay whole, the rest get equal shares.
        order = sorted(range(len(bodies)), key=lambda k: len(bodies[k].body))
        left = len(order)
        for k in order:
            share = max(0, room // left) if left else 0
            take = min(len(bodies[k].body), share)
            shares[id(bodies[k])] = take
            room -= take
            left -= 1
    lines = []
    for s in sections:
        lines.append(s.head)
        if not s.body:
            continue
        take = shares.get(id(s), len(s.body))
        if take >= len(s.body):
            lines.append(s.body)
            continue
        note = cut_note(len(s.body), s.where)
        keep = max(0, take - len(note))
        lines.append(s.body[:keep] + cut_note(len(s.body) - keep, s.where))
    text = "\n".join(lines)
    if len(text) > budget:  # the heads alone do not fit: cut the whole, saying so
        text = cut(text, budget, "\n… cut to fit the budget; every detail is in the structured fields")
    return text
