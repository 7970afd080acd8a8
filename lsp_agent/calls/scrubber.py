"""The streaming scrubber: feed a reply's deltas, get back the text that is safe to show.

One engine serves batch and stream (`decode` is one feed and a flush), and every decision
depends only on the text, never on where a delta ended: a split opener such as `<tool_ca`
is held until it can be told apart, a claimed block is held until it ends, everything else
is emitted at once. Each feed scans only the new delta plus a short held tail (a partial
token), so the cost of a reply is linear in its length.

The earliest opener wins. Outside example fences, text is searched for the openers of all
dialects; inside a claimed block the dialect's finder looks for its end.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_left
from collections.abc import Iterable
from dataclasses import dataclass, field

from .dialect import OpeningFn
from .dialects import chosen, lexicon, prompt_opened_reasoning
from .model import LENGTH_REASONS, Call, Decodable, Diagnostic, Problem, Reasoning, excerpt
from .scan import CLOSED, MALFORMED, OPEN, PARTIAL, End, ExampleFence, FenceFinder, Opening
from .toolset import ToolSet, properties

HWS_END = re.compile(r"[^ \t\r]")
MAX_LISTED_TOOLS = 20


@dataclass
class Stray:
    """A closer outside any block: probably a call whose opener was lost or never decodable."""

    token: str
    dialect: str


@dataclass
class PendingBlock:
    opening: Opening
    parts: list[str] = field(default_factory=list)


class LineEmitter:
    """Visible text, with the line rule: a line that holds nothing but removed blocks and
    whitespace disappears whole (its line break too); a block that shares its line with
    other text is cut out exactly. Spaces and tabs at the start of a line are held until
    the line shows whether it is such a line."""

    def __init__(self) -> None:
        self.out: list[str] = []
        self.held: list[str] = []
        self.pure = True  # nothing but whitespace and blocks on this line so far
        self.had_block = False

    def text(self, s: str, a: int, b: int) -> None:
        while a < b:
            if self.pure:
                m = HWS_END.search(s, a, b)
                if m is None:
                    self.held.append(s[a:b])
                    return
                k = m.start()
                if s[k] == "\n":
                    if not self.had_block:
                        self.out += self.held
                        self.out.append(s[a : k + 1])
                    self.held.clear()
                    self.had_block = False
                    a = k + 1
                    continue
                self.out += self.held
                self.held.clear()
                self.out.append(s[a:k])
                self.pure = False
                a = k
            else:
                k = s.find("\n", a, b)
                if k < 0:
                    self.out.append(s[a:b])
                    return
                self.out.append(s[a : k + 1])
                self.pure, self.had_block = True, False
                a = k + 1

    def block(self) -> None:
        if self.pure:
            self.had_block = True

    def finish(self) -> None:
        if not self.had_block:
            self.out += self.held
        self.held.clear()

    def take(self) -> str:
        text = "".join(self.out)
        self.out.clear()
        return text


class Scrubber:
    """feed(delta) -> newly visible text; flush(finish_reason) -> the rest. Decoded calls
    and diagnostics accumulate in `.calls` and `.diagnostics` as blocks end."""

    def __init__(
        self,
        tools: ToolSet,
        *,
        id_prefix: str = "call_",
        dialects: Iterable[str] | None = None,
        reasoning: str | None = None,
    ):
        """`reasoning`: "open" when the prompt opened the model's reasoning (the reply starts
        inside it, `…</think>`), "closed" when it did not; None: as the model families named
        in `dialects` do (dialects.OPENS_REASONING)."""
        self.tools = tools
        names = list(dialects) if dialects is not None else None
        self.lexicon = lexicon(chosen(names))
        self.candidates = self.lexicon.candidate
        self.reasoning: list[str] = []  # reasoning blocks' text, in order
        self.id_prefix = id_prefix
        self.calls: list[Call] = []
        self.diagnostics: list[Diagnostic] = []
        self.closed = False
        self.literal_until = 0  # read by tagged_json: quotes out of step before this offset
        self._emitter = LineEmitter()
        self._carry = ""  # held input: a partial token, starting at offset _base
        self._base = 0
        self._prev = ""  # the character before _base
        self._indent = 0  # spaces between the last line break and _base (-1: other text)
        self._block: PendingBlock | None = None
        self._example: FenceFinder | None = None
        self._fed = 0
        self._newlines = array("q")
        self._ids: set[str] = set()
        self._finish_reason: str | None = None
        opened = prompt_opened_reasoning(names, reasoning)
        if opened is not None:
            self._block = PendingBlock(opened)
        self._at_start = opened is None and bool(self.lexicon.reply_start_hooks)

    # -- public -------------------------------------------------------------------------

    def feed(self, delta: str) -> str:
        if self.closed:
            raise RuntimeError("this scrubber was flushed; start a new one for the next reply")
        if "\n" in delta:
            at = delta.find("\n")
            while at >= 0:
                self._newlines.append(self._fed + at)
                at = delta.find("\n", at + 1)
        self._fed += len(delta)
        self._run(self._carry + delta, self._base, final=False)
        return self._emitter.take()

    def flush(self, finish_reason: str | None = None) -> str:
        """End of the reply: decide everything held. A block still open becomes
        `truncated` when finish_reason is "length"/"max_tokens", else `unterminated`."""
        if self.closed:
            raise RuntimeError("this scrubber was already flushed")
        self._finish_reason = finish_reason
        self._run(self._carry, self._base, final=True)
        self._emitter.finish()
        self.closed = True
        return self._emitter.take()

    @property
    def reasoning_text(self) -> str:
        return "\n".join(self.reasoning)

    def line_of(self, offset: int) -> int:
        return bisect_left(self._newlines, offset) + 1

    # -- the engine -----------------------------------------------------------------------

    def _run(self, text: str, base: int, final: bool) -> None:
        i = 0
        if self._at_start:
            found = self._first_opening(self.lexicon.reply_start_hooks, text, 0, base, final)
            if found is PARTIAL:
                return self._hold(text, base, 0)
            self._at_start = False
            if found is not None:
                i = self._enter(found, text, 0, base)
        while True:
            if self._block is not None:
                pos, end = self._block.opening.finder.scan(text, i, base, final, self)
                if end is None:
                    self._block.parts.append(text[i:pos])
                    return self._hold(text, base, pos)
                text, base, i = self._end_block(text, base, i, end)
                continue
            if self._example is not None:
                pos, end = self._example.scan(text, i, base, final, self)
                if end is None:
                    self._emitter.text(text, i, pos)
                    return self._hold(text, base, pos)
                self._emitter.text(text, i, end.at - base)
                i, self._example = end.at - base, None
                continue
            j, found = self._next_candidate(text, i, base, final)
            if found is None or found is PARTIAL:
                return self._hold(text, base, j)
            i = self._enter(found, text, j, base)

    def _next_candidate(self, text: str, i: int, base: int, final: bool) -> tuple[int, object]:
        """Show the prose from i up to the next opener, stray closer or example fence:
        (where it is, what it is), or (where to hold from, PARTIAL or None)."""
        start = i
        while True:
            m = self.lexicon.candidate.search(text, i)
            if m is None:
                self._emitter.text(text, start, len(text))
                return len(text), None
            j = m.start()
            found = self._classify(text, j, base, final)
            if found is not None:
                self._emitter.text(text, start, j)
                return j, found
            i = j + 1

    def _enter(self, found: object, text: str, j: int, base: int) -> int:
        """Act on what begins at text[j]; where to go on."""
        if isinstance(found, Opening):
            self._block = PendingBlock(found, [text[j : found.end]])
            return found.end
        if isinstance(found, Stray):
            span = (base + j, base + j + len(found.token))
            reason = f"{found.token} with no open block before it (a call whose opener is missing?)"
            self._diagnose("malformed", found.dialect, span, reason, found.token)
            self._emitter.block()
            return j + len(found.token)
        assert isinstance(found, ExampleFence)  # its opening line is text, and so is its body
        self._emitter.text(text, j, found.end)
        self._example = found.finder
        return found.end

    def _hold(self, text: str, base: int, pos: int) -> None:
        """Keep text[pos:] for the next feed, and what the next window needs to know about
        the text before it."""
        self._carry, self._base = text[pos:], base + pos
        if pos == 0:
            return
        self._prev = text[pos - 1]
        k = text.rfind("\n", 0, pos)
        tail, indent = (text[k + 1 : pos], 0) if k >= 0 else (text[:pos], self._indent)
        if indent < 0 or len(tail) + indent > 3 or tail.strip(" "):
            self._indent = -1
        else:
            self._indent = indent + len(tail)

    def _end_block(self, text: str, base: int, i: int, end: End) -> tuple[str, int, int]:
        block, self._block = self._block, None
        assert block is not None
        if end.status == OPEN and end.implicit_end is not None:
            end = End(end.implicit_end, CLOSED)  # reasoning never closed, then a call: it ended there
        if end.at >= base + i:  # the usual case: the end is in this window
            k = end.at - base
            block.parts.append(text[i:k])
            source = "".join(block.parts)
        else:  # the finder looked ahead past the end: scan the text after it again
            whole = "".join(block.parts) + text[i:]
            cut = end.at - block.opening.start
            source = whole[:cut]
            text, base, k = whole[cut:], end.at, 0
            if source:  # (empty: reasoning the prompt opened ended before the reply's first character)
                self._prev, self._indent = source[-1], 0 if source.endswith("\n") else -1
        if end.literal_until is not None:
            self.literal_until = max(self.literal_until, end.literal_until)
        self._record(block.opening, source, end)
        self._emitter.block()
        return text, base, k

    def _classify(self, text: str, j: int, base: int, final: bool):
        """What starts at text[j]: an Opening, a Stray closer, an example fence, PARTIAL
        (wait for more input) or None (just text)."""
        c = text[j]
        if c in self.lexicon.line_openers:
            if not self._line_start(text, j):
                return None
            candidates = self.lexicon.line_openers[c].at(text, j, final)
            return self._first_opening((d.opening for d in candidates), text, j, base, final)
        found = self.opening_at(text, j, base, final)
        if found is not None and found is not PARTIAL:
            return found
        if not self._mention(text, j) and self.lexicon.stray_closers:
            m = self.lexicon.stray_closer.match(text, j)
            if m:
                return Stray(m.group(), self.lexicon.stray_closers[m.group()])
            if not final and len(text) - j < self.lexicon.longest_closer:  # a closer split by the window?
                rest = text[j:]
                if any(token.startswith(rest) for token in self.lexicon.closers_from.get(text[j], ())):
                    found = PARTIAL
        return found

    def opening_at(self, text: str, j: int, base: int, final: bool):
        """A claimed opener at text[j] (also asked by finders: a new opener inside a block
        means the model started another call)."""
        openers = self.lexicon.openers.get(text[j])
        if openers is None or self._mention(text, j):
            return None
        return self._first_opening((d.opening for d in openers.at(text, j, final)), text, j, base, final)

    def _first_opening(self, hooks: Iterable[OpeningFn], text: str, j: int, base: int, final: bool):
        """The first hook's Opening (or ExampleFence) at text[j], PARTIAL if one cannot tell
        yet, else None."""
        partial = False
        for hook in hooks:
            r = hook(text, j, base, final, self)
            if r is PARTIAL:
                partial = True
            elif r is not None:
                return r
        return PARTIAL if partial else None

    def _mention(self, text: str, j: int) -> bool:
        """A tag right after a backtick is inline code: a mention, not a call."""
        return (text[j - 1] if j > 0 else self._prev) == "`"

    def _line_start(self, text: str, j: int) -> bool:
        spaces, t = 0, j - 1
        while t >= 0:
            if text[t] == "\n":
                return True
            if text[t] != " " or spaces == 3:
                return False
            spaces, t = spaces + 1, t - 1
        return self._indent >= 0 and self._indent + spaces <= 3

    # -- results --------------------------------------------------------------------------

    def _record(self, opening: Opening, source: str, end: End) -> None:
        span = (opening.start, opening.start + len(source))
        dialect = opening.dialect
        # A block its decoder may find whole though left open is still cut short when the
        # reply hit its length limit (the model meant to write more).
        whole_if_open = opening.open_ok or (opening.cut_ok and self._finish_reason not in LENGTH_REASONS)
        if end.status == OPEN and not whole_if_open:
            self._cut_short(opening, span, source)
            return
        if end.status == MALFORMED:
            self._diagnose("malformed", dialect, span, end.reason, source)
            return
        for item in opening.decode(source):
            if isinstance(item, Reasoning):
                if item.text:
                    self.reasoning.append(item.text)
            elif isinstance(item, Problem) and item.cut:
                self._cut_short(opening, span, source)
            elif isinstance(item, Problem):
                self._diagnose("malformed", dialect, span, item.reason, source)
            else:
                self._accept(item, dialect, span, source)

    def _cut_short(self, opening: Opening, span: tuple[int, int], source: str) -> None:
        expects = opening.finder.expects
        if self._finish_reason in LENGTH_REASONS:
            reason = (
                f"the reply hit its length limit (finish_reason={self._finish_reason}) inside {opening.token}, "
                f"before {expects}: the call is cut short, not malformed"
            )
            self._diagnose("truncated", opening.dialect, span, reason, source)
        else:
            reason = f"{opening.token} was never closed: the reply ended before {expects}"
            self._diagnose("unterminated", opening.dialect, span, reason, source)

    def _accept(self, item: Decodable, dialect: str, span: tuple[int, int], source: str) -> None:
        if item.unnamed:
            fits = self._tools_fitting(item.arguments)
            if len(fits) != 1:
                which = "no tool" if not fits else "several tools: " + ", ".join(fits[:MAX_LISTED_TOOLS])
                reason = (
                    f"the call id {item.id!r} names no tool and its arguments fit {which}; "
                    "write the tool's name in the id"
                )
                self._diagnose("malformed", dialect, span, reason, source)
                return
            item.name = fits[0]
        call_id = item.id if item.id and item.id not in self._ids else self._new_id()
        self._ids.add(call_id)
        line = self.line_of(span[0])
        call = Call(call_id, item.name, item.arguments, dialect, span, line)
        self.calls.append(call)
        if item.name not in self.tools:
            call.runnable = False
            closest = self.tools.closest(item.name)
            if closest:
                hint = "did you mean " + " or ".join(repr(n) for n in closest) + "?"
            else:
                names = self.tools.names()
                more = f", … ({len(names)} in all)" if len(names) > MAX_LISTED_TOOLS else ""
                hint = "the tools are " + (", ".join(names[:MAX_LISTED_TOOLS]) + more if names else "none")
            reason = f"there is no tool {item.name!r}; {hint}"
            self._diagnose("unknown_tool", dialect, span, reason, source, call=call, closest=closest)
            return
        call.arguments = self.tools.coerce(item.name, item.arguments, item.text_params)
        problems = self.tools.violations(item.name, call.arguments)
        if problems:
            call.runnable = False
            reason = f"{item.name}: " + "; ".join(why for _, why in problems[:3])
            if len(problems) > 3:
                reason += f"; and {len(problems) - 3} more"
            self._diagnose(
                "invalid_arguments", dialect, span, reason, source, call=call, argument=problems[0][0]
            )

    def _tools_fitting(self, arguments: dict) -> list[str]:
        """The tools whose parameters hold every argument given, and that accept them."""
        return [
            name
            for name, spec in self.tools.specs.items()
            if set(arguments) <= set(properties(spec.schema)) and not self.tools.violations(name, arguments)
        ]

    def _new_id(self) -> str:
        n = len(self.calls) + 1
        while f"{self.id_prefix}{n}" in self._ids:
            n += 1
        return f"{self.id_prefix}{n}"

    def _diagnose(
        self, kind, dialect, span, reason, source, *, call=None, closest=None, argument=None
    ) -> None:
        self.diagnostics.append(
            Diagnostic(
                kind,
                dialect,
                span,
                self.line_of(span[0]),
                reason,
                excerpt(source),
                call_id=call.id if call else None,
                name=call.name if call else None,
                argument=argument,
                closest=closest or [],
            )
        )
