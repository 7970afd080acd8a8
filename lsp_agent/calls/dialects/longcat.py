"""LongCat: tagged JSON in its own tag, `<longcat_tool_call>{"name", "arguments"}</longcat_tool_call>`
(the closer found by tagged JSON's JSON-aware scan)."""

from __future__ import annotations

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, call_object, calls_from_json
from ..model import Decodable, Problem
from ..scan import PARTIAL, WS_LIMIT, Opening, match_tag, skip_ws
from .tagged_json import TaggedJsonFinder

NAME = "longcat"
SPELLING = "longcat_tool_call"
OPEN, CLOSE = f"<{SPELLING}>", f"</{SPELLING}>"


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    r = match_tag(text, j, SPELLING, final)
    if r is PARTIAL or not r:
        return r
    _, end = r
    k = skip_ws(text, end)
    if k == len(text):
        return (
            PARTIAL
            if not final
            else Opening(NAME, base + j, end, TaggedJsonFinder(SPELLING, None), decode, OPEN)
        )
    if k > end + WS_LIMIT or text[k] not in "{[":
        return None
    return Opening(NAME, base + j, end, TaggedJsonFinder(SPELLING, scanner.literal_until), decode, OPEN)


def decode(block: str) -> list[Decodable | Problem]:
    _, end = match_tag(block, 0, SPELLING, True)
    return calls_from_json(block[end:].removesuffix(CLOSE))


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}\n{call_object(name, arguments)}\n{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<longcat_tool_call> JSON",
    summary="<longcat_tool_call> tags around a JSON object (LongCat)",
    prefixes=(f"<{SPELLING}",),
    opening=opening,
    render=render,
    rules=JSON_RULES,
    stray_closers=(CLOSE,),
)
