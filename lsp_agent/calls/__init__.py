"""Tool calls written as text: decode them (batch or streamed), report every block that
could not be decoded, nudge the model, and run the calls against the registry.

The public API for in-process agent runtimes (see docs/calls.md):

    decode(reply, finish_reason)      -> Decoded(visible_text, calls, diagnostics)
    Scrubber(tools).feed(delta) / .flush(finish_reason)
    Nudger(max_nudges).nudge(decoded)  -> the message to send back, or None
    run_calls(ctx, reply, ...)        -> each call's answer, diagnostics and nudge
    tool_prompt(dialect, tools)       -> the system-prompt text for a dialect
"""

from .decode import decode
from .model import Call, Decoded, Diagnostic
from .scrubber import Scrubber
from .toolset import ToolSet

__all__ = ["Call", "Decoded", "Diagnostic", "Scrubber", "ToolSet", "decode"]
