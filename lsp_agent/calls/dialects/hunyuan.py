"""Hunyuan A13B writes its answer between `<answer>` and `</answer>` (after its `<think>`
reasoning), the calls inside it in `<tool_calls>` (tool_calls_tag): the tags are layout,
removed from the visible text, as vLLM's Hunyuan parsers do. Asked for only (by family):
prose and prompts write `<answer>` too."""

from __future__ import annotations

from ..dialect import Dialect
from .sections import layout

NAME = "hunyuan_answer"
TOKENS = ("<answer>", "</answer>")


def render(tool: str, arguments: dict) -> str:
    raise ValueError(f"{NAME} is layout, not a call format")


DIALECT = Dialect(
    name=NAME,
    label="<answer>",
    summary="<answer>…</answer> around the answer (Hunyuan A13B), removed",
    prefixes=TOKENS,
    opening=layout(NAME, TOKENS),
    render=render,
    rules=(),
    teaches=False,
)
