"""Tagged JSON (Hermes, Qwen, …): `<tool_call>{"name": "read", "arguments": {…}}</tool_call>`.

Also `<tool_call id="…">`, the spellings `<toolcall>`, `<tool-call>` and Nemotron's
`<TOOLCALL>` (each closed by its own closer), and a JSON array of call objects in one block. An opener claims a block only when
its body starts with `{` or `[` (or `<function=`: function XML inside the tag, see
function_xml); otherwise it is prose that mentions the tag.

The closer is found by a JSON-aware scan: a `</tool_call>` inside a JSON string is part of
the string. A raw line break ends a string (JSON strings cannot hold one); if a string is
still open at the end of its line and held a closer or an opener, the first of them ends the
block (malformed: a closer closes it, an opener starts the next block), and for the rest of
that line quotes are out of step, so closers count wherever they are.
"""

from __future__ import annotations

import re

from ..dialect import Dialect
from ..jsoncall import JSON_RULES, call_object, calls_from_json
from ..model import Decodable, Problem
from ..scan import (
    CLOSED,
    MALFORMED,
    OPEN,
    PARTIAL,
    WS_LIMIT,
    End,
    EndsAt,
    Finder,
    HidesFences,
    Openers,
    Opening,
    match_tag,
    skip_ws,
    starts,
)
from .function_xml import NAME as FUNCTION_XML
from .function_xml import decode_wrapped, wrapped_finder

NAME = "tagged_json"
SPELLINGS = ("tool_call", "toolcall", "tool-call", "TOOLCALL")  # the last: Nemotron
CLOSERS = tuple(f"</{s}>" for s in SPELLINGS)


def opening(text: str, j: int, base: int, final: bool, scanner) -> Opening | object | None:
    partial = False
    for spelling in SPELLINGS:
        r = match_tag(text, j, spelling, final)
        if r is PARTIAL:
            partial = True
        elif r:
            break
    else:
        return PARTIAL if partial else None
    _, end = r
    token = text[j:end]
    k = skip_ws(text, end)
    if k > end + WS_LIMIT:
        return None
    if k == len(text):
        if not final:
            return PARTIAL
        # The reply ended right after the opener: a block whose body never came.
        return Opening(NAME, base + j, end, TaggedJsonFinder(spelling, None), decode, token)
    for spelling_again in SPELLINGS:  # `<tool_call><tool_call>{…}`: report the extra tag
        again = match_tag(text, k, spelling_again, final)
        if again is PARTIAL:
            return PARTIAL
        if again:
            finder: Finder = EndsAt(base + k, f"{token} is repeated: the block opens twice")
            return Opening(NAME, base + j, end, finder, decode, token)
    if text[k] in "{[":
        return Opening(NAME, base + j, end, TaggedJsonFinder(spelling, scanner.literal_until), decode, token)
    r = starts(text, k, "<function=", final)
    if r is PARTIAL:
        return PARTIAL
    if r:
        finder = wrapped_finder(f"</{spelling}>")
        return Opening(FUNCTION_XML, base + j, end, finder, decode_wrapped, token)
    return None


