"""Mistral: `[TOOL_CALLS][{"name": "read", "arguments": {…}}, …]` (an array, as in the
older tokenizers) and `[TOOL_CALLS]read[ARGS]{"path": "a.py"}` (one call per marker, with
an optional `[CALL_ID]id` before `[ARGS]`, as in the newer ones). `[ARGS]` may be missing:
`[TOOL_CALLS]read{"path": "a.py"}` is how servers that drop that special token from the
text show the newer form.

There is no closing tag: the block ends where the JSON value's brackets balance. The
marker claims a block only when an array, `NAME[ARGS]` or `NAME{` follows it.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import calls_from_json, load
from ..model import Decodable, Problem
from ..scan import (
    CLOSED,
    NAME_LIMIT,
    PARTIAL,
    WS_LIMIT,
    End,
    JsonValueFinder,
    Openers,
    Opening,
    OpenToEnd,
    read_name,
    run_end,
    skip_ws,
    starts,
)

NAME = "mistral"
MARK, ARGS, CALL_ID = "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"
ID_CHARS = re.compile(r"[\w\-]*")


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    r = starts(text, j, MARK, final)
    if r is not True:
        return r or None
    end = j + len(MARK)
    k = skip_ws(text, end)
    if k > end + WS_LIMIT:
        return junk(text, j, base, end)
    if k == len(text):
        if not final:
            return PARTIAL
        return Opening(NAME, base + j, k, JsonValueFinder("[", "the JSON array"), decode, MARK)
    if text[k] == "[":
        # `[TOOL_CALLS][ARGS]…` (no name) is not a call; a split `[AR` must wait to be told apart.
        marker = [starts(text, k, m, final) for m in (CALL_ID, ARGS)]
        if PARTIAL in marker:
            return PARTIAL
        if True in marker:
            return junk(text, j, base, end)
        return Opening(NAME, base + j, k, JsonValueFinder("[", "the end of the JSON array"), decode, MARK)
    return named(text, j, k, base, final)


def named(text: str, j: int, k: int, base: int, final: bool) -> Opening | object | None:
    """The newer form from its name at text[k]: `NAME[CALL_ID]id[ARGS]{`, `NAME{`."""
    end = j + len(MARK)
    got = read_name(text, k, final)
    if got is PARTIAL:
        return PARTIAL
    if got is None:
        return junk(text, j, base, end)
    _, e = got
    r = starts(text, e, CALL_ID, final)
    if r is PARTIAL:
        return PARTIAL
    if r:
        e = run_end(ID_CHARS, text, e + len(CALL_ID), e + len(CALL_ID) + NAME_LIMIT + 1)
        if e == len(text) and not final:
            return PARTIAL
    r = starts(text, e, ARGS, final)
    if r is PARTIAL:
        return PARTIAL
    if r:
        e += len(ARGS)
    elif e == len(text):  # the reply ended after the name
        return Opening(NAME, base + j, e, OpenToEnd(ARGS), decode, text[j:e])
    elif not text.startswith("{", e):
        return junk(text, j, base, end)
    token = text[j:e]
    return Opening(NAME, base + j, e, JsonValueFinder("{", "the end of the JSON arguments"), decode, token)


def junk(text: str, j: int, base: int, end: int) -> Opening:
    """The marker followed by something that is not a call: up to a JSON array of calls on
    the same line (vLLM searches past the text before it), else reported to the end of its
    line (the marker is a special token: it never starts prose)."""
    return Opening(NAME, base + j, end, PastJunk(), decode_junk, MARK)


class PastJunk:
    """Text after the marker, to the first `[{` of its line (then the array's end) or to the
    line's end; a new opener ends it too."""

    expects = "the end of the JSON array"
    EVENT = re.compile(r"[\n\[<]")

    def __init__(self) -> None:
        self.array: JsonValueFinder | None = None

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        if self.array is not None:
            return self.array.scan(text, i, base, final, openers)
        for m in self.EVENT.finditer(text, i):
            j = m.start()
            if text[j] == "\n":
                return j, End(base + j, CLOSED)
            o = openers.opening_at(text, j, base, final)
            if o is PARTIAL:
                return j, None
            if o is not None:
                return j, End(base + j, CLOSED)
            if text[j] == "<":
                continue
            k = skip_ws(text, j + 1)
            if k == len(text) and not final:
                return j, None
            if k < len(text) and text[k] == "{":
                self.array = JsonValueFinder("[", self.expects)
                return self.array.scan(text, j, base, final, openers)
        return len(text), (End(base + len(text), CLOSED) if final else None)


ARRAY_START = re.compile(r"\[\s*\{")


def decode_junk(block: str) -> list[Decodable | Problem]:
    array = ARRAY_START.search(block, len(MARK))
    if array is not None:
        return calls_from_json(block[array.start() :])
    line = block[len(MARK) :].strip()
    found = repr(line[:40] + ("…" if len(line) > 40 else "")) if line else "nothing"
    return [Problem(f"expected a JSON array or NAME[ARGS]{{…}} after {MARK}, found {found}")]


HEADER = re.compile(r"\[TOOL_CALLS\]\s*(?:([\w.:\-]+)(?:\[CALL_ID\]([\w\-]*))?(\[ARGS\])?)?")


def decode(block: str) -> list[Decodable | Problem]:
    m = HEADER.match(block)
    assert m is not None  # the block was claimed on this marker
    body = block[m.end() :]
    if m.group(1) is None:
        return calls_from_json(body)
    try:
        arguments = load(body)
    except ValueError as exc:
        return [Problem(f"invalid JSON after {m.group(3) or m.group(1)}: {exc}")]
    if not isinstance(arguments, dict):
        return [Problem(f"the arguments after {m.group(3) or m.group(1)} must be a JSON object")]
    return [Decodable(m.group(1), arguments, m.group(2) or None)]


def render(name: str, arguments: dict) -> str:
    return f"{MARK}{name}{ARGS}{json.dumps(arguments, ensure_ascii=False)}"


DIALECT = Dialect(
    name=NAME,
    label="[TOOL_CALLS]",
    summary="[TOOL_CALLS]NAME[ARGS]{…} (Mistral)",
    prefixes=(MARK,),
    opening=opening,
    render=render,
    rules=(
        "- Write [TOOL_CALLS], the tool's name, [ARGS], then the arguments as one JSON object, with nothing between them.",
        "- Write valid JSON: escape line breaks inside strings as \\n.",
    ),
)
