"""Kimi K3's XTML: every span opens with `<|open|>NAME attrs<|sep|>` and closes with
`<|close|>NAME<|sep|>`.

    <|open|>think<|sep|>The user wants a.py.<|close|>think<|sep|>
    <|open|>response<|sep|>Reading it.<|close|>response<|sep|>
    <|open|>tools<|sep|><|open|>call tool="read" index="1"<|sep|>
    <|open|>argument key="path" type="string"<|sep|>a.py<|close|>argument<|sep|>
    <|close|>call<|sep|><|close|>tools<|sep|><|close|>message<|sep|>

A call's arguments are `argument` spans (a `type="string"` value is text as written, any
other type a JSON value) or one `json` span holding the arguments object. Attribute values
escape `"` as `&quot;` and `&` as `&amp;`. The `think` span is reasoning (the prompt opens it
in thinking mode: the reply starts inside it); the response and message tokens are layout and
leave the visible text. A tools section left open right after a complete call is whole, and a
call written without its section is a section of its own.
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..jsoncall import call_with_arguments, load
from ..model import Decodable, Problem
from ..scan import PARTIAL, ClosedAt, Opening, ReasoningFinder, TokenFinder, reasoning_decoder, starts
from .xmlcall import as_text

NAME = "kimi_k3"
SEP = "<|sep|>"
TOOLS, TOOLS_END = f"<|open|>tools{SEP}", f"<|close|>tools{SEP}"
CALL, CALL_END = "<|open|>call", f"<|close|>call{SEP}"
THINK, THINK_END = f"<|open|>think{SEP}", f"<|close|>think{SEP}"
LAYOUT = (f"<|open|>response{SEP}", f"<|close|>response{SEP}", f"<|close|>message{SEP}", "<|end_of_msg|>")
ATTR = re.compile(r'\s+([\w\-]+)="([^"]*)"')
SPAN = re.compile(
    r"\s*<\|open\|>(argument|json)((?:\s+[\w\-]+=\"[^\"]*\")*)<\|sep\|>(.*?)<\|close\|>\1<\|sep\|>", re.DOTALL
)
CALL_HEAD = re.compile(r"\s*<\|open\|>call((?:\s+[\w\-]+=\"[^\"]*\")*)<\|sep\|>")


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    partial = False
    for token in (TOOLS, THINK, CALL, *LAYOUT):
        r = starts(text, j, token, final)
        if r is PARTIAL:
            partial = True
        elif r:
            end = j + len(token)
            if token == TOOLS:
                return Opening(NAME, base + j, end, TokenFinder(TOOLS_END, CALL_END), decode, token)
            if token == THINK:
                finder = ReasoningFinder((THINK_END,))
                return Opening(NAME, base + j, end, finder, decode_think, token, open_ok=True)
            if token == CALL:
                return Opening(NAME, base + j, end, TokenFinder(CALL_END), decode_calls, token)
            return Opening(NAME, base + j, end, ClosedAt(base + end), lambda block: [], token)
    return PARTIAL if partial else None


decode_think = reasoning_decoder((THINK,), (THINK_END,))


def decode(block: str) -> list[Decodable | Problem]:
    return decode_calls(block[len(TOOLS) :].removesuffix(TOOLS_END))


def decode_calls(body: str) -> list[Decodable | Problem]:
    """Each `call` span in order; the first thing that is not one ends the run."""
    out: list[Decodable | Problem] = []
    pos = 0
    while body[pos:].strip():
        head = CALL_HEAD.match(body, pos)
        end = body.find(CALL_END, pos)
        if head is None or end < 0:
            out.append(
                Problem(
                    f'expected {CALL} tool="NAME"{SEP}…{CALL_END}, found {body[pos : pos + 40].strip()!r}'
                )
            )
            return out
        out.append(decode_call(attributes(head.group(1)), body[head.end() : end]))
        pos = end + len(CALL_END)
    return out or [Problem(f"no {CALL} in the tools section")]


def decode_call(attrs: dict[str, str], inner: str) -> Decodable | Problem:
    name = attrs.get("tool", "").strip()
    if not name:
        return Problem(f'{CALL} has no tool="NAME"')
    arguments: dict[str, object] = {}
    text_params: set[str] = set()
    pos = 0
    while inner[pos:].strip():
        m = SPAN.match(inner, pos)
        if m is None:
            return Problem(
                f"in {name}: expected an argument or json span, found {inner[pos : pos + 40].strip()!r}"
            )
        kind, span_attrs, value = m.group(1), attributes(m.group(2)), m.group(3)
        pos = m.end()
        if kind == "json":
            return (
                call_with_arguments(name, value)
                if not inner[pos:].strip()
                else Problem(f"in {name}: text after the json span")
            )
        key = span_attrs.get("key", "")
        if not key:
            return Problem(f'in {name}: an argument has no key="NAME"')
        if span_attrs.get("type", "string") == "string":
            arguments[key] = value
            text_params.add(key)
            continue
        try:
            arguments[key] = load(value)
        except ValueError:
            arguments[key] = value
            text_params.add(key)
    return Decodable(name, arguments, text_params=frozenset(text_params))


def attributes(text: str) -> dict[str, str]:
    return {k: v.replace("&quot;", '"').replace("&amp;", "&") for k, v in ATTR.findall(text)}


def type_name(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if isinstance(value, dict) else "array" if isinstance(value, list) else "null"


def render(name: str, arguments: dict) -> str:
    spans = "".join(
        f'<|open|>argument key="{k}" type="{type_name(v)}"{SEP}{as_text(v)}<|close|>argument{SEP}'
        for k, v in arguments.items()
    )
    return f'{TOOLS}{CALL} tool="{name}" index="1"{SEP}{spans}{CALL_END}{TOOLS_END}'


DIALECT = Dialect(
    name=NAME,
    label="<|open|>tools<|sep|>",
    summary='<|open|>tools<|sep|> sections of <|open|>call tool="NAME"<|sep|> spans (Kimi K3)',
    prefixes=(TOOLS, THINK, CALL, *LAYOUT),
    opening=opening,
    render=render,
    rules=(
        f'- Write {TOOLS}, then for each call {CALL} tool="NAME" index="N"{SEP}, its arguments and {CALL_END}; end with {TOOLS_END}.',
        f'- Write each argument as <|open|>argument key="NAME" type="string"{SEP}text<|close|>argument{SEP}, or with another type and a JSON value.',
    ),
    stray_closers=(TOOLS_END,),
    lists_parameters=True,
    reasoning_closer=THINK_END,
    reasoning_opener=THINK,
)
