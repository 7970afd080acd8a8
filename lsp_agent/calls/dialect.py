"""A dialect's whole knowledge in one record: how its blocks open (and so where they end),
which closers outside any block betray a lost opener, how a call is written in it, and what
the prompt and the nudges say about it. The registry of dialects is `dialects.py`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

# (text, j, base, final, scanner) -> an Opening, a scan.ExampleFence, scan.PARTIAL or None.
OpeningFn = Callable[[str, int, int, bool, Any], Any]


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
