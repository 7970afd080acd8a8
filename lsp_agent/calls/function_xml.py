"""Function XML (Qwen3-Coder and others):

    <function=read>
    <parameter=path>
    a.py
    </parameter>
    </function>

with or without an outer `<tool_call>…</tool_call>` (which may hold several functions).
Parameter values are raw text: one line break right after `<parameter=K>` and one right
before `</parameter>` are layout and dropped; the rest is kept as written. The tool set
JSON-decodes a value when the tool's schema wants a non-string there.
"""

from __future__ import annotations

import re

from .model import Decodable, Problem
from .scan import PARTIAL, Opening, XmlFinder, find_unfenced, read_name, starts

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


FUNCTION = re.compile(r"<function=([^>\n]*)>")
PARAMETER = re.compile(r"<parameter=([^>\n]*)>")
WRAPPER = re.compile(r"<(tool_call|toolcall|tool-call)\b[^>]*>")


def decode_bare(block: str) -> list[Decodable | Problem]:
    return decode_functions(block)


def decode_wrapped(block: str) -> list[Decodable | Problem]:
    """`<tool_call>` + functions + (optionally) `</tool_call>`."""
    opener = WRAPPER.match(block)
    body = block[opener.end() :]
    closer = f"</{opener.group(1)}>"
    body = body.removesuffix(closer)
    return decode_functions(body)


def decode_functions(body: str) -> list[Decodable | Problem]:
    out: list[Decodable | Problem] = []
    pos = 0
    while True:
        pos = skip_space(body, pos)
        if pos == len(body):
            return out
        m = FUNCTION.match(body, pos)
        if not m:
            out.append(Problem(f"expected {OPEN}NAME>, found {snippet(body, pos)}"))
            return out
        end = find_unfenced(body, CLOSE, m.end())
        if end < 0:
            out.append(Problem(f"{m.group(0)} has no {CLOSE}"))
            return out
        out.append(function(m.group(1), body[m.end() : end]))
        pos = end + len(CLOSE)


def function(name: str, inner: str) -> Decodable | Problem:
    name = name.strip()
    if not name:
        return Problem("<function=> has an empty name")
    arguments: dict[str, str] = {}
    pos = 0
    while True:
        pos = skip_space(inner, pos)
        if pos == len(inner):
            return Decodable(name, arguments, text_params=frozenset(arguments))
        m = PARAMETER.match(inner, pos)
        if not m:
            return Problem(f"in <function={name}>: expected <parameter=NAME>, found {snippet(inner, pos)}")
        key = m.group(1).strip()
        end = find_unfenced(inner, "</parameter>", m.end())
        if not key:
            return Problem(f"in <function={name}>: a parameter has an empty name")
        if end < 0:
            return Problem(f"in <function={name}>: <parameter={key}> has no </parameter>")
        if key in arguments:
            return Problem(f"in <function={name}>: parameter {key!r} is given twice")
        arguments[key] = layout_stripped(inner[m.end() : end])
        pos = end + len("</parameter>")


def layout_stripped(value: str) -> str:
    if value.startswith("\r\n"):
        value = value[2:]
    elif value.startswith("\n"):
        value = value[1:]
    if value.endswith("\r\n"):
        value = value[:-2]
    elif value.endswith("\n"):
        value = value[:-1]
    return value


def skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def snippet(text: str, pos: int) -> str:
    s = text[pos : pos + 30].split("\n")[0]
    return repr(s + ("…" if len(text) - pos > len(s) else ""))
