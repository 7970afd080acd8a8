"""Fenced blocks. A fence whose info string is `tool_call` holds a call as JSON (the same
object or array as tagged JSON):

    ```tool_call
    {"name": "read", "arguments": {"path": "a.py"}}
    ```

A fence with any other info string (```python, ```xml, or none) is an example: its text is
shown as is and nothing in it is a call. Fences follow CommonMark: at most three spaces of
indentation, three or more backticks or tildes, closed by a line of at least as many of
the same character.
"""

from __future__ import annotations

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, call_object, calls_from_json
from ..model import Decodable, Problem
from ..scan import PARTIAL, ExampleFence, FenceFinder, Opening, fence_line

NAME = "fenced_json"
INFO = "tool_call"


def opening(
    text: str, j: int, base: int, final: bool, scanner: object
) -> Opening | ExampleFence | object | None:
    """At a line start (the scrubber checks): a tool_call fence, an example fence, or nothing."""
    found = fence_line(text, j, final)
    if found is None or found is PARTIAL:
        return found
    char, count, info, line_end = found
    finder = FenceFinder(char, count)
    if info == INFO:
        return Opening(NAME, base + j, line_end, finder, decode, text[j:line_end].rstrip("\r"))
    return ExampleFence(finder, line_end)


def decode(block: str) -> list[Decodable | Problem]:
    """The body lies between the opening line and the closing fence's line."""
    first, last = block.find("\n"), block.rfind("\n")
    body = block[first + 1 : last] if last > first else ""
    if not body.strip():
        return [Problem("the tool_call fence is empty")]
    return calls_from_json(body)


def render(name: str, arguments: dict) -> str:
    return f"```tool_call\n{call_object(name, arguments)}\n```"


DIALECT = Dialect(
    name=NAME,
    label="```tool_call fence",
    summary="a ```tool_call fenced block holding a JSON object",
    prefixes=("`", "~"),
    opening=opening,
    render=render,
    rules=JSON_RULES,
    line_start=True,
)
