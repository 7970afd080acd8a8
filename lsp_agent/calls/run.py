"""Running a reply's calls: decode it, dispatch each runnable call through the tool caller
the front door hands in (the registry's agent tools, in this server), and answer with every
result or error, the diagnostics and the nudge."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, Protocol

from ..config import Settings
from ..errors import ArgumentError
from .decode import decode
from .model import Call, Decoded
from .nudge import nudge_for
from .report import Section, fit
from .toolset import ToolSet


class RunContext(Protocol):
    settings: Settings

    def check_cancelled(self) -> None: ...


# (ctx, tool name, arguments) -> the tool's answer; raises ArgumentError for bad arguments.
ToolCaller = Callable[[Any, str, dict], dict]


def run_calls(
    ctx: RunContext,
    reply: str,
    finish_reason: str | None = None,
    *,
    tools: ToolSet,
    call_tool: ToolCaller,
    max_chars: int | None = None,
    nudges_used: int = 0,
    max_nudges: int | None = None,
    id_prefix: str = "call_",
    dialects: Iterable[str] | None = None,
    reasoning: str | None = None,
) -> dict:
    """Decode `reply` against `tools` (looking for `dialects`, see decode) and run each
    runnable call with `call_tool`."""
    decoded = decode(
        reply, finish_reason, tools=tools, id_prefix=id_prefix, dialects=dialects, reasoning=reasoning
    )
    results = [run_one(ctx, call, decoded, call_tool) for call in decoded.calls]
    nudge, left = budgeted_nudge(decoded, tools, nudges_used, max_nudges, ctx.settings.max_nudges, ran=True)
    budget = max_chars or ctx.settings.max_chars
    return {
        "text": fit(run_report(decoded, results, nudge, left), budget),
        "results": results,
        "diagnostics": [d.to_dict() for d in decoded.diagnostics],
        "nudge": nudge,
        "nudges_left": left,
        "visible_text": decoded.visible_text,
        "reasoning_text": decoded.reasoning_text,
    }


def run_one(ctx: RunContext, call: Call, decoded: Decoded, call_tool: ToolCaller) -> dict:
    """One call's entry: its answer, or why it was not run."""
    entry: dict[str, Any] = {"id": call.id, "name": call.name, "arguments": call.arguments}
    if not call.runnable:
        d = next(d for d in decoded.diagnostics if d.call_id == call.id)
        entry["error"] = {"code": d.kind, "message": d.reason}
        return entry
    ctx.check_cancelled()
    try:
        entry["answer"] = call_tool(ctx, call.name, call.arguments)
    except ArgumentError as exc:  # validated already; kept for tools that check more
        entry["error"] = {"code": "invalid_arguments", "message": str(exc)}
    return entry


def budgeted_nudge(
    decoded: Decoded,
    tools: ToolSet,
    nudges_used: int,
    max_nudges: int | None,
    default: int,
    *,
    ran: bool = False,
) -> tuple[dict | None, int]:
    """(nudge dict or None, nudges left after it) under the per-turn budget."""
    limit = default if max_nudges is None else max_nudges
    left = max(0, limit - nudges_used)
    if left == 0:
        return None, 0
    found = nudge_for(decoded, tools, ran=ran)
    if found is None:
        return None, left
    return found.to_dict(), left - 1


def run_report(decoded: Decoded, results: list[dict], nudge: dict | None, left: int) -> list[Section]:
    ran = sum(1 for r in results if "answer" in r)
    blocks = sum(1 for d in decoded.diagnostics if d.kind in ("malformed", "unterminated", "truncated"))
    summary = f"ran {ran} of {len(results)} call{'' if len(results) == 1 else 's'}"
    if blocks:
        summary += f" · {blocks} block{'' if blocks == 1 else 's'} not decoded"
    sections = [Section(summary)]
    for n, r in enumerate(results):
        head = f"── {r['id']} {r['name']} {compact(r['arguments'])}"
        if "answer" in r:
            failed = " (refused)" if "error" in r["answer"] else ""
            sections.append(Section(head + failed, r["answer"].get("text", ""), f"results[{n}].answer.text"))
        else:
            sections.append(Section(f"{head}: not run: {r['error']['message']}"))
    for d in decoded.diagnostics:
        if d.call_id is None:
            sections.append(Section(f"── {d.kind} {d.dialect} block at line {d.line}: {d.reason}"))
    if nudge:
        sections.append(Section("── nudge (send this back to the model):", nudge["text"], "nudge.text"))
    elif decoded.diagnostics and left == 0:
        sections.append(Section("── no nudge: this turn's nudge budget is spent"))
    return sections


def compact(arguments: dict, limit: int = 120) -> str:
    text = json.dumps(arguments, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"
