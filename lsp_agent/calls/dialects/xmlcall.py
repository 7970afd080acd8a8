"""Calls written as XML elements (shared by function XML and invoke XML): a run of call
elements, each holding parameter elements whose values are raw text.

    <function=read><parameter=path>a.py</parameter></function>
    <invoke name="read"><parameter name="path">a.py</parameter></invoke>

A value on lines of its own (a line break right after a parameter's opening tag) loses that
line break and the one right before its closing tag: they are layout; the rest is kept as
written (the tool set JSON-decodes a value
where the tool's schema wants a non-string).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ..jsoncall import call_with_arguments, load
from ..model import Decodable, Problem
from ..scan import find_unfenced

PARAMETER_CLOSE = "</parameter>"

# The prompt's rules for dialects whose values are raw text.
XML_RULES = (
    "- Write each parameter's value as plain text (no escaping, no quotes); numbers, booleans, arrays and objects as JSON.",
    "- Close every tag you open.",
)


def as_text(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class Shape:
    """How one XML dialect writes a call and its parameters."""

    call: re.Pattern  # the call's opening tag; its first matching group is the name
    call_close: str
    call_tag: str  # for messages, with {} for the name: '<function={}>'
    parameter: re.Pattern  # a parameter's opening tag; its first matching group is the name
    parameter_tag: str  # '<parameter={}>'
    parameter_close: str = PARAMETER_CLOSE
    # A group `string` in `parameter` (DeepSeek's string="true|false"): "false" means the value
    # is JSON; "true" that it is text, typed by the schema like any other raw value.


def decode_calls(body: str, shape: Shape, wrapper_closed: bool = False) -> list[Decodable | Problem]:
    """Each call element in `body`, in order; the first thing that is not one ends the run
    with a Problem (what came before it still counts). `wrapper_closed`: the body's wrapper
    was closed, which closes its last call too when its last parameter is closed
    (`<tool_call><function=f><parameter=a>1</parameter></tool_call>`, as SGLang reads it)."""
    out: list[Decodable | Problem] = []
    pos = 0
    while True:
        pos = skip_space(body, pos)
        if pos == len(body):
            return out
        m = shape.call.match(body, pos)
        if not m:
            out.append(Problem(f"expected {shape.call_tag.format('NAME')}, found {snippet(body, pos)}"))
            return out
        end = find_unfenced(body, shape.call_close, m.end())
        rest = body[m.end() :].rstrip()
        if end < 0 and wrapper_closed and rest.endswith(shape.parameter_close):
            out.append(decode_call(name_of(m), rest, shape))  # whole but for its own closer
            return out
        if end < 0:
            where = " before the wrapper's closer" if wrapper_closed else ""
            out.append(Problem(f"{m.group(0)} has no {shape.call_close}{where}"))
            return out
        out.append(decode_call(name_of(m), body[m.end() : end], shape))
        pos = end + len(shape.call_close)


def decode_call(name: str, inner: str, shape: Shape) -> Decodable | Problem:
    """A call's parameters. A parameter's value ends at its closer or, when the closer is
    missing, where the next parameter (or the call) begins, as the peers read it: a missing
    closer never makes the next parameter part of a value."""
    name = name.strip()
    if not name:
        return Problem(f"{shape.call_tag.format('')} has an empty name")
    where = f"in {shape.call_tag.format(name)}"
    if inner.strip().startswith("{") and not shape.parameter.search(inner):
        # The arguments as one JSON object (`<function=NAME>{"a": 1}</function>`: Llama 3.1,
        # Hermes 2 Pro and Functionary as llama.cpp reads them).
        return call_with_arguments(name, inner.strip())
    arguments: dict[str, object] = {}
    text_params: set[str] = set()
    pos = 0
    while True:
        pos = skip_space(inner, pos)
        if pos == len(inner):
            return Decodable(name, arguments, text_params=frozenset(text_params))
        m = shape.parameter.match(inner, pos)
        if not m:
            expected = shape.parameter_tag.format("NAME")
            return Problem(f"{where}: expected {expected}, found {snippet(inner, pos)}")
        key = name_of(m).strip()
        if not key:
            return Problem(f"{where}: a parameter has an empty name")
        value, pos = parameter_value(inner, m.end(), shape)  # given twice: the last counts
        text_params.discard(key)
        string = m.groupdict().get("string")
        if string == "false":
            try:
                arguments[key] = load(value.strip())
            except ValueError:
                arguments[key] = value
                text_params.add(key)
        else:  # text; read as JSON where the tool's schema wants another type
            arguments[key] = value
            text_params.add(key)


def parameter_value(inner: str, start: int, shape: Shape) -> tuple[str, int]:
    """(the value, where to go on) for a parameter whose opening tag ends at `start`."""
    close = find_unfenced(inner, shape.parameter_close, start)
    following = shape.parameter.search(inner, start)
    if following is not None and (close < 0 or following.start() < close):
        return unclosed_value(inner[start : following.start()]), following.start()
    if close < 0:
        return unclosed_value(inner[start:]), len(inner)
    return layout_stripped(inner[start:close]), close + len(shape.parameter_close)


def name_of(m: re.Match) -> str:
    return next(g for g in m.groups() if g is not None)


def layout_stripped(value: str) -> str:
    """The value without the line breaks of a template that writes it on lines of its own
    (`<parameter=x>\\nv\\n</parameter>`, Qwen3-Coder's); written inline (Seed-OSS's), a
    final line break is the value's own, as llama.cpp reads it."""
    for brk in ("\r\n", "\n"):
        if value.startswith(brk):
            value = value[len(brk) :]
            return value.removesuffix("\r\n") if value.endswith("\r\n") else value.removesuffix("\n")
    return value


def unclosed_value(value: str) -> str:
    """A value whose closing tag is missing: the line break before the next tag is layout."""
    value = layout_stripped(value.rstrip(" \t"))
    return value.removesuffix("\r\n") if value.endswith("\r\n") else value.removesuffix("\n")


def skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def snippet(text: str, pos: int) -> str:
    s = text[pos : pos + 30].split("\n")[0]
    return repr(s + ("…" if len(text) - pos > len(s) else ""))
