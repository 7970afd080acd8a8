"""Primitives the dialects share for finding where a block ends, one window at a time.

A *finder* is a small state machine. The scrubber hands it the current window of input
(`text`, whose first character is at absolute offset `base`) and a position `i`; the finder
consumes what it can and returns `(pos, None)` when it needs more input (text[pos:] is a
partial token, carried to the next window; it is short and bounded), or `(pos, End)` when
the block ends. An `End` may lie before `pos` (the finder looked ahead): the scrubber scans
the text after it again, so each character is scanned a bounded number of times.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .model import Decodable, Problem, Reasoning

CLOSED, MALFORMED, OPEN = "closed", "malformed", "open"

# How far an opener may stretch before it is not an opener: bounds what is held back.
NAME_LIMIT = 128
TAG_LIMIT = 256
WS_LIMIT = 256

WS = " \t\r\n"
PARTIAL = object()  # "cannot tell yet: wait for more input"


@dataclass
class End:
    at: int  # absolute offset where the block ends (exclusive)
    status: str  # CLOSED: decode it; MALFORMED: report `reason`; OPEN: no closer by the end
    reason: str = ""
    literal_until: int | None = None  # see TaggedJsonFinder: quotes are out of step up to here
    # OPEN reasoning: where it ends after all (a call began in it)
    implicit_end: int | None = None


@dataclass
class Opening:
    """A claimed block starting at `start` (absolute); its opener ends at window index `end`."""

    dialect: str
    start: int
    end: int
    finder: Finder
    decode: Callable[[str], Sequence[Decodable | Problem | Reasoning]]
    token: str  # the opener as written, for messages
    open_ok: bool = False  # left open at the end of the reply, it is still whole (reasoning)
    # Left open at the end of a reply not cut by its length limit, its decoder says if it is whole.
    cut_ok: bool = False


class Openers(Protocol):
    candidates: re.Pattern  # where an opener may begin: one of the openers' first characters

    def opening_at(self, text: str, j: int, base: int, final: bool): ...


class Scanner(Openers, Protocol):
    """What a dialect's opener sees of the scrubber: the openers, and where quotes are out
    of step (a tagged-JSON block ended inside a string; see TaggedJsonFinder)."""

    literal_until: int


class Finder(Protocol):
    @property
    def expects(self) -> str: ...  # what would end the block, for messages: "</tool_call>"

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]: ...


def starts(text: str, i: int, token: str, final: bool):
    """True if `token` is at text[i], PARTIAL if text ends inside what may still be it."""
    if text.startswith(token, i):
        return True
    rest = text[i : i + len(token)]
    if not final and len(rest) < len(token) and token.startswith(rest):
        return PARTIAL
    return False


def skip_ws(text: str, i: int, limit: int = WS_LIMIT) -> int:
    """Index of the first non-whitespace character at or after i, looking at most `limit`
    characters ahead (returns i + limit + 1 when the run is longer: not a block)."""
    j = i
    stop = min(len(text), i + limit + 1)
    while j < stop and text[j] in WS:
        j += 1
    return j


NAME_CHARS = re.compile(r"[\w.:\-]*")


def run_end(chars: re.Pattern, text: str, start: int, stop: int) -> int:
    """Where a run of `chars` (a pattern that also matches nothing) starting at `start` ends."""
    m = chars.match(text, start, stop)
    return m.end() if m else start


def read_name(text: str, i: int, final: bool):
    """A tool name at text[i:]: (name, end), PARTIAL, or None (no name, or too long)."""
    end = run_end(NAME_CHARS, text, i, i + NAME_LIMIT + 1)
    if end - i > NAME_LIMIT:
        return None
    if end == len(text) and not final:
        return PARTIAL
    return (text[i:end], end) if end > i else None


TAG_ATTR = re.compile(r"""\s+([A-Za-z_][\w.:\-]*)\s*=\s*(?:"([^"<>\n]*)"|'([^'<>\n]*)'|([^\s"'<>=`]+))""")


