"""Calls written as JSON objects: {"name": …, "arguments": {…}} (shared by tagged JSON,
fenced blocks and Mistral's array form)."""

from __future__ import annotations

import json
from typing import Any

from .model import Decodable, Problem


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
            arguments = json.loads(arguments)
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
        value = json.loads(body)
    except json.JSONDecodeError as exc:
        return [Problem(f"invalid JSON: {exc.msg} at line {exc.lineno} column {exc.colno} of the body")]
    if isinstance(value, list):
        if not value:
            return [Problem("an empty array: no call in it")]
        out: list[Decodable | Problem] = []
        for n, item in enumerate(value, 1):
            got = call_from_object(item)
            out.append(Problem(f"element {n}: {got.reason}") if isinstance(got, Problem) else got)
        return out
    return [call_from_object(value)]


def json_type(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number"
    )
