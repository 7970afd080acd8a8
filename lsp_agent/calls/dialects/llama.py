"""Llama 3.1 to 3.3 with JSON tool calling: one object per call, `"parameters"` (or
`"arguments"`) holding the arguments, several calls separated by `;`:

    <|python_tag|>{"name": "read", "parameters": {"path": "a.py"}}; {"name": "overview", "parameters": {}}

With `<|python_tag|>` in front the block is unambiguous (`llama`, read by default). Without
it (`llama_json`, asked for by model family) a block is an object whose first key is
"name", anywhere in the reply: prose that shows such JSON is read as a call.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import call_from_object, load
from ..model import Decodable, Problem
from ..scan import PARTIAL, TAG_LIMIT, JsonSequenceFinder, Opening, skip_ws, starts

NAME, NAME_BARE = "llama", "llama_json"
TAG = "<|python_tag|>"
NAME_KEY = re.compile(r'\{\s*"name"\s*:')


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, TAG, final)
    if r is not True:
        return r or None
    end = j + len(TAG)
    k = skip_ws(text, end)
    if k == len(text) and not final:
        return PARTIAL
    return Opening(NAME, base + j, end, JsonSequenceFinder(), decode, TAG)


def opening_bare(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    if text[j] != "{":
        return None
    if NAME_KEY.match(text, j, j + TAG_LIMIT):
        return Opening(NAME_BARE, base + j, j, JsonSequenceFinder(), decode, "{")
    window = text[j : j + TAG_LIMIT]
    if not final and len(window) < TAG_LIMIT and '"name"'.startswith(window[1:].lstrip()[:6]):
        return PARTIAL
    return None


def decode(block: str) -> list[Decodable | Problem]:
    body = block.removeprefix(TAG).strip().removesuffix(";")
    out: list[Decodable | Problem] = []
    for n, part in enumerate(split_objects(body), 1):
        try:
            value = load(part)
        except ValueError as exc:
            out.append(Problem(f"call {n}: invalid JSON: {exc}"))
            continue
        if isinstance(value, dict) and "parameters" not in value and "arguments" not in value:
            out.append(Problem(f'call {n}: no "parameters" object'))
            continue
        out.append(call_from_object(value))
    return out


def split_objects(body: str) -> list[str]:
    """The `;`-separated objects (a `;` inside a string is part of the string)."""
    parts, depth, start, in_string, escaped = [], 0, 0, False, False
    for k, c in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
        elif c == ";" and depth == 0:
            parts.append(body[start:k])
            start = k + 1
    parts.append(body[start:])
    return [p for p in parts if p.strip()]


def render(name: str, arguments: dict) -> str:
    return TAG + json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)


def render_bare(name: str, arguments: dict) -> str:
    return json.dumps({"name": name, "parameters": arguments}, ensure_ascii=False)


RULES = (
    '- Write one JSON object per call: "name" is the tool\'s name, "parameters" an object of its arguments; separate several calls with ";".',
    '- Write valid JSON: escape line breaks inside strings as \\n and quotes as \\".',
)
DIALECT = Dialect(
    name=NAME,
    label="<|python_tag|>",
    summary='<|python_tag|>{"name": …, "parameters": …} (Llama 3.1-3.3)',
    prefixes=(TAG,),
    opening=opening,
    render=render,
    rules=RULES,
)
DIALECT_BARE = Dialect(
    name=NAME_BARE,
    label='{"name": …, "parameters": …}',
    summary='bare {"name": …, "parameters": …} objects (Llama 3.x JSON; asked for only)',
    prefixes=("{",),
    opening=opening_bare,
    render=render_bare,
    rules=RULES,
)
