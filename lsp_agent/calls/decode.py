"""Batch decoding: the scrubber fed the whole reply at once."""

from __future__ import annotations

from collections.abc import Iterable

from .model import Decoded
from .scrubber import Scrubber
from .toolset import ToolSet


def decode(
    reply: str,
    finish_reason: str | None = None,
    *,
    tools: ToolSet,
    id_prefix: str = "call_",
    dialects: Iterable[str] | None = None,
    reasoning: str | None = None,
) -> Decoded:
    """Split `reply` into visible text, decoded calls and diagnostics.

    `finish_reason` is the model's ("stop", "length", "max_tokens", …): an open block at the
    end is `truncated` for "length"/"max_tokens", else `unterminated`. Calls are checked
    against `tools`. `dialects` names the dialects or model families to look for (default:
    the unambiguous dialects, see dialects.DEFAULT). `reasoning="open"`: the prompt opened
    the model's reasoning, the reply starts inside it ("closed": it did not; None: as the
    model families named in `dialects` do)."""
    scrubber = Scrubber(tools, id_prefix=id_prefix, dialects=dialects, reasoning=reasoning)
    visible = scrubber.feed(reply) + scrubber.flush(finish_reason)
    return Decoded(visible, scrubber.calls, scrubber.diagnostics, scrubber.reasoning_text)
