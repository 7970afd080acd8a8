"""DeepSeek V3, R1 and V3.1 (the tokens use fullwidth bars ｜ and ▁ for spaces):

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read
    ```json
    {"path": "a.py"}
    ```<｜tool▁call▁end｜><｜tool▁calls▁end｜>                       (V3, R1)

    <｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"path": "a.py"}<｜tool▁call▁end｜><｜tool▁calls▁end｜>   (V3.1)

A section may hold several calls. A section the reply leaves open right after a complete
call is whole (the model stopped before the section's closer). A tool's output echoed between
`<｜tool▁output▁begin｜>` and `<｜tool▁output▁end｜>` is text, its tokens removed (as Ollama).
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import call_with_arguments, calls_in_section
from ..model import Decodable, Problem
from ..scan import PARTIAL, Opening, Scanner, TokenFinder, starts
from .sections import layout

NAME = "deepseek"
BEGIN, END = "<｜tool▁calls▁begin｜>", "<｜tool▁calls▁end｜>"
CALL_BEGIN, CALL_END, SEP = "<｜tool▁call▁begin｜>", "<｜tool▁call▁end｜>", "<｜tool▁sep｜>"
FENCED = re.compile(r"\s*```(?:json)?\s*\n(.*?)\n?\s*```\s*$", re.DOTALL)


# A tool's output the template echoes in the reply: its tokens are layout, the text stays.
TOOL_OUTPUT = ("<｜tool▁output▁begin｜>", "<｜tool▁output▁end｜>")
tool_output = layout(NAME, TOOL_OUTPUT)


def opening(text: str, j: int, base: int, final: bool, scanner: Scanner) -> Opening | object | None:
    r = starts(text, j, BEGIN, final)
    if r is PARTIAL:
        return r
    if r is not True:
        return tool_output(text, j, base, final, scanner)
    end = j + len(BEGIN)
    return Opening(NAME, base + j, end, TokenFinder(END, CALL_END), decode, BEGIN)


def decode(block: str) -> list[Decodable | Problem]:
    return calls_in_section(block[len(BEGIN) :].removesuffix(END), CALL_BEGIN, CALL_END, decode_call)


def decode_call(call: str) -> Decodable | Problem:
    head, sep, args = call.partition(SEP)
    if not sep:
        return Problem(f"a call has no {SEP}")
    if head.strip() == "function":  # V3: the type, then the name on the same line, then fenced JSON
        name, _, args = args.partition("\n")
        fenced = FENCED.match(args)
        if fenced is None:
            return Problem(f"the arguments of {name.strip()} are not in a ```json fence")
        args = fenced.group(1)
    else:
        name = head
    name = name.strip()
    if not name:
        return Problem("a call has an empty name")
    return call_with_arguments(name, args)


def render(name: str, arguments: dict) -> str:
    return f"{BEGIN}{CALL_BEGIN}{name}{SEP}{json.dumps(arguments, ensure_ascii=False)}{CALL_END}{END}"


DIALECT = Dialect(
    name=NAME,
    label="<｜tool▁calls▁begin｜>",
    summary="<｜tool▁calls▁begin｜> sections (DeepSeek V3, R1, V3.1)",
    prefixes=(BEGIN, *TOOL_OUTPUT),
    opening=opening,
    render=render,
    rules=(
        f"- Write {BEGIN}, then for each call {CALL_BEGIN}, the tool's name, {SEP}, the arguments as one JSON object and {CALL_END}; end with {END}.",
    ),
    stray_closers=(END,),
)
