"""MiniMax-M2: invoke XML inside a `<minimax:tool_call>` wrapper:

    <minimax:tool_call>
    <invoke name="read">
    <parameter name="path">a.py</parameter>
    </invoke>
    </minimax:tool_call>

The wrapper is part of the block: it leaves the visible text with the calls.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import PARTIAL, WS_LIMIT, Finder, Opening, TokenFinder, XmlFinder, skip_ws, starts
from .invoke_xml import CHILD_CLOSE, CHILD_OPEN, SHAPE, invoke
from .xmlcall import XML_RULES, decode_calls

NAME = "minimax"
OPEN, CLOSE = "<minimax:tool_call>", "</minimax:tool_call>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    end = j + len(OPEN)
    k = skip_ws(text, end)
    if k == len(text) and not final:
        return PARTIAL
    r = starts(text, k, CHILD_OPEN, final) if k <= end + WS_LIMIT else False
    if r is PARTIAL:
        return PARTIAL
    # Something other than <invoke> inside: the whole wrapper is one malformed block.
    finder: Finder = XmlFinder(CHILD_OPEN, CHILD_CLOSE, CLOSE) if r else TokenFinder(CLOSE)
    return Opening(NAME, base + j, end, finder, decode, OPEN)


def decode(block: str) -> list[Decodable | Problem]:
    calls = decode_calls(block[len(OPEN) :].removesuffix(CLOSE), SHAPE)
    return calls or [Problem(f"no <invoke> inside {OPEN}")]


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}\n{invoke(name, arguments)}\n{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<minimax:tool_call>",
    summary='<invoke name="NAME"> XML inside <minimax:tool_call> (MiniMax-M2)',
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=XML_RULES,
    stray_closers=(CLOSE,),
    lists_parameters=True,
)
