"""GLM-4.5, 4.6 and 4.7: the tool's name right after `<tool_call>`, then key/value pairs:

    <tool_call>read
    <arg_key>path</arg_key>
    <arg_value>a.py</arg_value>
    </tool_call>

Values are text; where the tool's schema wants another type they are read as JSON, or as
a Python literal (`True`, `{'a': 1}`). `<tool_call>` followed by JSON is tagged JSON; GLM
claims the tag only when a name is followed by `<arg_key>` or `</tool_call>`.
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import NAME_LIMIT, PARTIAL, WS_LIMIT, Opening, TokenFinder, match_tag
from .xmlcall import XML_RULES, as_text

NAME = "glm"
OPEN, CLOSE = "<tool_call>", "</tool_call>"
VALUE_CLOSE = "</arg_value>"
HEAD = re.compile(r"[ \t]*([\w.:\-]+)\s*(<arg_key>|</tool_call>)")
NAME_AND_SPACE = re.compile(r"[ \t]*[\w.:\-]*\s*")
LOOK = NAME_LIMIT + WS_LIMIT  # how far past <tool_call> the name and the first tag may lie
# A value ends at its closer or, when that is missing, where the next key begins (it never
# swallows the next pair); the last value of the call may lose its closer too.
PAIR = re.compile(
    r"\s*<arg_key>(.*?)</arg_key>\s*<arg_value>(.*?)(?:</arg_value>|(?=\s*<arg_key>)|\s*$)", re.DOTALL
)


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = match_tag(text, j, "tool_call", final)
    if r is PARTIAL:
        return PARTIAL
    if not r:
        return None
    _, end = r
    m = HEAD.match(text, end, end + LOOK)
    if m is None:
        return PARTIAL if not final and may_become_head(text[end : end + LOOK]) else None
    # A reply that ends right after a complete pair is a whole call without its closer.
    return Opening(NAME, base + j, end, TokenFinder(CLOSE, VALUE_CLOSE), decode, text[j:end])


def may_become_head(window: str) -> bool:
    """Whether more text could still make `window` a name followed by <arg_key> or </tool_call>."""
    if len(window) >= LOOK:
        return False
    lead = NAME_AND_SPACE.match(window)
    rest = window[lead.end() :] if lead else window
    return any(tag.startswith(rest) for tag in ("<arg_key>", CLOSE))


def decode(block: str) -> list[Decodable | Problem]:
    body = block[len(OPEN) :].removesuffix(CLOSE)
    head = HEAD.match(body + CLOSE)
    if head is None:
        return [Problem("no tool name after <tool_call>")]
    name, pos = head.group(1), head.start(2)
    arguments: dict[str, object] = {}
    while pos < len(body.rstrip()):
        m = PAIR.match(body, pos)
        if m is None:
            return [
                Problem(
                    f"in {name}: expected <arg_key>…</arg_key><arg_value>…</arg_value>, found {body[pos : pos + 30].strip()!r}"
                )
            ]
        key = m.group(1).strip()
        arguments[key] = m.group(2).strip()  # given twice: the last value counts, as the peers read it
        pos = m.end()
    return [Decodable(name, arguments, text_params=frozenset(arguments))]


def render(name: str, arguments: dict) -> str:
    pairs = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{as_text(v)}</arg_value>\n" for k, v in arguments.items()
    )
    return f"{OPEN}{name}\n{pairs}{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<tool_call>NAME <arg_key>",
    summary="<tool_call>NAME with <arg_key>/<arg_value> pairs (GLM-4.5, 4.6, 4.7)",
    prefixes=("<tool_call",),
    opening=opening,
    render=render,
    rules=XML_RULES,
    lists_parameters=True,
)
