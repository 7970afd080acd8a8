"""Kimi K2:

    <|tool_calls_section_begin|><|tool_call_begin|>functions.read:0<|tool_call_argument_begin|>{"path": "a.py"}<|tool_call_end|><|tool_calls_section_end|>

The call id is `functions.NAME:INDEX` as written (the tool's name is between the dot and the
colon; `functions.` may be left out). A bare counter (`0`, as vLLM's tests show Kimi K2
writing it) names no tool: the call is the one tool whose parameters hold every argument
given, and is reported when none or several fit. The section tokens are also written in the singular (`<|tool_call_section_begin|>`).
A section left open right after a complete call is whole, and a call written without its
section opener (`<|tool_call_begin|>…<|tool_call_end|>`, as servers that drop the section
token show it) is a section of its own; the section closer after it belongs to it. A call
whose arguments are whole needs no `<|tool_call_end|>` when the next call or the reply's end
follows (as llama.cpp reads it).
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import call_with_arguments
from ..model import Decodable, Problem
from ..scan import PARTIAL, Opening, TokenFinder, WithTrailer, starts

NAME = "kimi_k2"
SECTIONS = (
    ("<|tool_calls_section_begin|>", "<|tool_calls_section_end|>"),
    ("<|tool_call_section_begin|>", "<|tool_call_section_end|>"),
)
CALL_BEGIN, ARGS, CALL_END = "<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>"
CALL_ID = re.compile(r"\s*(?:functions\.)?([\w.\-]+):\d+\s*$")


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    partial = False
    for begin, end in SECTIONS:
        r = starts(text, j, begin, final)
        if r is True:
            section = TokenFinder(end, CALL_END)
            return Opening(NAME, base + j, j + len(begin), section, decode, begin, cut_ok=True)
        partial = partial or r is PARTIAL
    r = starts(text, j, CALL_BEGIN, final)
    if r is True:
        finder = WithTrailer(TokenFinder(CALL_END), SECTIONS[0][1])
        return Opening(NAME, base + j, j + len(CALL_BEGIN), finder, decode_bare, CALL_BEGIN, cut_ok=True)
    return PARTIAL if partial or r is PARTIAL else None


def decode_bare(block: str) -> list[Decodable | Problem]:
    body = block.rstrip()
    return calls_of(body.removesuffix(SECTIONS[0][1]), open_end=not body.endswith((CALL_END, SECTIONS[0][1])))


def decode(block: str) -> list[Decodable | Problem]:
    begin, end = next(s for s in SECTIONS if block.startswith(s[0]))
    body = block[len(begin) :].rstrip()
    return calls_of(body.removesuffix(end), open_end=not body.endswith(end))


def calls_of(body: str, open_end: bool) -> list[Decodable | Problem]:
    """The calls of a section; a call whose arguments are whole needs no end token (the next
    call or the reply's end ends it, as llama.cpp reads Kimi K2); the last one, arguments
    cut short where nothing closed the block, is cut short, not malformed."""
    before, *calls = body.split(CALL_BEGIN)
    out: list[Decodable | Problem] = []
    if before.strip():
        out.append(Problem(f"text before the first {CALL_BEGIN}: {before.strip()[:40]!r}"))
    for n, call in enumerate(calls, 1):
        call = call.rstrip()
        got = decode_call(call.removesuffix(CALL_END))
        if call.endswith(CALL_END) or isinstance(got, Decodable):
            out.append(got)
        elif n == len(calls) and open_end:
            out.append(Problem(f"the reply ended inside a call, before {CALL_END}", cut=True))
        else:
            out.append(Problem(f"a call has no {CALL_END}"))
    return out or [Problem(f"no {CALL_BEGIN} in the section")]


def decode_call(call: str) -> Decodable | Problem:
    call_id, sep, args = call.partition(ARGS)
    if not sep:
        return Problem(f"a call has no {ARGS}")
    m = CALL_ID.match(call_id)
    if m is not None:
        return call_with_arguments(m.group(1), args, call_id.strip())
    if call_id.strip().isdecimal():  # a bare counter: the arguments must say which tool
        got = call_with_arguments("the call", args, call_id.strip())
        if isinstance(got, Decodable):
            got.unnamed = True
        return got
    return Problem(f"{call_id.strip()[:60]!r} is not a call id (functions.NAME:INDEX)")


def render(name: str, arguments: dict) -> str:
    begin, end = SECTIONS[0]
    args = json.dumps(arguments, ensure_ascii=False)
    return f"{begin}{CALL_BEGIN}functions.{name}:0{ARGS}{args}{CALL_END}{end}"


DIALECT = Dialect(
    name=NAME,
    label="<|tool_calls_section_begin|>",
    summary="<|tool_calls_section_begin|> sections with functions.NAME:INDEX ids (Kimi K2)",
    prefixes=(*(begin for begin, _ in SECTIONS), CALL_BEGIN),
    opening=opening,
    render=render,
    rules=(
        f"- Write {SECTIONS[0][0]}, then for each call {CALL_BEGIN}functions.NAME:INDEX{ARGS}, the arguments as one JSON object and {CALL_END}; end with {SECTIONS[0][1]}.",
        "- INDEX counts the calls of the conversation from 0.",
    ),
    stray_closers=tuple(end for _, end in SECTIONS),
)
