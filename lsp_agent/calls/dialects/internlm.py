"""InternLM2: a plugin action between special tokens, one call object per action:

<|action_start|><|plugin|>
{"name": "read", "parameters": {"path": "a.py"}}<|action_end|>
"""

from __future__ import annotations

import json

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, calls_from_json
from .sections import between

NAME = "internlm"
OPEN, CLOSE = "<|action_start|><|plugin|>", "<|action_end|>"
opening, decode = between(NAME, OPEN, CLOSE, calls_from_json)


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}\n{json.dumps({'name': name, 'parameters': arguments}, ensure_ascii=False)}{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<|action_start|><|plugin|>",
    summary="<|action_start|><|plugin|> call object <|action_end|> (InternLM2)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(
        '- The action holds one JSON object: "name" is the tool\'s name, "parameters" an object.',
        JSON_RULES[1],
    ),
    stray_closers=(CLOSE,),
)
