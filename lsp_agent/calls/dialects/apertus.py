"""Apertus: a JSON list of one-key objects, the tool's name to its arguments:

<|tools_prefix|>[{"read": {"path": "a.py"}}]<|tools_suffix|>
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, load
from ..model import Decodable, Problem
from .sections import between

NAME = "apertus"
OPEN, CLOSE = "<|tools_prefix|>", "<|tools_suffix|>"


def decode_body(body: str) -> Sequence[Decodable | Problem]:
    try:
        value = load(body)
    except ValueError as exc:
        closers = missing_closers(body)
        if closers == "":
            return [Problem(f"invalid JSON: {exc}")]
        if closers is None or len(closers) > 2 or body.rstrip()[-1:] not in "}]":
            return [Problem("the list is cut short inside a call", cut=True)]
        try:  # cut right after a call's arguments: only the list's brackets are missing
            value = load(body + closers)
        except ValueError:
            return [Problem("the list is cut short inside a call", cut=True)]
    items = value if isinstance(value, list) else [value]
    if not items:
        return [Problem("an empty list: no call in it")]
    return [one_call(n, item) for n, item in enumerate(items, 1)]


def missing_closers(body: str) -> str | None:
    """The brackets that would close what `body` leaves open ("" when balanced), or None
    when it ends inside a string (cut short there)."""
    stack: list[str] = []
    in_string = escaped = False
    for c in body:
        if in_string:
            in_string, escaped = (c != '"' or escaped), (c == "\\" and not escaped)
        elif c == '"':
            in_string = True
        elif c in "[{":
            stack.append("]" if c == "[" else "}")
        elif c in "]}" and stack:
            stack.pop()
    return None if in_string else "".join(reversed(stack))


def one_call(n: int, item: object) -> Decodable | Problem:
    if not isinstance(item, dict) or len(item) != 1:
        return Problem(f'element {n}: expected one {{"NAME": {{arguments}}}} object')
    ((name, arguments),) = item.items()
    if not name.strip() or not isinstance(arguments, dict):
        return Problem(f"element {n}: the arguments of {name!r} must be an object")
    return Decodable(name.strip(), arguments)


# The suffix may be missing: the list ends where its brackets balance.
# A list cut short right after a call's arguments is whole, but for its closing brackets (as
# vLLM heals it); cut anywhere else, it is reported.
opening, decode = between(NAME, OPEN, None, decode_body, first="[", last_inner=CLOSE, cut_ok=True)


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}{json.dumps([{name: arguments}], ensure_ascii=False)}{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<|tools_prefix|>",
    summary='<|tools_prefix|>[{"NAME": {arguments}}]<|tools_suffix|> (Apertus)',
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(
        "- Write a JSON list of objects, each with one key: the tool's name, its value the arguments object.",
        JSON_RULES[1],
    ),
    stray_closers=(CLOSE,),
)
