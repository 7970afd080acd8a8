"""Seed-OSS: function XML inside `<seed:tool_call>`, reasoning in `<seed:think>`:

    <seed:think>The user wants a.py.</seed:think>
    <seed:tool_call>
    <function=read>
    <parameter=path>a.py</parameter>
    </function>
    </seed:tool_call>

Budget notes (`<seed:cot_budget_reflect>…`) inside the reasoning stay part of it.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import PARTIAL, WS_LIMIT, Opening, skip_ws, starts
from .function_xml import OPEN as FUNCTION_OPEN
from .function_xml import SHAPE, wrapped_finder
from .think import reasoning_dialect
from .xmlcall import XML_RULES, as_text, decode_calls

NAME = "seed_oss"
OPEN, CLOSE = "<seed:tool_call>", "</seed:tool_call>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    end = j + len(OPEN)
    k = skip_ws(text, end)
    if k == len(text) and not final:
        return PARTIAL
    r = starts(text, k, FUNCTION_OPEN, final) if k <= end + WS_LIMIT else False
    if r is PARTIAL:
        return PARTIAL
    if not r and k < len(text):
        return None  # prose that mentions the tag
    return Opening(NAME, base + j, end, wrapped_finder(CLOSE), decode, OPEN)


def decode(block: str) -> list[Decodable | Problem]:
    calls = decode_calls(block[len(OPEN) :].removesuffix(CLOSE), SHAPE)
    return calls or [Problem(f"no <function=…> in {OPEN}")]


def render(name: str, arguments: dict) -> str:
    params = "".join(f"<parameter={k}>{as_text(v)}</parameter>\n" for k, v in arguments.items())
    return f"{OPEN}\n<function={name}>\n{params}</function>\n{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<seed:tool_call>",
    summary="<function=NAME> XML inside <seed:tool_call> (Seed-OSS)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=XML_RULES,
    stray_closers=(CLOSE,),
    lists_parameters=True,
)
DIALECT_THINK = reasoning_dialect(
    "seed_think",
    "<seed:think>",
    "</seed:think>",
    "<seed:think>…</seed:think> reasoning (Seed-OSS), returned apart",
)
