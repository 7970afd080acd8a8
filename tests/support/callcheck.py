"""Helpers for the calls tests: decode a reply in batch, check that streaming it (one
character at a time, and in a few other splits) gives exactly the same, and summarise."""

from __future__ import annotations

from lsp_agent.calls import Scrubber, decode
from lsp_agent.tools.calls import agent_tools

AGENT_TOOLS = agent_tools()


def streamed(reply: str, pieces: list[str], finish_reason=None, tools=None, dialects=None):
    scrubber = Scrubber(AGENT_TOOLS if tools is None else tools, dialects=dialects)
    visible = "".join(scrubber.feed(p) for p in pieces) + scrubber.flush(finish_reason)
    return visible, scrubber.calls, scrubber.diagnostics


def as_tuple(visible, calls, diagnostics):
    return visible, [c.to_dict() for c in calls], [d.to_dict() for d in diagnostics]


def check(reply: str, finish_reason=None, tools=None, dialects=None):
    """The batch decode of `reply`, after asserting that every streamed split agrees."""
    got = decode(reply, finish_reason, tools=AGENT_TOOLS if tools is None else tools, dialects=dialects)
    want = as_tuple(got.visible_text, got.calls, got.diagnostics)
    assert got.reasoning_text == streamed_reasoning(reply, finish_reason, tools, dialects)
    splits = [list(reply), [reply[: len(reply) // 2], reply[len(reply) // 2 :]], [reply[:7], reply[7:]]]
    for pieces in splits:
        assert as_tuple(*streamed(reply, pieces, finish_reason, tools, dialects)) == want, pieces
    for c in got.calls:  # spans name the block exactly
        assert 0 <= c.span[0] < c.span[1] <= len(reply)
    return got


def calls(decoded):
    return [(c.name, c.arguments) for c in decoded.calls]


def diags(decoded, reply):
    """(kind, dialect, the block's text, reason) for each diagnostic."""
    return [(d.kind, d.dialect, reply[d.span[0] : d.span[1]], d.reason) for d in decoded.diagnostics]


def streamed_reasoning(reply: str, finish_reason, tools, dialects) -> str:
    """The reasoning text of the reply streamed one character at a time."""
    scrubber = Scrubber(AGENT_TOOLS if tools is None else tools, dialects=dialects)
    for c in reply:
        scrubber.feed(c)
    scrubber.flush(finish_reason)
    return scrubber.reasoning_text
