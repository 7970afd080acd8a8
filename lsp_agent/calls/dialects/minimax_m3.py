"""MiniMax-M3: every tag of a call carries the namespace token `]<]minimax[>[`, and each
argument is an element of its own, nested elements making objects:

    NS<tool_call>
    NS<invoke name="read">NS<path>a.py NS</path>NS<range>NS<start>3 NS</start>NS</range>NS</invoke>
    NS</tool_call>

(NS standing for the token, written right before each `<`.) A leaf's text is raw, typed by
the tool's schema for a top-level argument and read as JSON where it is one inside nested
elements; an element given twice makes a list, and children all named `item` a list too.
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..jsoncall import load
from ..model import Decodable, Problem
from ..scan import Opening, TokenFinder, starts
from .xmlcall import XML_RULES, as_text

NAME = "minimax_m3"
NS = "]<]minimax[>["
OPEN, CLOSE = f"{NS}<tool_call>", f"{NS}</tool_call>"
INVOKE_END = f"{NS}</invoke>"
TAG = re.compile(re.escape(NS) + r'<(/?)([\w.:\-]+)(?:\s+name="([^"]*)")?\s*>')


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    return Opening(NAME, base + j, j + len(OPEN), TokenFinder(CLOSE, INVOKE_END), decode, OPEN)


def decode(block: str) -> list[Decodable | Problem]:
    body = block[len(OPEN) :].removesuffix(CLOSE)
    tags = list(TAG.finditer(body))
    out: list[Decodable | Problem] = []
    k = 0
    while k < len(tags):
        m = tags[k]
        if m.group(1) or m.group(2) != "invoke" or not (m.group(3) or "").strip():
            out.append(Problem(f'expected {NS}<invoke name="NAME">, found {m.group(0)!r}'))
            return out
        found, k = element(body, tags, k)
        if isinstance(found, Problem):
            return [*out, found]
        arguments = found if isinstance(found, dict) else {}
        text_params = frozenset(key for key, v in arguments.items() if isinstance(v, Raw))
        out.append(
            Decodable(
                m.group(3).strip(),
                {key: str(v) if isinstance(v, Raw) else v for key, v in arguments.items()},
                text_params=text_params,
            )
        )
    return out or [Problem(f"no {NS}<invoke> in the block")]


class Raw(str):
    """A top-level leaf's text, typed later by the tool's schema."""


def element(body: str, tags: list[re.Match], k: int, depth: int = 0):
    """The value of the element opened by tags[k] and the index after its closing tag."""
    name, start = tags[k].group(2), tags[k].end()
    children: list[tuple[str, object]] = []
    k += 1
    while k < len(tags) and not tags[k].group(1):
        if depth > 32:
            return Problem("elements nested too deeply"), k
        child, k = element(body, tags, k, depth + 1)
        if isinstance(child, Problem):
            return child, k
        children.append((tags[k - 1].group(2), child))
    if k == len(tags) or tags[k].group(2) != name:
        return Problem(f"{NS}<{name}> is not closed"), k
    if not children:
        text = body[start : tags[k].start()].strip()
        return (Raw(text) if depth == 1 else leaf(text)), k + 1
    if all(key == "item" for key, _ in children) and name != "invoke":
        return [v for _, v in children], k + 1
    keys = [key for key, _ in children]
    value: dict[str, object] = {}
    for key, child in children:
        if keys.count(key) > 1:  # given more than once: a list, in order
            listed = value.setdefault(key, [])
            assert isinstance(listed, list)
            listed.append(child)
        else:
            value[key] = child
    return value, k + 1


def leaf(text: str) -> object:
    try:
        return load(text)
    except ValueError:
        return text


def render(name: str, arguments: dict) -> str:
    def write(key: str, value: object) -> str:
        if isinstance(value, dict):
            return f"{NS}<{key}>" + "".join(write(k, v) for k, v in value.items()) + f"{NS}</{key}>"
        return f"{NS}<{key}>{as_text(value)}{NS}</{key}>"

    inner = "".join(write(k, v) for k, v in arguments.items())
    return f'{OPEN}\n{NS}<invoke name="{name}">{inner}{INVOKE_END}\n{CLOSE}'


DIALECT = Dialect(
    name=NAME,
    label="]<]minimax[>[<tool_call>",
    summary="namespaced <invoke> elements, one per argument (MiniMax-M3)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(
        f"- Write {NS} right before every tag; each argument is an element named after it, objects as nested elements.",
        XML_RULES[0],
    ),
    stray_closers=(CLOSE,),
    lists_parameters=True,
)
