"""Calls written as JSON objects: {"name": …, "arguments": {…}} (shared by tagged JSON,
fenced blocks and Mistral's array form)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from .model import Decodable, Problem

# Real arguments nest a few levels. Deeper JSON is refused: it would overflow the recursion
# of the JSON decoder, the schema validator or the encoder of the answer.
MAX_DEPTH = 64

# The prompt's rules for dialects whose block holds a call object.
JSON_RULES = (
    '- The block holds one JSON object: "name" is the tool\'s name, "arguments" an object of its parameters.',
    '- Write valid JSON: escape line breaks inside strings as \\n and quotes as \\".',
)


def call_object(name: str, arguments: dict) -> str:
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


class NotJson(ValueError):
    """Why a model's text is not JSON we accept, in a few words."""


def load(text: str) -> Any:
    """json.loads for a model's text; every failure is a NotJson: bad syntax (with its line
    and column), NaN or an infinite number (not JSON, and not encodable in an answer),
    nesting deeper than MAX_DEPTH, or an integer too long to convert."""
    try:
        value = json.loads(text, parse_constant=not_json, parse_float=finite_float)
    except NotJson:
        raise
    except json.JSONDecodeError as exc:
        raise NotJson(f"{exc.msg} at line {exc.lineno} column {exc.colno} of the JSON") from None
    except RecursionError:
        raise NotJson(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError:  # the only other: an integer beyond sys.get_int_max_str_digits()
        raise NotJson("an integer with too many digits") from None
    if depth(value) > MAX_DEPTH:
        raise NotJson(f"nested deeper than {MAX_DEPTH} levels")
    return value


def not_json(constant: str) -> Any:
    raise NotJson(f"{constant} is not a JSON value")


def finite_float(literal: str) -> float:
    number = float(literal)
    if number in (float("inf"), float("-inf")):
        raise NotJson(f"{literal} is out of range for a number")
    return number


def depth(value: Any) -> int:
    """How deeply arrays and objects nest in `value` (iterative: no recursion to overflow)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                stack.extend((v, level + 1) for v in (item.values() if isinstance(item, dict) else item))
    return deepest


def call_from_object(obj: Any) -> Decodable | Problem:
    if not isinstance(obj, dict):
        return Problem(f'expected an object with "name" and "arguments", got {json_type(obj)}')
    name = obj.get("name")
    if name is None:
        return Problem('the object has no "name"')
    if not isinstance(name, str):
        return Problem(f'"name" must be a string, got {json_type(name)}')
    if not name.strip():
        return Problem('"name" is empty')
    key = "arguments" if "arguments" in obj else "parameters" if "parameters" in obj else None
    arguments = obj.get(key, {}) if key else {}
    if isinstance(arguments, str):  # OpenAI style: the arguments as a JSON string
        try:
            arguments = load(arguments)
        except ValueError as exc:
            return Problem(f'"{key}" is a string that is not valid JSON: {exc}')
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return Problem(f'"{key}" must be an object, got {json_type(arguments)}')
    call_id = obj.get("id")
    return Decodable(name.strip(), arguments, call_id if isinstance(call_id, str) and call_id else None)


def calls_from_json(body: str) -> list[Decodable | Problem]:
    """One call object, or an array of them (each element decoded on its own, so one bad
    element never discards the others)."""
    try:
        value = load(body)
    except ValueError as exc:
        elements = json_elements(body)
        if elements is None:
            return [Problem(f"invalid JSON: {exc}")]
        return [got if isinstance(got, Problem) else call_from_object(got) for got in elements]
    if isinstance(value, list):
        if not value:
            return [Problem("an empty array: no call in it")]
        out: list[Decodable | Problem] = []
        for n, item in enumerate(value, 1):
            got = call_from_object(item)
            out.append(Problem(f"element {n}: {got.reason}") if isinstance(got, Problem) else got)
        return out
    return [call_from_object(value)]


def json_elements(body: str) -> list[Any] | None:
    """The objects of a list that is not JSON as a whole, each read alone (a Problem where
    one is not JSON): `[{…}, {…}]` with one bad object, objects without their commas
    (`[{…}{…}]`, as Ollama reads Cohere's), or without the brackets (`{…}, {…}`, as SGLang
    reads two calls in one tag). None when the body is not such a list of several objects
    (then it is bad JSON as a whole)."""
    text = body.strip()
    inner = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    spans: list[tuple[int, int]] = []
    i, n = 0, len(inner)
    while i < n:
        c = inner[i]
        if c in " \t\r\n" or (c == "," and spans and inner[spans[-1][1] - 1] == "}"):
            i += 1
        elif c == "{":
            end = object_end(inner, i)
            if end is None:
                return None
            spans.append((i, end))
            i = end
        else:
            return None
    if not spans or (len(spans) == 1 and inner is text):
        return None
    out: list[Any] = []
    for n_, (a, b) in enumerate(spans, 1):
        try:
            out.append(load(inner[a:b]))
        except ValueError as exc:
            out.append(Problem(f"element {n_}: invalid JSON: {exc}"))
    return out


def object_end(text: str, i: int) -> int | None:
    """The index after the object that opens at text[i] (braces balanced outside strings)."""
    depth, in_string, escaped = 0, False, False
    for k in range(i, len(text)):
        c = text[k]
        if in_string:
            in_string, escaped = (c != '"' or escaped), (c == "\\" and not escaped)
        elif c == '"':
            in_string = True
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return None


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )


def call_with_arguments(name: str, text: str, call_id: str | None = None) -> Decodable | Problem:
    """A call whose arguments are written as one JSON object (nothing at all means {})."""
    try:
        arguments = load(text) if text.strip() else {}
    except ValueError as exc:
        return Problem(f"the arguments of {name} are not valid JSON: {exc}")
    if not isinstance(arguments, dict):
        return Problem(f"the arguments of {name} must be a JSON object")
    return Decodable(name, arguments, call_id)


def calls_in_section(
    body: str, call_begin: str, call_end: str, decode_call: Callable[[str], Decodable | Problem]
) -> list[Decodable | Problem]:
    """The calls of a section of special tokens (`<｜tool▁call▁begin｜>…<｜tool▁call▁end｜>`,
    Kimi's alike), each decoded alone by `decode_call`; text outside them is reported."""
    out: list[Decodable | Problem] = []
    before, *calls = body.split(call_begin)
    if before.strip():
        out.append(Problem(f"text before the first {call_begin}: {before.strip()[:40]!r}"))
    for call in calls:
        if call.rstrip().endswith(call_end):
            out.append(decode_call(call.rstrip().removesuffix(call_end)))
        else:
            out.append(Problem(f"a call has no {call_end}"))
    return out or [Problem(f"no {call_begin} in the section")]
