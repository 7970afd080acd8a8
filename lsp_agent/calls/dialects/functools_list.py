"""`functools[…]`: a JSON list of call objects after the word functools, with no closer
(Phi-4-mini, FireFunction v2):

    functools[{"name": "read", "arguments": {"path": "a.py"}}]

The block ends where the list's brackets balance. Read only when asked for (by family).
"""

from __future__ import annotations

import json

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, calls_from_json
from .sections import between

NAME = "functools"
OPEN = "functools"
opening, decode = between(NAME, OPEN, None, calls_from_json, first="[")


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}{json.dumps([{'name': name, 'arguments': arguments}], ensure_ascii=False)}"


DIALECT = Dialect(
    name=NAME,
    label="functools[…]",
    summary="functools[ JSON list of calls ] (Phi-4-mini, FireFunction v2; asked for only)",
    prefixes=(OPEN + "[",),
    opening=opening,
    render=render,
    rules=('- Write functools, then a JSON list of call objects: "name" and "arguments".', JSON_RULES[1]),
)
