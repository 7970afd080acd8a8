"""A dialect's whole knowledge in one record: how its blocks open (and so where they end),
which closers outside any block betray a lost opener, how a call is written in it, and what
the prompt and the nudges say about it. The registry of dialects is `dialects.py`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from .scan import ExampleFence, Opening, Scanner


class OpeningFn(Protocol):
    """Is an opener of the dialect at text[j]? `text` is the current window, whose first
    character is at offset `base` of the reply; `final`: nothing more will come. Returns
    the Opening of a claimed block, an ExampleFence, scan.PARTIAL (cannot tell yet: wait
    for more input) or None (not an opener: text)."""

    def __call__(
        self, text: str, j: int, base: int, final: bool, scanner: Scanner
    ) -> Opening | ExampleFence | object | None: ...


@dataclass(frozen=True)
class Dialect:
    name: str  # the `dialect` field of calls and diagnostics
    label: str  # in nudges: "<tool_call> JSON"
    summary: str  # in tool_prompt's list of dialects
    prefixes: tuple[str, ...]  # the literal text its openers begin with: "<tool_call", "[TOOL_CALLS]"
    opening: OpeningFn  # is an opener at text[j]?
    render: Callable[[str, dict], str]  # one call written in the dialect, exactly as decoded
    rules: tuple[str, ...]  # the prompt's rules for writing a call
    stray_closers: tuple[str, ...] = ()  # closers that, outside any block, mean a lost opener
    line_start: bool = False  # openers count only at a line start (code fences)
    lists_parameters: bool = False  # the prompt lists parameters as text (no JSON Schema)
    teaches: bool = True  # tool_prompt can teach it (reasoning and layout are not call formats)
    # A reasoning dialect: the token that ends its reasoning, what a reply whose prompt opened
    # the reasoning (`reasoning="open"`) is read up to.
    reasoning_closer: str = ""
    reasoning_opener: str = ""  # (a model may write it though its prompt opened the reasoning)
    # What only the reply's first characters may be (a header the prompt began: gpt-oss's
    # ` to=functions.NAME<|channel|>…`); asked at offset 0, like `opening`.
    reply_start: OpeningFn | None = None
