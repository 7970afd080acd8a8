"""DeepSeek V3.2's DSML (invoke XML with ｜DSML｜ in every tag):

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="read">
    <｜DSML｜parameter name="path" string="true">a.py</｜DSML｜parameter>
    <｜DSML｜parameter name="start" string="false">3</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

DeepSeek V4 writes the same invokes inside `<｜DSML｜tool_calls>…</｜DSML｜tool_calls>`.

`string="true"` marks a value that is text as written; `string="false"` a JSON value. A
section left open right after a complete invoke is whole.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import PARTIAL, Opening, TokenFinder, starts
from .xmlcall import Shape, decode_calls

NAME = "deepseek_dsml"
TAG = "｜DSML｜"
SECTIONS = (
    (f"<{TAG}function_calls>", f"</{TAG}function_calls>"),  # V3.2
    (f"<{TAG}tool_calls>", f"</{TAG}tool_calls>"),  # V4
)
BEGIN, END = SECTIONS[0]
INVOKE_END, PARAMETER_END = f"</{TAG}invoke>", f"</{TAG}parameter>"
QUOTED_NAME = r"""\s+name\s*=\s*(?:"([^"]*)"|'([^']*)')"""
SHAPE = Shape(
    call=re.compile(f"<{TAG}invoke{QUOTED_NAME}\\s*>"),
    call_close=INVOKE_END,
    call_tag=f'<{TAG}invoke name="{{}}">',
    parameter=re.compile(
        f'<{TAG}parameter{QUOTED_NAME}(?:\\s+string\\s*=\\s*"(?P<string>true|false)")?\\s*>'
    ),
    parameter_tag=f'<{TAG}parameter name="{{}}">',
    parameter_close=PARAMETER_END,
)


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    partial = False
    for begin, end in SECTIONS:
        r = starts(text, j, begin, final)
        if r is True:
            return Opening(NAME, base + j, j + len(begin), TokenFinder(end, INVOKE_END), decode, begin)
        partial = partial or r is PARTIAL
    return PARTIAL if partial else None


def decode(block: str) -> list[Decodable | Problem]:
    begin, end = next(s for s in SECTIONS if block.startswith(s[0]))
    calls = decode_calls(block[len(begin) :].removesuffix(end), SHAPE)
    return calls or [Problem(f"no <{TAG}invoke> in the section")]


def render(name: str, arguments: dict) -> str:
    params = "".join(
        f'<{TAG}parameter name="{k}" string="true">{v}{PARAMETER_END}\n'
        if isinstance(v, str)
        else f'<{TAG}parameter name="{k}" string="false">{json.dumps(v, ensure_ascii=False)}{PARAMETER_END}\n'
        for k, v in arguments.items()
    )
    return f'{BEGIN}\n<{TAG}invoke name="{name}">\n{params}{INVOKE_END}\n{END}'


DIALECT = Dialect(
    name=NAME,
    label="<｜DSML｜function_calls>",
    summary='<｜DSML｜invoke name="NAME"> inside <｜DSML｜function_calls> (DeepSeek V3.2; <｜DSML｜tool_calls> in V4)',
    prefixes=tuple(begin for begin, _ in SECTIONS),
    opening=opening,
    render=render,
    rules=(
        '- Write each parameter as <｜DSML｜parameter name="NAME" string="true">text</｜DSML｜parameter>, or with string="false" and a JSON value.',
        "- Close every tag you open.",
    ),
    stray_closers=tuple(end for _, end in SECTIONS),
    lists_parameters=True,
)