def match_tag(text: str, i: int, name: str, final: bool):
    """`<name attr="v" …>` at text[i]: ({attrs}, end), PARTIAL or None. Attributes stay on
    one line and the tag within TAG_LIMIT characters; anything else is not this tag."""
    head = "<" + name
    r = starts(text, i, head, final)
    if r is not True:
        return r or None
    j = i + len(head)
    if j == len(text):
        return None if final else PARTIAL
    if text[j] not in "> \t":
        return None
    close = text.find(">", j, i + TAG_LIMIT)
    if close < 0:
        inside = text[j : i + TAG_LIMIT]
        if "<" in inside or "\n" in inside or final or len(text) >= i + TAG_LIMIT:
            return None
        return PARTIAL
    attrs: dict[str, str] = {}
    k = j
    for m in TAG_ATTR.finditer(text, j, close):
        if m.start() != k:
            return None
        attrs[m.group(1)] = next(g for g in m.group(2, 3, 4) if g is not None)
        k = m.end()
    if text[k:close].strip(" \t"):
        return None
    return attrs, close + 1


FENCE_RUN = re.compile(r"(`{3,}|~{3,})")


def fence_line(text: str, j: int, final: bool):
    """A fence opener at text[j] (the fence characters; the caller checks the indentation):
    (char, count, info, line_end) with line_end the index of the line break ending it (or
    the end of the reply), PARTIAL, or None. Info strings stay within TAG_LIMIT characters."""
    m = FENCE_RUN.match(text, j)
    if m is None:
        rest = text[j : j + 3]
        if not final and len(text) - j < 3 and rest == rest[0] * len(rest):
            return PARTIAL
        return None
    line_end = text.find("\n", m.end(), j + TAG_LIMIT)
    if line_end < 0:
        if len(text) >= j + TAG_LIMIT:
            return None
        if not final:
            return PARTIAL
        line_end = len(text)
    info = text[m.end() : line_end].strip(" \t\r")
    run = m.group(1)
    if run[0] == "`" and "`" in info:
        return None  # inline code such as ```x```, not a fence
    return run[0], len(run), info, line_end


def fence_at_line_start(text: str, k: int, final: bool):
    """At a line start: (FenceFinder, line_end) when a fence opens on this line."""
    j = k
    while j < len(text) and j - k < 3 and text[j] == " ":
        j += 1
    if j == len(text):
        return None if final else PARTIAL
    if text[j] not in "`~":
        return None
    found = fence_line(text, j, final)
    if found is None or found is PARTIAL:
        return found
    char, count, _, line_end = found
    return FenceFinder(char, count), line_end


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
        line = text[k : k + TAG_LIMIT + 1]
        if "\n" in line or len(line) > TAG_LIMIT:
            return False
        stripped = line.lstrip(" ")
        if len(line) - len(stripped) > 3:
            return False
        run = len(stripped) - len(stripped.lstrip(self.char))
        tail = stripped[run:]
        return (run == len(stripped)) or (run >= self.count and tail.strip(" \t\r") == "")


def find_unfenced(text: str, token: str, start: int) -> int:
    """text.find(token, start), skipping code fences that open on a line of their own
    (the batch twin of HidesFences, so decoding agrees with the finder). Each line break
    before the token is looked at once."""
    i, t = start, text.find(token, start)
    while t >= 0:
        nl = text.find("\n", i, t)
        if nl < 0:
            return t
        found = fence_at_line_start(text, nl + 1, True)
        if not found:
            i = nl + 1
            continue
        finder, line_end = found
        _, end = finder.scan(text, line_end, 0, True, None)
        if end.status == OPEN:
            return -1
        i = end.at
        if t < i:
            t = text.find(token, i)
    return -1


class HidesFences:
    """Inside a block, as in prose, a code fence hides everything up to its closing line:
    no opener, closer or quote in it counts (a fenced example inside a value is text).

    The finders that see fences write `scan_unfenced`, the scan of the text outside a
    fence, and call `line_break` at each line break outside strings; the loop through
    fences is this class's `scan`."""

    fence: FenceFinder | None = None

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        while True:
            if self.fence is not None:
                pos, end = self.fence.scan(text, i, base, final, openers)
                if end is None:
                    return pos, None
                if end.status == OPEN:
                    return pos, End(base + len(text), OPEN)
                self.fence, i = None, end.at - base
            pos, found = self.scan_unfenced(text, i, base, final, openers)
            if found is not None or self.fence is None:
                return pos, found
            i = pos  # a fence opened at a line break: go through it

    def scan_unfenced(
        self, text: str, i: int, base: int, final: bool, openers: Openers
    ) -> tuple[int, End | None]:
        raise NotImplementedError

    def line_break(self, text: str, j: int, final: bool) -> tuple[int, bool]:
        """At a line break text[j] outside strings: (i, True) to go on at i, or (pos, False)
        to return (pos, None): wait for more input, or go through the fence that opens at pos."""
        r = fence_at_line_start(text, j + 1, final)
        if r is PARTIAL:
            return j, False
        if r:
            self.fence = r[0]
            return r[1], False
        return j + 1, True


