"""Tool calls written as text: decode them (batch or streamed), report every block that
could not be decoded, nudge the model, and run the calls against the registry.

The public API for in-process agent runtimes (see docs/calls.md):

    decode(reply, finish_reason, tools=…)   -> Decoded(visible_text, calls, diagnostics)
    Scrubber(tools).feed(delta) / .flush(finish_reason)
    Nudger(tools, max_nudges).nudge(decoded) -> the message to send back, or None
    run_calls(ctx, reply, tools=…, call_tool=…) -> each call's answer, diagnostics and nudge
    tool_prompt(dialect, tools)             -> the system-prompt text for a dialect

`tools` is a ToolSet (the runtime's tools, or this server's: tools.calls.agent_tools());
each dialect is one record in dialects.DIALECTS.
"""

from .decode import decode
from .dialect import Dialect
from .dialects import DIALECTS
from .model import Call, Decoded, Diagnostic
from .nudge import Nudger
from .prompt import tool_prompt
from .run import run_calls
from .scrubber import Scrubber
from .toolset import ToolSet

__all__ = [
    "DIALECTS",
    "Call",
    "Decoded",
    "Diagnostic",
    "Dialect",
    "Nudger",
    "Scrubber",
    "ToolSet",
    "decode",
    "run_calls",
    "tool_prompt",
]
