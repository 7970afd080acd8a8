"""LFM2 and LFM2.5: a Python list of calls (or a JSON list of call objects) between special
tokens, the closer optional (a string value may hold raw line breaks):

    <|tool_call_start|>[read(path='a.py')]<|tool_call_end|>
"""

from __future__ import annotations

from ..dialect import Dialect
from ..jsoncall import calls_from_json
from ..model import Decodable, Problem
from ..scan import Opening, PythonListFinder, WithTrailer, starts
from .pythonic import RULES, escape_line_breaks, quotes_mended
from .pythonic import decode as decode_pythonic
from .pythonic import render as render_pythonic

NAME = "lfm2"
OPEN, CLOSE = "<|tool_call_start|>", "<|tool_call_end|>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    return Opening(
        NAME,
        base + j,
        j + len(OPEN),
        WithTrailer(PythonListFinder(line_breaks_in_strings=True), CLOSE),
        decode,
        OPEN,
    )


def decode(block: str) -> list[Decodable | Problem]:
    body = block[len(OPEN) :].rstrip().removesuffix(CLOSE).strip()
    if body.startswith("[") and body[1:].lstrip().startswith("{"):
        return calls_from_json(body)
    if body.replace(" ", "") == "[]":
        return []  # the model called nothing
    return decode_pythonic(escape_line_breaks(body), mend=lambda _: quotes_mended(body, escape_line_breaks))


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}{render_pythonic(name, arguments)}{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<|tool_call_start|>",
    summary="<|tool_call_start|>[NAME(argument=value)]<|tool_call_end|> (LFM2, LFM2.5)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=RULES,
    stray_closers=(CLOSE,),
)
