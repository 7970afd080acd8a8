"""Function XML (Qwen3-Coder and others):

    <function=read>
    <parameter=path>
    a.py
    </parameter>
    </function>

with or without an outer `<tool_call>…</tool_call>` (which may hold several functions).
Parameter values are raw text (see xmlcall).
"""

from __future__ import annotations

import re

from .model import Decodable, Problem
from .scan import PARTIAL, Opening, XmlFinder, read_name, starts
from .xmlcall import Shape, decode_calls

GRAMMAR = "function_xml"
OPEN = "<function="
CLOSE = "</function>"


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    """A bare `<function=NAME>`."""
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    got = read_name(text, j + len(OPEN), final)
    if got is None or got is PARTIAL:
        return got
    _, end = got
    r = starts(text, end, ">", final)
    if r is not True:
        return r or None
    finder = XmlFinder(OPEN, CLOSE)
    return Opening(GRAMMAR, base + j, end + 1, finder, decode_bare, text[j : end + 1])


def wrapped_finder(outer_close: str) -> XmlFinder:
    return XmlFinder(OPEN, CLOSE, outer_close)


SHAPE = Shape(
    call=re.compile(r"<function=([^>\n]*)>"),
    call_close=CLOSE,
    call_tag="<function={}>",
    parameter=re.compile(r"<parameter=([^>\n]*)>"),
    parameter_tag="<parameter={}>",
)
WRAPPER = re.compile(r"<(tool_call|toolcall|tool-call)\b[^>]*>")


def decode_bare(block: str) -> list[Decodable | Problem]:
    return decode_calls(block, SHAPE)


def decode_wrapped(block: str) -> list[Decodable | Problem]:
    """`<tool_call>` + functions + (optionally) `</tool_call>`."""
    opener = WRAPPER.match(block)
    body = block[opener.end() :].removesuffix(f"</{opener.group(1)}>")
    return decode_calls(body, SHAPE)
