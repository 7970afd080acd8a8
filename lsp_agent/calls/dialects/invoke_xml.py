"""Invoke XML:

    <function_calls>
    <invoke name="read">
    <parameter name="path">a.py</parameter>
    </invoke>
    </function_calls>

The `<function_calls>` wrapper is optional and may hold several invokes. Values are raw
text (see xmlcall).
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import PARTIAL, WS_LIMIT, Opening, XmlFinder, match_tag, skip_ws, starts
from .xmlcall import XML_RULES, Shape, as_text, decode_calls

NAME = "invoke_xml"
WRAP_OPEN, WRAP_CLOSE = "<function_calls>", "</function_calls>"
CHILD_OPEN, CHILD_CLOSE = "<invoke", "</invoke>"


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    r = match_tag(text, j, "invoke", final)
    if r is PARTIAL:
        return PARTIAL
    if r:
        attrs, end = r
        if not attrs.get("name"):
            return None
        return Opening(NAME, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE), decode, text[j:end])
    r = starts(text, j, WRAP_OPEN, final)
    if r is not True:
        return r or None
    end = j + len(WRAP_OPEN)
    k = skip_ws(text, end)
    if k > end + WS_LIMIT:
        return None
    if k == len(text):
        if not final:
            return PARTIAL
        return Opening(NAME, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE, WRAP_CLOSE), decode, WRAP_OPEN)
    r = starts(text, k, CHILD_OPEN, final)
    if r is not True:
        return r or None
    return Opening(NAME, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE, WRAP_CLOSE), decode, WRAP_OPEN)


QUOTED_NAME = r"""\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>"""
SHAPE = Shape(
    call=re.compile("<invoke" + QUOTED_NAME),
    call_close=CHILD_CLOSE,
    call_tag='<invoke name="{}">',
    parameter=re.compile("<parameter" + QUOTED_NAME),
    parameter_tag='<parameter name="{}">',
)


def decode(block: str) -> list[Decodable | Problem]:
    if not block.startswith(WRAP_OPEN):
        return decode_calls(block, SHAPE)
    body = block[len(WRAP_OPEN) :]
    return decode_calls(body.removesuffix(WRAP_CLOSE), SHAPE, wrapper_closed=body.endswith(WRAP_CLOSE))


def invoke(name: str, arguments: dict) -> str:
    """One <invoke> element (also MiniMax's, inside its own wrapper)."""
    params = "".join(f'<parameter name="{k}">{as_text(v)}</parameter>\n' for k, v in arguments.items())
    return f'<invoke name="{name}">\n{params}</invoke>'


def render(name: str, arguments: dict) -> str:
    return f"{WRAP_OPEN}\n{invoke(name, arguments)}\n{WRAP_CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<invoke> XML",
    summary='<invoke name="NAME"> XML inside <function_calls>',
    prefixes=("<invoke", WRAP_OPEN),
    opening=opening,
    render=render,
    rules=XML_RULES,
    stray_closers=(WRAP_CLOSE, CHILD_CLOSE),
    lists_parameters=True,
)
