"""Cohere Command. Command R7B and Command A write actions between special tokens:

    <|START_ACTION|>[{"tool_call_id": "0", "tool_name": "read", "parameters": {"path": "a.py"}}]<|END_ACTION|>

with reasoning in `<|START_THINKING|>…<|END_THINKING|>` and the answer in
`<|START_RESPONSE|>…<|END_RESPONSE|>` (layout tokens, removed). Command R and R+ write a
line `Action:` and a fenced JSON list (`cohere_action`, asked for by model family: the word
Action: also starts ordinary lines):

    Action: ```json
    [{"tool_name": "read", "parameters": {"path": "a.py"}}]
    ```
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..dialect import Dialect
from ..jsoncall import json_elements, load
from ..model import Decodable, Problem
from ..scan import (
    PARTIAL,
    ClosedAt,
    FenceFinder,
    Opening,
    ReasoningFinder,
    TokenFinder,
    fence_line,
    reasoning_decoder,
    starts,
)

NAME, NAME_ACTION = "cohere", "cohere_action"
ACTION, END_ACTION = "<|START_ACTION|>", "<|END_ACTION|>"
THINKING, END_THINKING = "<|START_THINKING|>", "<|END_THINKING|>"
# The answer's wrappers: Command A's <|START_TEXT|> (older templates: <|START_RESPONSE|>),
# Command R's <|CHATBOT_TOKEN|>, and the end-of-turn token some servers leave in.
LAYOUT = (
    "<|START_RESPONSE|>",
    "<|END_RESPONSE|>",
    "<|START_TEXT|>",
    "<|END_TEXT|>",
    "<|CHATBOT_TOKEN|>",
    "<|END_OF_TURN_TOKEN|>",
)


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    partial = False
    for token in (ACTION, THINKING, *LAYOUT):
        r = starts(text, j, token, final)
        if r is PARTIAL:
            partial = True
        elif r:
            end = j + len(token)
            if token == ACTION:
                return Opening(NAME, base + j, end, TokenFinder(END_ACTION), decode, token)
            if token == THINKING:
                return Opening(
                    NAME,
                    base + j,
                    end,
                    ReasoningFinder((END_THINKING,)),
                    decode_thinking,
                    token,
                    open_ok=True,
                )
            return Opening(NAME, base + j, end, ClosedAt(base + end), lambda block: [], token)
    return PARTIAL if partial else None


def decode(block: str) -> list[Decodable | Problem]:
    return actions(block[len(ACTION) :].removesuffix(END_ACTION))


decode_thinking = reasoning_decoder((THINKING,), (END_THINKING,))


def actions(body: str) -> list[Decodable | Problem]:
    """A JSON list (or one object) of {"tool_name", "parameters", "tool_call_id"}."""
    try:
        value = load(body)
    except ValueError as exc:
        elements = json_elements(body)
        if elements is None:
            return [Problem(f"invalid JSON: {exc}")]
        return [action(n, item) for n, item in enumerate(elements, 1)]
    items = value if isinstance(value, list) else [value]
    if not items:
        return [Problem("an empty list: no action in it")]
    return [action(n, item) for n, item in enumerate(items, 1)]


def action(n: int, item: Any) -> Decodable | Problem:
    if isinstance(item, Problem):
        return item
    if not isinstance(item, dict):
        return Problem(f'element {n}: expected an object with "tool_name" and "parameters"')
    name = item.get("tool_name", item.get("name"))
    if not isinstance(name, str) or not name.strip():
        return Problem(f'element {n}: "tool_name" must be a non-empty string')
    arguments = item.get("parameters", item.get("arguments")) or {}
    if not isinstance(arguments, dict):
        return Problem(f'element {n}: "parameters" must be an object')
    call_id = item.get("tool_call_id")
    return Decodable(name.strip(), arguments, str(call_id) if isinstance(call_id, (str, int)) else None)


ACTION_LINE = re.compile(r"Action:[ \t]*")


def opening_action(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    """At a line start: `Action:` then a ```json fence on the same or the next line."""
    r = starts(text, j, "Action:", final)
    if r is not True:
        return r or None
    k = ACTION_LINE.match(text, j).end()  # type: ignore[union-attr]  # it starts with Action:
    if text.startswith("\n", k):
        k += 1
    if k == len(text):
        return None if final else PARTIAL
    found = fence_line(text, k, final)
    if found is None or found is PARTIAL:
        return found
    char, count, info, line_end = found
    if info not in ("json", ""):
        return None
    return Opening(NAME_ACTION, base + j, line_end, FenceFinder(char, count), decode_action, text[j:line_end])


def decode_action(block: str) -> list[Decodable | Problem]:
    """The fence's body: from the line after the fence's opening line (which is the Action:
    line or the next, as Command R's template writes it) to its closing line."""
    k = ACTION_LINE.match(block).end()  # type: ignore[union-attr]  # the block starts with Action:
    first, last = block.find("\n", k + 1 if block.startswith("\n", k) else k), block.rfind("\n")
    return actions(block[first + 1 : last] if last > first else "")


def render(name: str, arguments: dict) -> str:
    item = {"tool_call_id": "0", "tool_name": name, "parameters": arguments}
    return f"{ACTION}[{json.dumps(item, ensure_ascii=False)}]{END_ACTION}"


def render_action(name: str, arguments: dict) -> str:
    item = {"tool_name": name, "parameters": arguments}
    return f"Action: ```json\n[{json.dumps(item, ensure_ascii=False)}]\n```"


ACTION_RULES = (
    '- Each action is an object with "tool_name" and "parameters" (an object of its arguments), in a JSON list.',
    '- Write valid JSON: escape line breaks inside strings as \\n and quotes as \\".',
)
DIALECT = Dialect(
    name=NAME,
    label="<|START_ACTION|>",
    summary="<|START_ACTION|> JSON list <|END_ACTION|> (Cohere Command R7B, Command A)",
    prefixes=(ACTION, THINKING, *LAYOUT),
    opening=opening,
    render=render,
    rules=ACTION_RULES,
    stray_closers=(END_ACTION,),
    reasoning_closer=END_THINKING,
    reasoning_opener=THINKING,
)
DIALECT_ACTION = Dialect(
    name=NAME_ACTION,
    label="Action: ```json",
    summary="an Action: line and a ```json list (Cohere Command R, R+)",
    prefixes=("Action:",),
    opening=opening_action,
    render=render_action,
    rules=ACTION_RULES,
    line_start=True,
)