class ExampleFence:
    """A fence that is not a call (```python, ```, …): its text is shown as is, and nothing
    in it is a call. Its opening line ends at window index `end`."""

    def __init__(self, finder: FenceFinder, end: int):
        self.finder, self.end = finder, end


class EndsAt:
    """A block already known to end at `at` (a repeated opener: the block opens twice)."""

    def __init__(self, at: int, reason: str):
        self.end = End(at, MALFORMED, reason)
        self.expects = ""

    def scan(self, text, i, base, final, openers):
        return self.end.at - base, self.end


class XmlFinder(HidesFences):
    """The end of an XML-ish block: one child (`<function=…>…</function>`,
    `<invoke …>…</invoke>`), or, inside a wrapper (`<tool_call>`, `<function_calls>`), children
    separated by whitespace and then the wrapper's closer.

    Values are raw text, so the first child closer ends the child (outside code fences); the
    wrapper's closer ends it too (the block's decoder then says whether the child is whole). A
    new opener before it (the model started another call) ends the block as malformed. The
    wrapper's closer is optional: after a complete child, anything other than another child
    or the wrapper's closer ends the block right after that child.
    """

    EVENT = re.compile(r"[<\n]")

    def __init__(self, child_open: str, child_close: str, outer_close: str | None = None):
        self.child_open, self.child_close, self.outer_close = child_open, child_close, outer_close
        self.in_child = outer_close is None  # a bare child: its opener is already consumed
        self.last_child_end: int | None = None

    @property
    def expects(self) -> str:
        return self.child_close if self.in_child else (self.outer_close or self.child_close)

    def scan_unfenced(
        self, text: str, i: int, base: int, final: bool, openers: Openers
    ) -> tuple[int, End | None]:
        n = len(text)
        while True:
            if not self.in_child:
                assert self.outer_close is not None  # between children: inside a wrapper
                k = skip_ws(text, i, n)
                if k == n:
                    if not final:
                        return n, None
                    return n, self._after_children(n, base)
                r = starts(text, k, self.child_open, final)
                if r is PARTIAL:
                    return k, None
                if r:
                    self.in_child, i = True, k + len(self.child_open)
                    continue
                r = starts(text, k, self.outer_close, final)
                if r is PARTIAL:
                    return k, None
                if r:
                    return k, End(base + k + len(self.outer_close), CLOSED)
                return k, self._after_children(k, base)
            m = self.EVENT.search(text, i)
            if m is None:
                return n, (End(base + n, OPEN) if final else None)
            j = m.start()
            if text[j] == "\n":
                i, go_on = self.line_break(text, j, final)
                if not go_on:
                    return i, None
                continue
            r = starts(text, j, self.child_close, final)
            if r is PARTIAL:
                return j, None
            if r:
                after = j + len(self.child_close)
                if self.outer_close is None:
                    return after, End(base + after, CLOSED)
                self.in_child, self.last_child_end, i = False, base + after, after
                continue
            if self.outer_close is not None:
                r = starts(text, j, self.outer_close, final)
                if r is PARTIAL:
                    return j, None
                if r:  # the wrapper closes its child too: the decoder says whether it is whole
                    after = j + len(self.outer_close)
                    return after, End(base + after, CLOSED)
            o = openers.opening_at(text, j, base, final)
            if o is PARTIAL:
                return j, None
            if o is not None:
                why = f"a new {o.token} began before {self.child_close}"
                return j, End(base + j, MALFORMED, why)
            i = j + 1

    def _after_children(self, k: int, base: int) -> End:
        if self.last_child_end is None:  # cannot happen: the opener was claimed on its first child
            return End(base + k, MALFORMED, f"expected {self.child_open}")
        return End(self.last_child_end, CLOSED)


OPENING_OF = {"]": "[", "}": "{", ")": "("}


