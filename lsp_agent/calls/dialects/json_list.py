"""A bare JSON list of call objects, `[{"name": "read", "arguments": {…}}]` (xLAM). The list
claims a block only when its first element opens with a "name" key; read only when asked
for (answers show such lists as data)."""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, calls_from_json
from ..model import Decodable, Problem
from ..scan import PARTIAL, JsonValueFinder, Opening

NAME = "json_list"
HEAD = re.compile(r'\[\s*\{\s*"name"\s*:')
LOOK = 64


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    if HEAD.match(text, j, j + LOOK):
        return Opening(NAME, base + j, j, JsonValueFinder("[", "the end of the JSON list"), decode, "[{")
    window = text[j : j + LOOK]
    if not final and len(window) < LOOK and '[{"name":'.startswith(re.sub(r"\s+", "", window)):
        return PARTIAL  # the window ends inside what may still be the head
    return None


def decode(block: str) -> list[Decodable | Problem]:
    return calls_from_json(block)


def render(name: str, arguments: dict) -> str:
    return json.dumps([{"name": name, "arguments": arguments}], ensure_ascii=False)


DIALECT = Dialect(
    name=NAME,
    label="[{…}] JSON",
    summary='a bare JSON list of {"name", "arguments"} objects (xLAM; asked for only)',
    prefixes=("[",),
    opening=opening,
    render=render,
    rules=(
        '- Write a JSON list of call objects: "name" is the tool\'s name, "arguments" an object.',
        JSON_RULES[1],
    ),
)
