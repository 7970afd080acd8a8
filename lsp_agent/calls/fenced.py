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

import re

from .jsoncall import calls_from_json
from .model import Decodable, Problem
from .scan import CLOSED, OPEN, PARTIAL, TAG_LIMIT, End, Opening

GRAMMAR = "fenced_json"
INFO = "tool_call"


class ExampleFence:
    """An example fence opening at window index `start`; its first line ends at `end`."""

    def __init__(self, finder: "FenceFinder", end: int):
        self.finder, self.end = finder, end


RUN = re.compile(r"(`{3,}|~{3,})")


def opening(text: str, j: int, base: int, final: bool):
    """At a line start (the scrubber checks): a fence opener, a tool_call fence, or nothing."""
    m = RUN.match(text, j)
    if m is None:
        rest = text[j:]
        if not final and len(rest) < 3 and rest == rest[0] * len(rest):
            return PARTIAL
        return None
    line_end = text.find("\n", m.end(), j + TAG_LIMIT)
    if line_end < 0:
        if not final and len(text) < j + TAG_LIMIT:
            return PARTIAL
        if len(text) >= j + TAG_LIMIT:
            return None
        line_end = len(text)
    info = text[m.end() : line_end].strip(" \t\r")
    fence = m.group(1)
    if fence[0] == "`" and "`" in info:
        return None  # inline code such as ```x```, not a fence
    finder = FenceFinder(fence[0], len(fence))
    if info == INFO:
        return Opening(GRAMMAR, base + j, line_end, finder, decode, text[j:line_end].rstrip("\r"))
    return ExampleFence(finder, line_end)


class FenceFinder:
    """The closing fence: a line of at most three spaces, then at least as many fence
    characters as the opener, then only spaces or tabs."""

    def __init__(self, char: str, count: int):
        self.char, self.count = char, count
        self.closing = re.compile(rf"[ ]{{0,3}}({re.escape(char)}{{{count},}})[ \t\r]*(?:\n|$)")
        self.expects = f"the closing {char * count}"
        self.at_line_start = False  # the finder starts on the opening line's line break

    def scan(self, text, i, base, final, openers):
        n = len(text)
        while True:
            if self.at_line_start:
                m = self.closing.match(text, i)
                if m and (m.group(0).endswith("\n") or final):
                    return m.end(1), End(base + m.end(1), CLOSED)
                if not final and self._may_close(text, i):
                    return i, None  # the line so far could still be the closing fence
                self.at_line_start = False
            j = text.find("\n", i)
            if j < 0:
                return n, (End(base + n, OPEN) if final else None)
            i, self.at_line_start = j + 1, True

    def _may_close(self, text: str, k: int) -> bool:
        line = text[k:]
        if "\n" in line or len(line) > TAG_LIMIT:
            return False
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3:
            return False
        run = len(stripped) - len(stripped.lstrip(self.char))
        tail = stripped[run:]
        return (run == len(stripped)) or (run >= self.count and tail.strip(" \t\r") == "")


def decode(block: str) -> list[Decodable | Problem]:
    first = block.find("\n")
    last = block.rfind("\n")
    if first < 0 or last <= first:
        body = "" if first < 0 else block[first + 1 :]
    else:
        body = block[first + 1 : last]
    if not body.strip():
        return [Problem("the tool_call fence is empty")]
    return calls_from_json(body)
