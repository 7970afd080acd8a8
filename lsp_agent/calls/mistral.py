"""Mistral: `[TOOL_CALLS][{"name": "read", "arguments": {…}}, …]` (an array, as in the
older tokenizers) and `[TOOL_CALLS]read[ARGS]{"path": "a.py"}` (one call per marker, with
an optional `[CALL_ID]id` before `[ARGS]`, as in the newer ones).

There is no closing tag: the block ends where the JSON value's brackets balance. The
marker claims a block only when an array or `NAME[ARGS]` follows it.
"""

from __future__ import annotations

import json
import re

from .jsoncall import calls_from_json
from .model import Decodable, Problem
from .scan import NAME_LIMIT, PARTIAL, WS_LIMIT, JsonValueFinder, Opening, read_name, skip_ws, starts

GRAMMAR = "mistral"
MARK, ARGS, CALL_ID = "[TOOL_CALLS]", "[ARGS]", "[CALL_ID]"
ID_CHARS = re.compile(r"[\w\-]*")


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    r = starts(text, j, MARK, final)
    if r is not True:
        return r or None
    end = j + len(MARK)
    k = skip_ws(text, end)
    if k > end + WS_LIMIT:
        return None
    if k == len(text):
        if not final:
            return PARTIAL
        return Opening(GRAMMAR, base + j, k, JsonValueFinder("[", "the JSON array"), decode, MARK)
    if text[k] == "[" and not text.startswith(CALL_ID, k) and not text.startswith(ARGS, k):
        return Opening(GRAMMAR, base + j, k, JsonValueFinder("[", "the end of the JSON array"), decode, MARK)
    got = read_name(text, k, final)
    if got is None or got is PARTIAL:
        return got
    _, e = got
    r = starts(text, e, CALL_ID, final)
    if r is PARTIAL:
        return PARTIAL
    if r:
        m = ID_CHARS.match(text, e + len(CALL_ID), e + len(CALL_ID) + NAME_LIMIT + 1)
        if m.end() == len(text) and not final:
            return PARTIAL
        e = m.end()
    r = starts(text, e, ARGS, final)
    if r is not True:
        return r or None
    e += len(ARGS)
    token = text[j:e]
    return Opening(GRAMMAR, base + j, e, JsonValueFinder("{", "the end of the JSON arguments"), decode, token)


HEADER = re.compile(r"\[TOOL_CALLS\]\s*(?:([\w.:\-]+)(?:\[CALL_ID\]([\w\-]*))?\[ARGS\])?")


def decode(block: str) -> list[Decodable | Problem]:
    m = HEADER.match(block)
    body = block[m.end() :]
    if m.group(1) is None:
        return calls_from_json(body)
    try:
        arguments = json.loads(body)
    except json.JSONDecodeError as exc:
        return [Problem(f"invalid JSON after [ARGS]: {exc.msg} at line {exc.lineno} column {exc.colno}")]
    if not isinstance(arguments, dict):
        return [Problem("the arguments after [ARGS] must be a JSON object")]
    return [Decodable(m.group(1), arguments, m.group(2) or None)]
