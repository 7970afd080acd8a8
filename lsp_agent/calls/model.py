"""What decoding a reply produces: calls, diagnostics, and the decode result.

Spans are [start, end) offsets into the reply in Unicode code points (Python string
indices); `line` is the 1-based line of the span's start.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Finish reasons that mean "the reply was cut by its length limit".
LENGTH_REASONS = frozenset({"length", "max_tokens"})

EXCERPT_CHARS = 160


def excerpt(text: str) -> str:
    """The start of a block, for reports; marked when cut."""
    return text if len(text) <= EXCERPT_CHARS else text[: EXCERPT_CHARS - 1] + "…"


@dataclass
class Call:
    id: str
    name: str
    arguments: dict
    dialect: str
    span: tuple[int, int]
    line: int
    runnable: bool = True  # False: an unknown tool or invalid arguments (see its diagnostic)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name,
            "arguments": self.arguments,
            "dialect": self.dialect,
            "span": list(self.span),
            "line": self.line,
            "runnable": self.runnable,
        }


@dataclass
class Diagnostic:
    kind: str  # malformed | unterminated | truncated | unknown_tool | invalid_arguments
    dialect: str
    span: tuple[int, int]
    line: int
    reason: str
    excerpt: str = ""
    call_id: str | None = None  # unknown_tool / invalid_arguments: the call concerned
    name: str | None = None  # the tool name as written
    argument: str | None = None  # invalid_arguments: the first argument at fault
    closest: list[str] = field(default_factory=list)  # unknown_tool: the nearest tool names

    def to_dict(self) -> dict:
        out: dict[str, Any] = {
            "kind": self.kind,
            "dialect": self.dialect,
            "span": list(self.span),
            "line": self.line,
            "reason": self.reason,
            "excerpt": self.excerpt,
        }
        for key in ("call_id", "name", "argument"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.kind == "unknown_tool":
            out["closest"] = self.closest
        return out


@dataclass
class Decoded:
    visible_text: str
    calls: list[Call]
    diagnostics: list[Diagnostic]
    reasoning_text: str = ""  # the model's reasoning (<think>…</think> and the like), apart

    def to_dict(self) -> dict:
        return {
            "visible_text": self.visible_text,
            "reasoning_text": self.reasoning_text,
            "calls": [c.to_dict() for c in self.calls],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


@dataclass
class Problem:
    """A dialect's verdict on (part of) a block it claimed but could not decode."""

    reason: str
    cut: bool = False  # the block stops before its end: reported truncated or unterminated


@dataclass
class Reasoning:
    """Text a dialect marks as the model's reasoning: not the answer, and no calls in it."""

    text: str


@dataclass
class Decodable:
    """A call as a dialect read it, before the tool set checks its name and arguments.

    `text_params` holds the names of arguments given as raw text (XML dialects): they are
    JSON-decoded when the tool's schema wants a non-string there."""

    name: str
    arguments: dict
    id: str | None = None
    text_params: frozenset[str] = frozenset()
    # The dialect wrote no name (Kimi K2's bare call id `0`): the tool set names the one
    # tool the arguments fit, else the call is reported.
    unnamed: bool = False
