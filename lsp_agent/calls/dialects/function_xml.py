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

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import PARTIAL, Opening, WithTrailer, XmlFinder, read_name, starts
from .xmlcall import XML_RULES, Shape, as_text, decode_calls

NAME = "function_xml"
OPEN = "<function="
CLOSE = "</function>"
WRAPPER_CLOSE = "</tool_call>"


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
    # Qwen3-Coder sometimes leaves out the <tool_call> opener but writes its closer.
    finder = WithTrailer(XmlFinder(OPEN, CLOSE), WRAPPER_CLOSE)
    return Opening(NAME, base + j, end + 1, finder, decode_bare, text[j : end + 1])


def wrapped_finder(outer_close: str) -> XmlFinder:
    return XmlFinder(OPEN, CLOSE, outer_close)


SHAPE = Shape(
    call=re.compile(r"<function=([^>\n]*)>"),
    call_close=CLOSE,
    call_tag="<function={}>",
    parameter=re.compile(r"<parameter=([^>\n]*)>"),
    parameter_tag="<parameter={}>",
)
WRAPPER = re.compile(r"<(tool_call|toolcall|tool-call|TOOLCALL)\b[^>]*>")


def decode_bare(block: str) -> list[Decodable | Problem]:
    return decode_calls(block.rstrip().removesuffix(WRAPPER_CLOSE), SHAPE)


def decode_wrapped(block: str) -> list[Decodable | Problem]:
    """`<tool_call>` + functions + (optionally) `</tool_call>`."""
    opener = WRAPPER.match(block)
    assert opener is not None  # the block was claimed on this opener
    closer = f"</{opener.group(1)}>"
    body = block[opener.end() :]
    return decode_calls(body.removesuffix(closer), SHAPE, wrapper_closed=body.endswith(closer))


def render(name: str, arguments: dict) -> str:
    params = "".join(f"<parameter={k}>\n{as_text(v)}\n</parameter>\n" for k, v in arguments.items())
    return f"<tool_call>\n<function={name}>\n{params}</function>\n</tool_call>"


DIALECT = Dialect(
    name=NAME,
    label="<function=…> XML",
    summary="<function=NAME> XML inside <tool_call> (Qwen3-Coder)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=XML_RULES,
    stray_closers=(CLOSE,),
    lists_parameters=True,
)
