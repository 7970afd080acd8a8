"""Reasoning written inline: `<think>…</think>` (Qwen3, DeepSeek-R1, GLM, MiniMax, …).

The text inside is the model's reasoning, not its answer: it is returned apart
(`reasoning_text`), nothing in it is a call, and a block the reply leaves open is reasoning
cut short, not a diagnostic.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..model import Reasoning
from ..scan import Opening, TokenFinder, starts

NAME = "think"
OPEN, CLOSE = "<think>", "</think>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    end = j + len(OPEN)
    return Opening(NAME, base + j, end, TokenFinder(CLOSE), decode, OPEN, open_ok=True)


def decode(block: str) -> list[Reasoning]:
    return [Reasoning(block[len(OPEN) :].removesuffix(CLOSE).strip())]


def render(name: str, arguments: dict) -> str:
    raise ValueError("think is reasoning, not a call format")


DIALECT = Dialect(
    name=NAME,
    label="<think>",
    summary="<think>…</think> reasoning, returned apart",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(),
    teaches=False,
)