class JsonValueFinder(HidesFences):
    """The end of a JSON value that has no closing tag (Mistral): brackets balanced outside
    strings. A mismatched bracket ends the value as malformed; a new opener outside a string
    ends it too (the model started another call). A raw line break ends a string."""

    OUT = re.compile(r'["\[\]{}<\n]')
    IN = re.compile(r'[\\"\n]')

    def __init__(self, first: str, expects: str):
        self.first = first  # the bracket the value must start with
        self.expects = expects
        self.stack: list[str] = []
        self.in_string = False

    def scan_unfenced(
        self, text: str, i: int, base: int, final: bool, openers: Openers
    ) -> tuple[int, End | None]:
        n = len(text)
        if not self.stack:
            k = skip_ws(text, i, n)
            if k == n:
                return n, (End(base + n, OPEN) if final else None)
            if text[k] != self.first:
                return self._not_json(text, i, k, base, final)
            self.stack.append(self.first)
            i = k + 1
        while True:
            if self.in_string:
                m = self.IN.search(text, i)
                if m is None:
                    return n, (End(base + n, OPEN) if final else None)
                j = m.start()
                c = text[j]
                if c == "\\":
                    if j + 1 == n:
                        return (n, End(base + n, OPEN)) if final else (j, None)
                    i = j + 2 if text[j + 1] != "\n" else j + 1
                    continue
                self.in_string = False
                i = j + 1 if c == '"' else j  # a line break cuts the string and is seen again outside
                continue
            m = self.OUT.search(text, i)
            if m is None:
                return n, (End(base + n, OPEN) if final else None)
            j = m.start()
            c = text[j]
            if c == '"':
                self.in_string, i = True, j + 1
            elif c == "\n":
                i, go_on = self.line_break(text, j, final)
                if not go_on:
                    return i, None
            elif c in "]}":
                if self.stack[-1] != OPENING_OF[c]:
                    return j + 1, End(base + j + 1, MALFORMED, f"{c!r} does not match {self.stack[-1]!r}")
                self.stack.pop()
                if not self.stack:
                    return j + 1, End(base + j + 1, CLOSED)
                i = j + 1
            else:  # "[", "{" or "<"; a new opener at "[" or "<" means the model started another call
                o = openers.opening_at(text, j, base, final) if c != "{" else None
                if o is PARTIAL:
                    return j, None
                if o is not None:
                    return j, End(base + j, MALFORMED, f"a new {o.token} began before the JSON ended")
                if c != "<":
                    self.stack.append(c)
                i = j + 1

    def _not_json(self, text: str, i: int, k: int, base: int, final: bool) -> tuple[int, End | None]:
        """What is at text[k] instead of the value belongs to the block, to its line's end."""
        stop = text.find("\n", k, k + TAG_LIMIT)
        if stop < 0:
            if len(text) < k + TAG_LIMIT and not final:
                return i, None
            stop = min(len(text), k + TAG_LIMIT)
        found = text[k:stop].strip()
        found = found if len(found) <= 40 else found[:39] + "…"
        why = f"expected {self.first!r} to start the JSON, found {found!r}"
        return stop, End(base + stop, MALFORMED, why)


class ClosedAt:
    """A block that is whole as soon as its opener is read (a layout token)."""

    expects = ""

    def __init__(self, at: int):
        self.end = End(at, CLOSED)

    def scan(self, text, i, base, final, openers):
        return self.end.at - base, self.end


class TokenFinder:
    """The end of a block closed by a special token (`<|END_ACTION|>`): nothing inside
    counts but the closer. With `last_inner`, a block left open at the end of the reply whose
    text since the last `last_inner` token (a call's own closer) is only whitespace ends
    there, whole: the model stopped right before the section's closer."""

    def __init__(self, closer: str, last_inner: str | None = None):
        self.closer, self.last_inner = closer, last_inner
        self.expects = closer
        tokens = [closer] + ([last_inner] if last_inner else [])
        self.tokens = tokens
        self.pattern = re.compile("|".join(re.escape(t) for t in tokens))
        self.whole_at: int | None = None  # where the block ends if nothing but space follows

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        n = len(text)
        for m in self.pattern.finditer(text, i):
            self._seen(text, i, m.start())
            if m.group() == self.closer:
                return m.end(), End(base + m.end(), CLOSED)
            self.whole_at, i = base + m.end(), m.end()
        if final:
            self._seen(text, i, n)
            if self.whole_at is not None:
                return n, End(self.whole_at, CLOSED)
            return n, End(base + n, OPEN)
        hold = partial_token_at(text, i, self.tokens)
        self._seen(text, i, hold)
        return hold, None

    def _seen(self, text: str, a: int, b: int) -> None:
        if self.whole_at is not None and text[a:b].strip():
            self.whole_at = None


