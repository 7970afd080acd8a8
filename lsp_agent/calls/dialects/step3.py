"""Step3's steptml: invokes between DeepSeek-like special tokens (without DeepSeek's ▁):

    <｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="read">
    <steptml:parameter name="path">a.py</steptml:parameter>
    </steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>

`function<｜tool_sep｜>` before an invoke may be left out (and the name written after it), and
calls may be separated by `<｜tool_sep｜>`. Values are raw text, typed by the tool's schema.
A section left open right after a complete call is whole.
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..jsoncall import calls_in_section
from ..model import Decodable, Problem
from ..scan import Opening, TokenFinder, starts
from .xmlcall import XML_RULES, Shape, as_text, decode_calls

NAME = "step3"
BEGIN, END = "<｜tool_calls_begin｜>", "<｜tool_calls_end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool_call_begin｜>", "<｜tool_call_end｜>", "<｜tool_sep｜>"
QUOTED_NAME = r"""\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')"""
SHAPE = Shape(
    call=re.compile(f"<steptml:invoke{QUOTED_NAME}\\s*>"),
    call_close="</steptml:invoke>",
    call_tag='<steptml:invoke name="{}">',
    parameter=re.compile(f"<steptml:parameter{QUOTED_NAME}\\s*>"),
    parameter_tag='<steptml:parameter name="{}">',
    parameter_close="</steptml:parameter>",
)


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, BEGIN, final)
    if r is not True:
        return r or None
    return Opening(NAME, base + j, j + len(BEGIN), TokenFinder(END, CALL_END), decode, BEGIN)


def decode(block: str) -> list[Decodable | Problem]:
    body = (
        block[len(BEGIN) :].removesuffix(END).replace(CALL_END + SEP, CALL_END)
    )  # a separator between calls
    return calls_in_section(body, CALL_BEGIN, CALL_END, decode_call)


HEAD = re.compile(rf"\s*(?:function{SEP}[\w.\-]*\s*)?")


def decode_call(call: str) -> Decodable | Problem:
    """`function<｜tool_sep｜>` (and the name again) before the invoke may be left out."""
    head = HEAD.match(call)
    assert head is not None  # the pattern also matches nothing
    found = decode_calls(call[head.end() :], SHAPE)
    if len(found) != 1:
        return (
            Problem("a call holds one <steptml:invoke>")
            if not found or isinstance(found[0], Decodable)
            else found[0]
        )
    return found[0]


def render(name: str, arguments: dict) -> str:
    params = "".join(
        f'<steptml:parameter name="{k}">{as_text(v)}</steptml:parameter>' for k, v in arguments.items()
    )
    return f'{BEGIN}{CALL_BEGIN}function{SEP}<steptml:invoke name="{name}">{params}</steptml:invoke>{CALL_END}{END}'


DIALECT = Dialect(
    name=NAME,
    label="<｜tool_calls_begin｜> steptml",
    summary='<steptml:invoke name="NAME"> in <｜tool_calls_begin｜> sections (Step3)',
    prefixes=(BEGIN,),
    opening=opening,
    render=render,
    rules=(
        f'- Write {BEGIN}, then for each call {CALL_BEGIN}function{SEP}<steptml:invoke name="NAME">, its parameters, </steptml:invoke>{CALL_END}; end with {END}.',
        *XML_RULES,
    ),
    stray_closers=(END,),
    lists_parameters=True,
)
