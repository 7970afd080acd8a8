"""Invoke XML:

    <function_calls>
    <invoke name="read">
    <parameter name="path">a.py</parameter>
    </invoke>
    </function_calls>

The `<function_calls>` wrapper is optional and may hold several invokes. Values are raw
text, treated like function XML's (one layout line break at each end dropped; JSON-decoded
where the schema wants a non-string).
"""

from __future__ import annotations

import re

from .function_xml import layout_stripped, skip_space, snippet
from .model import Decodable, Problem
from .scan import PARTIAL, WS_LIMIT, Opening, XmlFinder, find_unfenced, match_tag, skip_ws, starts

GRAMMAR = "invoke_xml"
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
        return Opening(GRAMMAR, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE), decode, text[j:end])
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
        return Opening(
            GRAMMAR, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE, WRAP_CLOSE), decode, WRAP_OPEN
        )
    r = starts(text, k, CHILD_OPEN, final)
    if r is not True:
        return r or None
    return Opening(GRAMMAR, base + j, end, XmlFinder(CHILD_OPEN, CHILD_CLOSE, WRAP_CLOSE), decode, WRAP_OPEN)


INVOKE = re.compile(r"""<invoke\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>""")
PARAMETER = re.compile(r"""<parameter\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')\s*>""")


def decode(block: str) -> list[Decodable | Problem]:
    body = block
    if body.startswith(WRAP_OPEN):
        body = body[len(WRAP_OPEN) :]
        body = body.removesuffix(WRAP_CLOSE)
    out: list[Decodable | Problem] = []
    pos = 0
    while True:
        pos = skip_space(body, pos)
        if pos == len(body):
            return out
        m = INVOKE.match(body, pos)
        if not m:
            out.append(Problem(f'expected <invoke name="NAME">, found {snippet(body, pos)}'))
            return out
        end = find_unfenced(body, CHILD_CLOSE, m.end())
        if end < 0:
            out.append(Problem(f"{m.group(0)} has no {CHILD_CLOSE}"))
            return out
        out.append(invoke(m.group(1) if m.group(1) is not None else m.group(2), body[m.end() : end]))
        pos = end + len(CHILD_CLOSE)


def invoke(name: str, inner: str) -> Decodable | Problem:
    name = name.strip()
    if not name:
        return Problem('<invoke name=""> has an empty name')
    arguments: dict[str, str] = {}
    pos = 0
    while True:
        pos = skip_space(inner, pos)
        if pos == len(inner):
            return Decodable(name, arguments, text_params=frozenset(arguments))
        m = PARAMETER.match(inner, pos)
        if not m:
            return Problem(
                f'in <invoke name="{name}">: expected <parameter name="NAME">, found {snippet(inner, pos)}'
            )
        key = (m.group(1) if m.group(1) is not None else m.group(2)).strip()
        end = find_unfenced(inner, "</parameter>", m.end())
        if not key:
            return Problem(f'in <invoke name="{name}">: a parameter has an empty name')
        if end < 0:
            return Problem(f'in <invoke name="{name}">: <parameter name="{key}"> has no </parameter>')
        if key in arguments:
            return Problem(f'in <invoke name="{name}">: parameter {key!r} is given twice')
        arguments[key] = layout_stripped(inner[m.end() : end])
        pos = end + len("</parameter>")