def partial_token_at(text: str, i: int, tokens: list[str]) -> int:
    """Where text[i:] ends with the start of one of `tokens` (else len(text))."""
    n = len(text)
    for k in range(max(i, n - max(map(len, tokens)) + 1), n):
        if any(t.startswith(text[k:]) for t in tokens):
            return k
    return n


class WithTrailer:
    """A block, then optionally (after whitespace) a trailing token that belongs to it: the
    closer of a wrapper whose opener the model left out (`</tool_call>` after a bare
    `<function=…>`), or an end token some models write and others do not."""

    def __init__(self, inner: Finder, trailer: str):
        self.inner, self.trailer = inner, trailer
        self.inner_end: int | None = None

    @property
    def expects(self) -> str:
        return self.inner.expects

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        if self.inner_end is None:
            pos, end = self.inner.scan(text, i, base, final, openers)
            if end is None or end.status != CLOSED or end.at < base + i:
                return pos, end
            self.inner_end, i = end.at, end.at - base
        k = skip_ws(text, i)
        if k > i + WS_LIMIT:
            return i, End(self.inner_end, CLOSED)
        r = starts(text, k, self.trailer, final)
        if r is True:
            return k + len(self.trailer), End(base + k + len(self.trailer), CLOSED)
        if r is PARTIAL or (k == len(text) and not final):
            return i, None
        return i, End(self.inner_end, CLOSED)


class LineEndFinder:
    """A block that ends with its line, or where another block opens (its decoder says what
    is wrong with it)."""

    expects = "the end of the line"
    EVENT = re.compile(r"[\n<\[]")

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        for m in self.EVENT.finditer(text, i):
            j = m.start()
            if text[j] == "\n":
                return j, End(base + j, CLOSED)
            o = openers.opening_at(text, j, base, final)
            if o is PARTIAL:
                return j, None
            if o is not None:
                return j, End(base + j, CLOSED)
        return len(text), (End(base + len(text), CLOSED) if final else None)


class PythonListFinder:
    """The end of a Python list of calls, `[f(a=1), g()]`: brackets balanced outside
    string literals (single, double or tripled quotes, backslash escapes; a raw line break
    ends a one-quote string, as in Python, unless `line_breaks_in_strings`: a multi-line shell
    command as LFM2 writes it)."""

    OUT = re.compile(r"""["'\[\](){}\n]""")

    def __init__(self, line_breaks_in_strings: bool = False) -> None:
        self.expects = "the ] that closes the list of calls"
        self.line_breaks_in_strings = line_breaks_in_strings
        self.stack: list[str] = []
        self.quote: str | None = None

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        n = len(text)
        while i < n:
            if self.quote is not None:
                i = self._in_string(text, i, final)
                if i < 0:
                    return (n, End(base + n, OPEN)) if final else (-i - 1, None)
                continue
            m = self.OUT.search(text, i)
            if m is None:
                break
            j, c = m.start(), m.group()
            i = j + 1
            if c in "\"'":
                if text.startswith(c * 3, j):
                    self.quote, i = c * 3, j + 3
                elif not final and text[j:] in (c, c * 2):
                    return j, None  # a tripled quote may be coming
                else:
                    self.quote = c
            elif c in "[({":
                self.stack.append(c)
            elif c in "])}":
                if not self.stack or self.stack[-1] != OPENING_OF[c]:
                    return j + 1, End(base + j + 1, MALFORMED, f"{c!r} does not match the brackets before it")
                self.stack.pop()
                if not self.stack:
                    return j + 1, End(base + j + 1, CLOSED)
        return n, (End(base + n, OPEN) if final else None)

    def _in_string(self, text: str, i: int, final: bool) -> int:
        """Index after the string's end, or -(hold + 1) when the window ends inside it."""
        quote = self.quote or ""
        while i < len(text):
            c = text[i]
            if c == "\\":
                if i + 1 == len(text):
                    return -(i + 1)
                i += 2
                continue
            if len(quote) == 3:  # a tripled quote: line breaks are text, three quotes end it
                if text.startswith(quote, i):
                    self.quote = None
                    return i + 3
                if quote.startswith(text[i:]):
                    return -(i + 1)  # the window ends inside what may be the closing quotes
                i += 1
                continue
            if c == quote or (c == "\n" and not self.line_breaks_in_strings):
                self.quote = None
                return i + 1 if c == quote else i
            i += 1
        return -(len(text) + 1)