class TaggedJsonFinder(HidesFences):
    OUT = re.compile(r'["<\n]')
    IN = re.compile(r'[\\"\n<]')

    def __init__(self, spelling: str, literal_until: int | None):
        self.closer = f"</{spelling}>"
        self.expects = self.closer
        self.in_string = False
        self.suspect: int | None = None  # end of the first closer seen inside the open string
        # (start, token) of an opener seen inside the open string before any closer
        self.opener_inside: tuple[int, str] | None = None
        self.literal_until = literal_until or 0
        self.cut_string = False  # a raw line break cut a string: say so, it is the likely cause

    def scan_unfenced(self, text, i, base, final, openers):
        n, closer = len(text), self.closer
        while True:
            if not self.in_string:
                m = self.OUT.search(text, i)
                if m is None:
                    return n, (End(base + n, OPEN) if final else None)
                j = m.start()
                c = text[j]
                if c == '"':
                    if base + j >= self.literal_until:
                        self.in_string = True
                    i = j + 1
                    continue
                if c == "\n":
                    i, go_on = self.line_break(text, j, final)
                    if not go_on:
                        return i, None
                    continue
                r = starts(text, j, closer, final)
                if r is PARTIAL:
                    return j, None
                if r:
                    return j + len(closer), End(base + j + len(closer), CLOSED)
                o = openers.opening_at(text, j, base, final)
                if o is PARTIAL:
                    return j, None
                if o is not None:
                    return j, End(base + j, MALFORMED, f"no {closer} before the next opener {o.token}")
                i = j + 1
                continue
            m = self.IN.search(text, i)
            if m is None:
                if final:
                    return n, self._string_left_open(base + n, "the reply ended")
                return n, None
            j = m.start()
            c = text[j]
            if c == "\\":
                if j + 1 == n:
                    if final:
                        return n, self._string_left_open(base + n, "the reply ended")
                    return j, None
                # An escape pair; a raw line break after "\" still cuts the string.
                i = j + 2 if text[j + 1] != "\n" else j + 1
            elif c == '"':
                self.in_string, self.suspect, self.opener_inside, i = False, None, None, j + 1
            elif c == "\n":
                cut = self._line_ended_in_string(base + j)
                if cut is not None:
                    return j, cut
                # A cut string (invalid JSON); the break is seen again outside.
                self.in_string, self.cut_string, i = False, True, j
            else:  # "<"
                if not self._note_tag_in_string(text, j, base, final, openers):
                    return j, None
                i = j + 1

    def _note_tag_in_string(self, text: str, j: int, base: int, final: bool, openers: Openers) -> bool:
        """Note the first closer, or an opener before it, at text[j] inside a string: they
        count if the string's line ends with the string still open. False: cannot tell yet."""
        r = starts(text, j, self.closer, final)
        if r is PARTIAL:
            return False
        if r:
            if self.suspect is None:
                self.suspect = base + j + len(self.closer)
            return True
        if self.suspect is None and self.opener_inside is None:
            o = openers.opening_at(text, j, base, final)
            if o is PARTIAL:
                return False
            if o is not None:
                self.opener_inside = (base + j, o.token)
        return True

    def _line_ended_in_string(self, at: int) -> End | None:
        """A string still open at a raw line break (at): the end its first closer or opener
        gives the block, or None (no tag in it: the string is merely cut)."""
        if self.opener_inside is not None:  # noted only before any closer: it comes first
            start, token = self.opener_inside
            why = f"no {self.closer} before the next opener {token} (a JSON string was still open when its line ended)"
            return End(start, MALFORMED, why)
        if self.suspect is not None:
            return self._string_left_open(at, "its line ended")
        return None

    def _string_left_open(self, at: int, how: str) -> End:
        if self.suspect is None:
            return End(at, OPEN)
        why = f"a JSON string was still open when {how}; the {self.closer} inside it closes the block"
        if self.cut_string:
            why += " (a raw line break cut an earlier string: write line breaks in JSON strings as \\n)"
        return End(self.suspect, MALFORMED, why, literal_until=at)


def decode(block: str) -> list[Decodable | Problem]:
    spelling = next(s for s in SPELLINGS if block.startswith(s, 1))
    attrs, end = match_tag(block, 0, spelling, True)
    closer = next(c for c in CLOSERS if block.endswith(c))
    items = calls_from_json(block[end : len(block) - len(closer)])
    if attrs.get("id") and len(items) == 1 and isinstance(items[0], Decodable):
        items[0].id = attrs["id"]
    return items


def render(name: str, arguments: dict) -> str:
    return f"<tool_call>\n{call_object(name, arguments)}\n</tool_call>"


DIALECT = Dialect(
    name=NAME,
    label="<tool_call> JSON",
    summary="<tool_call> tags around a JSON object (Hermes, Qwen 2.5)",
    prefixes=tuple(f"<{s}" for s in SPELLINGS),
    opening=opening,
    render=render,
    rules=JSON_RULES,
    stray_closers=CLOSERS,
)
