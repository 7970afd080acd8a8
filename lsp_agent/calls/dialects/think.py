"""Reasoning written inline: `<think>…</think>` (Qwen3, DeepSeek-R1, GLM, MiniMax, …),
`[THINK]…[/THINK]` (Magistral), `<mm:think>…</mm:think>` (MiniMax-M3) and Apriel's `Here are my reasoning steps:` … `[BEGIN FINAL
RESPONSE]` (its answer then ends with `[END FINAL RESPONSE]`, layout tokens removed).

The text inside is the model's reasoning, not its answer: it is returned apart
(`reasoning_text`), nothing in it is a call, and a block the reply leaves open is reasoning
cut short, not a diagnostic — unless a call follows in it: then the model went on to call
without closing its reasoning, and the reasoning ends there (scan.ReasoningFinder).
"""

from __future__ import annotations

from ..dialect import Dialect
from ..scan import PARTIAL, Opening, ReasoningFinder, Scanner, reasoning_decoder, starts
from .sections import layout


def reasoning_dialect(
    name: str, opener: str, closer: str, summary: str, layout_tokens: tuple[str, ...] = ()
) -> Dialect:
    """A reasoning block; `layout_tokens` outside it are removed from the visible text (the
    closer among them, where the prompt opened no reasoning)."""
    decode = reasoning_decoder((opener,), (closer,))
    layout_opening = layout(name, layout_tokens)

    def opening(text: str, j: int, base: int, final: bool, scanner: Scanner) -> Opening | object | None:
        r = starts(text, j, opener, final)
        if r is PARTIAL:
            return r
        if r is not True:
            return layout_opening(text, j, base, final, scanner) if layout_tokens else None
        return Opening(
            name, base + j, j + len(opener), ReasoningFinder((closer,)), decode, opener, open_ok=True
        )

    def render(tool: str, arguments: dict) -> str:
        raise ValueError(f"{name} is reasoning, not a call format")

    return Dialect(
        name=name,
        label=opener,
        summary=summary,
        prefixes=(opener, *layout_tokens),
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
# Apriel 1.5/1.6 Thinker: its template ends the prompt with the header, so the reply starts
# inside the reasoning (the family implies reasoning="open"); asked for only (prose words).
DIALECT_APRIEL = reasoning_dialect(
    "apriel_think",
    "Here are my reasoning steps:",
    "[BEGIN FINAL RESPONSE]",
    "Here are my reasoning steps: … [BEGIN FINAL RESPONSE] reasoning (Apriel), returned apart",
    layout_tokens=("[BEGIN FINAL RESPONSE]", "[END FINAL RESPONSE]", "<|end|>"),
)
# MiniMax-M3: `<mm:think>…</mm:think>`; a turn without reasoning starts with a bare closer.
DIALECT_MINIMAX = reasoning_dialect(
    "minimax_think",
    "<mm:think>",
    "</mm:think>",
    "<mm:think>…</mm:think> reasoning (MiniMax-M3), returned apart",
    layout_tokens=("</mm:think>",),
)
