"""Reasoning written inline: `<think>…</think>` (Qwen3, DeepSeek-R1, GLM, MiniMax, …) and
`[THINK]…[/THINK]` (Magistral).

The text inside is the model's reasoning, not its answer: it is returned apart
(`reasoning_text`), nothing in it is a call, and a block the reply leaves open is reasoning
cut short, not a diagnostic — unless a call follows in it: then the model went on to call
without closing its reasoning, and the reasoning ends there (scan.ReasoningFinder).
"""

from __future__ import annotations

from ..dialect import Dialect
from ..scan import Opening, ReasoningFinder, reasoning_decoder, starts


def reasoning_dialect(name: str, opener: str, closer: str, summary: str) -> Dialect:
    decode = reasoning_decoder((opener,), (closer,))

    def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
        r = starts(text, j, opener, final)
        if r is not True:
            return r or None
        return Opening(
            name, base + j, j + len(opener), ReasoningFinder((closer,)), decode, opener, open_ok=True
        )

    def render(tool: str, arguments: dict) -> str:
        raise ValueError(f"{name} is reasoning, not a call format")

    return Dialect(
        name=name,
        label=opener,
        summary=summary,
        prefixes=(opener,),
        opening=opening,
        render=render,
        rules=(),
        teaches=False,
        reasoning_closer=closer,
        reasoning_opener=opener,
    )


DIALECT = reasoning_dialect("think", "<think>", "</think>", "<think>…</think> reasoning, returned apart")
DIALECT_BRACKETS = reasoning_dialect(
    "mistral_think", "[THINK]", "[/THINK]", "[THINK]…[/THINK] reasoning (Magistral), returned apart"
)