class JsonSequenceFinder:
    """JSON objects separated by `separator` (Llama 3's `{…}; {…}`): the block ends after
    the last object (a trailing separator belongs to it)."""

    def __init__(self, separator: str = ";"):
        self.separator = separator
        self.value: JsonValueFinder | None = JsonValueFinder("{", "the end of the JSON object")
        self.last_end = 0  # absolute end of the last complete object

    @property
    def expects(self) -> str:
        return self.value.expects if self.value else "the end of the JSON object"

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        n = len(text)
        while True:
            if self.value is not None:
                pos, end = self.value.scan(text, i, base, final, openers)
                if end is None or end.status != CLOSED:
                    return pos, end
                self.value, self.last_end, i = None, end.at, end.at - base
            k = skip_ws(text, i)
            if k > i + WS_LIMIT or (k < n and not text.startswith(self.separator, k)):
                return i, End(self.last_end, CLOSED)
            if k == n:
                return (i, None) if not final else (i, End(self.last_end, CLOSED))
            after = k + len(self.separator)
            m = skip_ws(text, after)
            if m == n and not final:
                return i, None
            if m < n and m <= after + WS_LIMIT and text[m] == "{":
                self.value, i = JsonValueFinder("{", "the end of the JSON object"), m
                continue
            return after, End(base + after, CLOSED)


class OpenToEnd:
    """A block the reply ended inside of before its opener was whole (`[TOOL_CALLS]name` and
    nothing after): open from the start."""

    def __init__(self, expects: str):
        self.expects = expects

    def scan(self, text, i, base, final, openers):
        return len(text), (End(base + len(text), OPEN) if final else None)


class ReasoningFinder:
    """The end of reasoning: the first of its closers. Nothing inside counts, but the first
    opener of anything that is not reasoning (a call, the answer's layout token) is noted:
    reasoning the reply never closes ends there (the model went on to call without closing
    it, or never reasoned at all though its prompt opened the reasoning), and the rest is
    read as usual: a call is decoded, or reported truncated when the reply was cut in it."""

    def __init__(self, closers: tuple[str, ...]):
        self.closers = closers
        self.expects = " or ".join(closers)
        self.pattern = re.compile("|".join(re.escape(c) for c in closers))
        self.first_opener: int | None = None

    def scan(self, text: str, i: int, base: int, final: bool, openers: Openers) -> tuple[int, End | None]:
        n = len(text)
        m = self.pattern.search(text, i)
        stop = m.start() if m else n
        if self.first_opener is None:
            hold = self._look_for_opener(text, i, stop, base, final, openers)
            if hold is not None:
                return hold, None
        if m:
            return m.end(), End(base + m.end(), CLOSED)
        if final:
            return n, End(base + n, OPEN, implicit_end=self.first_opener)
        return partial_token_at(text, i, list(self.closers)), None

    def _look_for_opener(
        self, text: str, i: int, stop: int, base: int, final: bool, openers: Openers
    ) -> int | None:
        """Note the first opener before `stop` that is not reasoning; where to hold from
        when one may begin at the window's end."""
        for m in openers.candidates.finditer(text, i, stop):
            j = m.start()
            o = openers.opening_at(text, j, base, final)
            if o is PARTIAL:
                return j
            if isinstance(o, Opening) and not o.open_ok:
                self.first_opener = base + j
                return None
        return None


def reasoning_decoder(openers: tuple[str, ...], closers: tuple[str, ...]):
    """The decoder of a reasoning block: its text without the opener (a block the prompt
    opened has none, unless the model wrote it anyway) and without the closer (a block left
    open has none)."""

    def decode(block: str) -> list[Reasoning]:
        body = block.lstrip()
        opener = next((o for o in openers if body.startswith(o)), "")
        closer = next((c for c in closers if body.endswith(c)), "")
        return [Reasoning(body[len(opener) : len(body) - len(closer)].strip())]

    return decode
