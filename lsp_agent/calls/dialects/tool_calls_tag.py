"""A JSON list of call objects in `<tool_calls>` tags (Hunyuan A13B, Jamba, Apriel):

    <tool_calls>[{"name": "read", "arguments": {"path": "a.py"}}]</tool_calls>

The tag claims a block only when a JSON array or object follows it; otherwise it is prose
that mentions the tag.
"""

from __future__ import annotations

import json

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, calls_from_json
from .sections import between

NAME = "tool_calls_tag"
OPEN, CLOSE = "<tool_calls>", "</tool_calls>"
opening, decode = between(NAME, OPEN, CLOSE, calls_from_json, first="[{")


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}{json.dumps([{'name': name, 'arguments': arguments}], ensure_ascii=False)}{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<tool_calls> JSON",
    summary="<tool_calls> tags around a JSON list of calls (Hunyuan A13B, Jamba, Apriel)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(
        '- The tags hold a JSON list of call objects: "name" is the tool\'s name, "arguments" an object.',
        JSON_RULES[1],
    ),
    stray_closers=(CLOSE,),
)
