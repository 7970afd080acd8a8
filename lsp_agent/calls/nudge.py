"""The nudge policy: turn a reply's diagnostics into the message an agent loop sends back
to the model, at most `max_nudges` times per turn.

A clean reply gets no nudge. Otherwise the message lists each problem by line, names the
dialect, shows the exact format expected, says which calls were decoded (they run anyway:
one bad block never holds back its siblings), and asks only for what failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dialects import dialect
from .model import Call, Decoded, Diagnostic
from .prompt import example_call
from .toolset import ToolSet

DEFAULT_MAX_NUDGES = 2
BLOCK_KINDS = ("malformed", "unterminated")
CALL_KINDS = ("unknown_tool", "invalid_arguments")


@dataclass
class Nudge:
    text: str
    kind: str  # "undecodable" | "truncated" | "invalid_calls": the main problem

    def to_dict(self) -> dict:
        return {"text": self.text, "kind": self.kind}


def nudge_for(decoded: Decoded, tools: ToolSet, *, ran: bool = False) -> Nudge | None:
    """The message for this reply, or None for a clean one (`ran`: the decoded calls were
    run, so the message can say their results follow; `tools`: the example call's tool)."""
    diagnostics = decoded.diagnostics
    if not diagnostics:
        return None
    truncated = [d for d in diagnostics if d.kind == "truncated"]
    broken = [d for d in diagnostics if d.kind in BLOCK_KINDS]
    invalid = [d for d in diagnostics if d.kind in CALL_KINDS]
    parts: list[str] = []
    if truncated:
        parts.append(truncated_part(truncated[0]))
    if broken:
        parts.append(broken_part(broken, tools))
    if invalid:
        lines = [f"- {d.call_id} ({d.name}, line {d.line}): {d.reason}" for d in invalid]
        parts.append(f"{count(len(invalid), 'call')} could not be run as written:\n" + "\n".join(lines))
    parts.append(outcome_part([c for c in decoded.calls if c.runnable], ran))
    kind = "truncated" if truncated else "undecodable" if broken else "invalid_calls"
    return Nudge("\n\n".join(parts), kind)


def truncated_part(d: Diagnostic) -> str:
    return (
        f"Your reply was cut off by its length limit inside a tool call ({dialect(d.dialect).label}, line {d.line}), "
        "so that call was not run. Send it again, complete; if it is long (a large file, say), split it into "
        "smaller calls."
    )


def broken_part(broken: list[Diagnostic], tools: ToolSet) -> str:
    """The blocks that could not be decoded, and the form to write them in."""
    lines = [f"- line {d.line} ({dialect(d.dialect).label}): {d.reason}" for d in broken]
    shown = dialect(broken[0].dialect)
    name, arguments = example_call(tools)
    return (
        f"{count(len(broken), 'tool call block')} in your reply could not be decoded, so nothing in "
        + ("it was" if len(broken) == 1 else "them was")
        + " run:\n"
        + "\n".join(lines)
        + f"\nWrite each call exactly in this form ({shown.label}):\n"
        + shown.render(name, arguments)
    )


def outcome_part(good: list[Call], ran: bool) -> str:
    """What happened to the calls that were fine."""
    if not good:
        return "No call ran. Send the calls again, corrected."
    ids = ", ".join(c.id for c in good)
    if len(good) == 1:
        verb = "ran; its result follows" if ran else "was decoded and runs as written"
    else:
        verb = "ran; their results follow" if ran else "were decoded and run as written"
    others = "The other call" if len(good) == 1 else f"The other {len(good)} calls"
    return f"{others} ({ids}) {verb}. Resend only what failed."


def count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


class Nudger:
    """Per-turn budget of nudges: `nudge()` returns a message while the budget lasts, then
    None (the loop should stop nudging and show the reply as it is). Call `new_turn()` when
    the user speaks again."""

    def __init__(self, tools: ToolSet, max_nudges: int = DEFAULT_MAX_NUDGES):
        self.max_nudges = max_nudges
        self.tools = tools
        self.used = 0

    @property
    def left(self) -> int:
        return max(0, self.max_nudges - self.used)

    def nudge(self, decoded: Decoded, *, ran: bool = False) -> Nudge | None:
        if self.left == 0:
            return None
        found = nudge_for(decoded, self.tools, ran=ran)
        if found is not None:
            self.used += 1
        return found

    def new_turn(self) -> None:
        self.used = 0
