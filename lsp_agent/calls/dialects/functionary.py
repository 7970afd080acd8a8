"""Functionary v3.2: each message to a recipient starts with `>>>RECIPIENT` and a line break;
`all` is the answer, any other recipient a tool called with one JSON object:

    >>>all
    Reading it.>>>read
    {"path": "a.py"}

The prompt ends with the first `>>>`, so the reply starts right after it (`all\\n…` or
`read\\n{…}`). Read only when asked for (by family): at the reply's start a name on a line
of its own followed by a JSON object is a call. The recipient `python` takes raw code to the
end of the reply (`>>>python\\nprint(1)`): a call of the tool `python` with {"code": …}, as
llama.cpp reads it.
"""

from __future__ import annotations

import json

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, call_with_arguments
from ..model import Decodable, Problem
from ..scan import PARTIAL, ClosedAt, JsonValueFinder, Opening, OpenToEnd, read_name, starts

NAME = "functionary"
MARK = ">>>"
ANSWER = "all"
PYTHON = "python"  # its message is Python code, not JSON: a call of `python` with {"code": …}


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, MARK, final)
    if r is not True:
        return r or None
    return recipient(text, j, j + len(MARK), base, final)


def reply_start(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    return recipient(text, j, j, base, final)


def recipient(text: str, j: int, k: int, base: int, final: bool) -> Opening | object | None:
    """`NAME\\n` at text[k] (the message's header starting at text[j]): the answer's header
    (layout), or a call when a JSON object follows."""
    got = read_name(text, k, final)
    if got is None or got is PARTIAL:
        return got
    name, e = got
    r = starts(text, e, "\n", final)
    if r is not True:
        return r or None
    if name == ANSWER:
        return Opening(NAME, base + j, e + 1, ClosedAt(base + e + 1), lambda block: [], text[j : e + 1])
    r = starts(text, e + 1, "{", final)
    if r is PARTIAL or (r is not True and name != PYTHON):
        return r or None
    if r is not True:  # the python recipient takes raw code, to the end of the reply
        return Opening(
            NAME,
            base + j,
            e + 1,
            OpenToEnd("the end of the reply"),
            decode_code,
            text[j : e + 1],
            cut_ok=True,
        )
    return Opening(
        NAME, base + j, e + 1, JsonValueFinder("{", "the end of the JSON arguments"), decode, text[j : e + 1]
    )


def decode(block: str) -> list[Decodable | Problem]:
    head, _, arguments = block.partition("\n")
    return [call_with_arguments(head.removeprefix(MARK), arguments)]


def decode_code(block: str) -> list[Decodable | Problem]:
    return [Decodable(PYTHON, {"code": block.partition("\n")[2]})]


def render(name: str, arguments: dict) -> str:
    return f"{MARK}{name}\n{json.dumps(arguments, ensure_ascii=False)}"


DIALECT = Dialect(
    name=NAME,
    label=">>>NAME",
    summary=">>>NAME, a line break and the arguments as JSON (Functionary v3.2; asked for only)",
    prefixes=(MARK,),
    opening=opening,
    render=render,
    rules=(
        f"- Write {MARK}, the tool's name, a line break, then the arguments as one JSON object.",
        JSON_RULES[1],
    ),
    reply_start=reply_start,
)
