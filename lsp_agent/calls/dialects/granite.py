"""IBM Granite: `<|tool_call|>` followed by a JSON array of call objects (3.0, 3.2, 3.3), no
closing token: the block ends where the array's brackets balance.

    <|tool_call|>[{"name": "read", "arguments": {"path": "a.py"}}]

Granite 3.1 writes `<tool_call>` and the array, and never closes the tag; that form is its own
dialect (`granite_31`, asked for by model family), since `<tool_call>[…]</tool_call>` is
tagged JSON.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, call_object, calls_from_json
from ..model import Decodable, Problem
from ..scan import PARTIAL, WS_LIMIT, JsonValueFinder, Opening, WithTrailer, match_tag, skip_ws, starts

NAME, NAME_31 = "granite", "granite_31"
TOKEN = "<|tool_call|>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, TOKEN, final)
    if r is not True:
        return r or None
    end = j + len(TOKEN)
    return Opening(NAME, base + j, end, JsonValueFinder("[", "the end of the JSON array"), decode, TOKEN)


def decode(block: str) -> list[Decodable | Problem]:
    return calls_from_json(block[len(TOKEN) :])


def opening_31(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = match_tag(text, j, "tool_call", final)
    if r is PARTIAL:
        return PARTIAL
    if not r:
        return None
    _, end = r
    k = skip_ws(text, end)
    if k == len(text) and not final:
        return PARTIAL
    if k > end + WS_LIMIT or not text.startswith("[", k):
        return None
    finder = WithTrailer(JsonValueFinder("[", "the end of the JSON array"), "</tool_call>")
    return Opening(NAME_31, base + j, end, finder, decode_31, text[j:end])


def decode_31(block: str) -> list[Decodable | Problem]:
    body = block[block.index(">") + 1 :].rstrip().removesuffix("</tool_call>")
    return calls_from_json(body)


def render(name: str, arguments: dict) -> str:
    return f"{TOKEN}[{call_object(name, arguments)}]"


def render_31(name: str, arguments: dict) -> str:
    return f"<tool_call>[{call_object(name, arguments)}]"


DIALECT = Dialect(
    name=NAME,
    label="<|tool_call|>",
    summary="<|tool_call|> and a JSON array of calls (Granite 3.x)",
    prefixes=(TOKEN,),
    opening=opening,
    render=render,
    rules=("- After <|tool_call|> write one JSON array of call objects; nothing closes it.", *JSON_RULES[1:]),
)
DIALECT_31 = Dialect(
    name=NAME_31,
    label="<tool_call> [",
    summary="<tool_call> and a JSON array of calls, never closed (Granite 3.1)",
    prefixes=("<tool_call",),
    opening=opening_31,
    render=render_31,
    rules=("- After <tool_call> write one JSON array of call objects.", *JSON_RULES[1:]),
)
