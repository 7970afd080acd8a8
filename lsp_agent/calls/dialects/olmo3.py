"""OLMo 3: Python calls, one per line, inside `<function_calls>`:

    <function_calls>
    read(path='a.py')
    search(query="x", limit=3)
    </function_calls>

Values are Python literals (JSON's true, false and null are read too). The tag claims a
block only when a call follows it; `<function_calls>` followed by `<invoke` is invoke XML.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..model import Decodable, Problem
from ..scan import NAME_LIMIT, PARTIAL, WS_LIMIT, Opening, TokenFinder, run_end, skip_ws, starts
from .pythonic import IDENTIFIER, RULES, call_from, parse

NAME = "olmo3"
OPEN, CLOSE = "<function_calls>", "</function_calls>"


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    r = starts(text, j, OPEN, final)
    if r is not True:
        return r or None
    end = j + len(OPEN)
    k = skip_ws(text, end)
    e = run_end(IDENTIFIER, text, k, k + NAME_LIMIT + 1)
    if e == len(text) or (e == k and k == len(text)):
        return None if final else PARTIAL
    if e == k or e - k > NAME_LIMIT or k > end + WS_LIMIT:
        return None
    p = skip_ws(text, e)
    if p == len(text):
        return None if final else PARTIAL
    if text[p] != "(":
        return None
    return Opening(NAME, base + j, end, TokenFinder(CLOSE), decode, OPEN)


def decode(block: str) -> list[Decodable | Problem]:
    body = block[len(OPEN) :].removesuffix(CLOSE)
    out: list[Decodable | Problem] = []
    for n, line in enumerate((x for x in body.splitlines() if x.strip()), 1):
        try:
            node = parse(line.strip()).body
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            out.append(Problem(f"line {n} of the calls is not a Python call: {getattr(exc, 'msg', exc)}"))
            continue
        out.append(call_from(n, node))
    return out or [Problem(f"no call in {OPEN}")]


def render(name: str, arguments: dict) -> str:
    return f"{OPEN}\n{name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})\n{CLOSE}"


DIALECT = Dialect(
    name=NAME,
    label="<function_calls> Python",
    summary="<function_calls> with one Python call per line (OLMo 3)",
    prefixes=(OPEN,),
    opening=opening,
    render=render,
    rules=(
        '- Write one call per line: tool_name(argument="value", other=3), keyword arguments only.',
        RULES[1],
    ),
    stray_closers=(CLOSE,),
)
