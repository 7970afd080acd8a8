"""Front doors for text-dialect tool calls (runtime tools, for_agents=False: served as
`lspAgent/<name>` requests and commands, left out of the catalog a model sees).

decode_calls, run_calls and tool_prompt are stateless. A streaming session
(stream_open → stream_feed… → stream_flush) keeps one Scrubber per reply; sessions close
on flush, expire after SESSION_IDLE seconds without a feed, and at most MAX_SESSIONS are
open at once.
"""

from __future__ import annotations

import itertools
import secrets
import threading
import time
from dataclasses import dataclass, field, replace

from ..calls.decode import decode
from ..calls.dialects import DEFAULT, DIALECTS, FAMILIES, OPENS_REASONING, REASONING_MODES, teaching
from ..calls.model import Decoded
from ..calls.prompt import tool_prompt as render_prompt
from ..calls.report import Section, fit
from ..calls.run import budgeted_nudge, compact
from ..calls.run import run_calls as run_reply
from ..calls.scrubber import Scrubber
from ..calls.toolset import ToolSet, ToolSpec
from ..errors import Refusal
from .registry import MAX_CHARS, REGISTRY, Context, call, tool

MAX_SESSIONS = 32
SESSION_IDLE = 600.0  # seconds

FINISH_REASON = {
    "type": ["string", "null"],
    "description": 'The model\'s finish reason: "length" or "max_tokens" make a block left open `truncated`; anything else `unterminated`.',
}
TOOLS = {
    "type": "array",
    "items": {"type": "object"},
    "description": "The runtime's tools to check calls against, each {name, inputSchema|parameters, description}; default: this server's agent tools.",
}
ID_PREFIX = {
    "type": "string",
    "maxLength": 64,
    "description": "Prefix of generated call ids (default 'call_').",
}
NUDGES = {
    "nudges_used": {
        "type": "integer",
        "minimum": 0,
        "default": 0,
        "description": "Nudges already sent this turn.",
    },
    "max_nudges": {
        "type": "integer",
        "minimum": 0,
        "description": "Nudges allowed per turn (default: the server's max_nudges).",
    },
}
DIALECT_NAMES = [*DIALECTS, *(f for f in FAMILIES if f not in DIALECTS)]  # each name once
DIALECT_OPTION = {
    "type": "array",
    "items": {"enum": DIALECT_NAMES},
    "description": 'The dialects to look for, by dialect or model family (e.g. ["llama3"], ["gpt-oss"]); '
    f"default: {', '.join(DEFAULT)}.",
}
REASONING_OPTION = {
    "enum": list(REASONING_MODES),
    "description": "open: the prompt opened the model's reasoning (its template ends with <think> or the like), so "
    "the reply starts inside it and ends it with </think>; closed: it did not. Default: as the model families named "
    f"in dialects do (open for {', '.join(sorted(OPENS_REASONING))}).",
}


def agent_tools() -> ToolSet:
    """The registry's agent tools (for_agents=True): the only ones a reply may run here."""
    return ToolSet(ToolSpec(t.name, t.summary, t.schema) for t in REGISTRY.values() if t.for_agents)


def toolset(tools: list | None) -> ToolSet:
    return agent_tools() if tools is None else ToolSet.from_list(tools)


def decode_report(
    decoded: Decoded, nudge: dict | None, left: int, visible_where: str = "visible_text"
) -> list[Section]:
    calls, diags = decoded.calls, decoded.diagnostics
    sections = [
        Section(
            f"{len(calls)} call{'' if len(calls) == 1 else 's'} decoded · {len(diags)} diagnostic{'' if len(diags) == 1 else 's'}"
        )
    ]
    for c in calls:
        flag = "" if c.runnable else "  (not runnable)"
        sections.append(
            Section(f"{c.id}  {c.name} {compact(c.arguments)}  [{c.dialect}, line {c.line}]{flag}")
        )
    for d in diags:
        sections.append(
            Section(f"{d.kind}  [{d.dialect}, line {d.line}, chars {d.span[0]}-{d.span[1]}] {d.reason}")
        )
    if nudge:
        sections.append(Section("nudge:", nudge["text"], "nudge.text"))
    elif diags and left == 0:
        sections.append(Section("no nudge: this turn's nudge budget is spent"))
    shown = decoded.visible_text
    sections.append(Section(f"visible text ({len(shown)} chars):", shown, visible_where))
    if decoded.reasoning_text:
        thought = decoded.reasoning_text
        sections.append(Section(f"reasoning text ({len(thought)} chars):", thought, "reasoning_text"))
    return sections


@tool(
    "decode_calls",
    "Decode tool calls",
    "Decode the tool calls a model wrote as text in a reply, in the dialects of the open models (Hermes and "
    "Qwen, Qwen3-Coder, Mistral, Llama 3 and 4, DeepSeek, Kimi K2, GLM, gpt-oss, Granite, Cohere, MiniMax, "
    "```tool_call fences; see `dialects`): the visible text with call blocks removed, the reasoning apart, the calls, "
    "a diagnostic for every block "
    "that could not be decoded or run, and the nudge to send back.",
    {
        "type": "object",
        "properties": {
            "reply": {"type": "string", "description": "The model's whole reply."},
            "finish_reason": FINISH_REASON,
            "tools": TOOLS,
            "id_prefix": ID_PREFIX,
            "dialects": DIALECT_OPTION,
            "reasoning": REASONING_OPTION,
            **NUDGES,
            "max_chars": MAX_CHARS,
        },
        "required": ["reply"],
        "additionalProperties": False,
    },
    for_agents=False,
    light=True,
)
def decode_calls(
    ctx: Context,
    reply: str,
    *,
    max_chars: int,
    finish_reason=None,
    tools=None,
    id_prefix="call_",
    nudges_used=0,
    max_nudges=None,
    dialects=None,
    reasoning=None,
) -> dict:
    checked = toolset(tools)
    decoded = decode(
        reply, finish_reason, tools=checked, id_prefix=id_prefix, dialects=dialects, reasoning=reasoning
    )
    nudge, left = budgeted_nudge(decoded, checked, nudges_used, max_nudges, ctx.settings.max_nudges)
    return {
        "text": fit(decode_report(decoded, nudge, left), max_chars),
        **decoded.to_dict(),
        "nudge": nudge,
        "nudges_left": left,
    }


@tool(
    "run_calls",
    "Run tool calls",
    "Decode the tool calls in a model's reply and run each runnable one against this server's agent tools: "
    "every result or error, the diagnostics and the nudge.",
    {
        "type": "object",
        "properties": {
            "reply": {"type": "string", "description": "The model's whole reply."},
            "finish_reason": FINISH_REASON,
            "id_prefix": ID_PREFIX,
            "dialects": DIALECT_OPTION,
            "reasoning": REASONING_OPTION,
            **NUDGES,
            "max_chars": MAX_CHARS,
        },
        "required": ["reply"],
        "additionalProperties": False,
    },
    for_agents=False,
)
def run_calls(
    ctx: Context,
    reply: str,
    *,
    max_chars: int,
    finish_reason=None,
    id_prefix="call_",
    nudges_used=0,
    max_nudges=None,
    dialects=None,
    reasoning=None,
) -> dict:
    return run_reply(
        ctx,
        reply,
        finish_reason,
        tools=agent_tools(),
        call_tool=each_its_own,
        max_chars=max_chars,
        nudges_used=nudges_used,
        max_nudges=max_nudges,
        id_prefix=id_prefix,
        dialects=dialects,
        reasoning=reasoning,
    )


def each_its_own(ctx: Context, name: str, arguments: dict) -> dict:
    """One call of a reply, its answer's time counted from when it began, not the reply."""
    return call(ctx if ctx.arrived is None else replace(ctx, arrived=time.monotonic()), name, arguments)


@tool(
    "tool_prompt",
    "Tool-call prompt",
    "The tool protocol to put in a system prompt for one dialect: how to write a call, exactly as it is decoded, "
    "and the tools with their parameters.",
    {
        "type": "object",
        "properties": {
            "dialect": {
                "enum": [n for n in DIALECT_NAMES if n not in DIALECTS or DIALECTS[n].teaches],
                "default": "tagged_json",
                "description": "The call format to teach: a dialect, or a model family (its first format).",
            },
            "tools": TOOLS,
            "max_chars": MAX_CHARS,
        },
        "additionalProperties": False,
    },
    for_agents=False,
    light=True,
)
def tool_prompt(ctx: Context, *, max_chars: int, dialect="tagged_json", tools=None) -> dict:
    prompt = render_prompt(dialect, toolset(tools))  # a family teaches its first format
    budget = max_chars
    if len(prompt) > budget:
        raise Refusal(
            "budget_too_small",
            f"the {dialect} prompt has {len(prompt)} characters, over max_chars={budget}; ask with max_chars={len(prompt)} "
            "or pass fewer `tools`.",
            minimum=len(prompt),
        )
    taught = teaching(dialect).name
    return {
        "text": prompt,
        "dialect": taught,
        "dialects": {d.name: d.summary for d in DIALECTS.values() if d.teaches},
    }


# -- streaming sessions ------------------------------------------------------------------


@dataclass
class Session:
    scrubber: Scrubber
    fed: int = 0
    seen_calls: int = 0
    seen_diagnostics: int = 0
    seen_reasoning: int = 0
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def news(self) -> tuple[list[dict], list[dict]]:
        calls = self.scrubber.calls[self.seen_calls :]
        diags = self.scrubber.diagnostics[self.seen_diagnostics :]
        self.seen_calls, self.seen_diagnostics = len(self.scrubber.calls), len(self.scrubber.diagnostics)
        return [c.to_dict() for c in calls], [d.to_dict() for d in diags]

    def new_reasoning(self) -> str:
        """Reasoning blocks completed since the last answer."""
        blocks = self.scrubber.reasoning[self.seen_reasoning :]
        self.seen_reasoning = len(self.scrubber.reasoning)
        return "\n".join(blocks)


class Sessions:
    def __init__(self, limit: int = MAX_SESSIONS, idle: float = SESSION_IDLE):
        self.limit, self.idle = limit, idle
        self.open: dict[str, Session] = {}
        self.lock = threading.Lock()
        self.counter = itertools.count(1)

    def add(self, scrubber: Scrubber) -> str:
        with self.lock:
            now = time.monotonic()
            for sid in [s for s, v in self.open.items() if now - v.last_used > self.idle]:
                del self.open[sid]
            if len(self.open) >= self.limit:
                raise Refusal(
                    "too_many_sessions",
                    f"{self.limit} streaming sessions are open; close one with stream_flush before opening another "
                    f"(idle sessions close after {int(self.idle)} s).",
                )
            sid = f"s{next(self.counter)}-{secrets.token_hex(4)}"
            self.open[sid] = Session(scrubber)
            return sid

    def get(self, sid: str) -> Session:
        with self.lock:
            session = self.open.get(sid)
            if session is not None and time.monotonic() - session.last_used > self.idle:
                del self.open[sid]  # expired, even if no stream_open came by to sweep it
                session = None
        if session is None:
            raise Refusal(
                "unknown_session",
                f"no open streaming session {sid!r}: sessions close on stream_flush and after {int(self.idle)} s idle; "
                "open one with stream_open.",
            )
        return session

    def close(self, sid: str) -> None:
        with self.lock:
            self.open.pop(sid, None)


SESSIONS = Sessions()


@tool(
    "stream_open",
    "Open call stream",
    "Open a streaming session that scrubs tool calls from a reply as it arrives (then stream_feed each delta, "
    "and stream_flush at the end).",
    {
        "type": "object",
        "properties": {
            "tools": TOOLS,
            "id_prefix": ID_PREFIX,
            "dialects": DIALECT_OPTION,
            "reasoning": REASONING_OPTION,
        },
        "additionalProperties": False,
    },
    for_agents=False,
    idempotent=False,
    light=True,
)
def stream_open(ctx: Context, tools=None, id_prefix="call_", dialects=None, reasoning=None) -> dict:
    scrubber = Scrubber(toolset(tools), id_prefix=id_prefix, dialects=dialects, reasoning=reasoning)
    sid = SESSIONS.add(scrubber)
    return {
        "text": f"streaming session {sid} open: send each delta with stream_feed, then stream_flush.",
        "session": sid,
    }


@tool(
    "stream_feed",
    "Feed call stream",
    "Feed the next delta of a reply to a streaming session: the text that is now safe to show, and the calls "
    "and diagnostics completed by this delta.",
    {
        "type": "object",
        "properties": {
            "session": {"type": "string"},
            "delta": {"type": "string"},
            "offset": {
                "type": "integer",
                "minimum": 0,
                "description": "Characters of the reply sent before this delta; when given, a delta sent out of order is refused.",
            },
        },
        "required": ["session", "delta"],
        "additionalProperties": False,
    },
    for_agents=False,
    idempotent=False,
    light=True,
)
def stream_feed(ctx: Context, session: str, delta: str, offset=None) -> dict:
    current = SESSIONS.get(session)
    with current.lock:
        if current.scrubber.closed:  # a stream_flush won the race for the lock
            raise Refusal("unknown_session", f"streaming session {session!r} was flushed.")
        if offset is not None and offset != current.fed:
            raise Refusal(
                "out_of_order",
                f"this delta starts at offset {offset} but the session has {current.fed} characters: send deltas in "
                "order, waiting for each answer.",
                fed=current.fed,
            )
        visible = current.scrubber.feed(delta)
        current.fed += len(delta)
        current.last_used = time.monotonic()
        calls, diagnostics = current.news()
        reasoning = current.new_reasoning()
    return stream_answer(visible, reasoning, calls, diagnostics, current.fed) | {"session": session}


@tool(
    "stream_flush",
    "Flush call stream",
    "End a streaming session: the rest of the visible text, the last calls and diagnostics (a block left open "
    "is `truncated` when finish_reason is length/max_tokens, else `unterminated`), and the nudge for the whole "
    "reply. The session is closed.",
    {
        "type": "object",
        "properties": {"session": {"type": "string"}, "finish_reason": FINISH_REASON, **NUDGES},
        "required": ["session"],
        "additionalProperties": False,
    },
    for_agents=False,
    idempotent=False,
    light=True,
)
def stream_flush(ctx: Context, session: str, finish_reason=None, nudges_used=0, max_nudges=None) -> dict:
    current = SESSIONS.get(session)
    with current.lock:
        SESSIONS.close(session)
        if current.scrubber.closed:
            raise Refusal("unknown_session", f"streaming session {session!r} was already flushed.")
        visible = current.scrubber.flush(finish_reason)
        calls, diagnostics = current.news()
        reasoning = current.new_reasoning()
    scrubber = current.scrubber
    whole = Decoded("", scrubber.calls, scrubber.diagnostics)
    nudge, left = budgeted_nudge(whole, scrubber.tools, nudges_used, max_nudges, ctx.settings.max_nudges)
    answer = stream_answer(visible, reasoning, calls, diagnostics, current.fed)
    answer["text"] += (
        f"; session closed ({len(scrubber.calls)} calls, {len(scrubber.diagnostics)} diagnostics in the reply)"
    )
    if nudge:
        answer["text"] += "\nnudge:\n" + nudge["text"]
    return answer | {"nudge": nudge, "nudges_left": left, "closed": True}


def stream_answer(visible: str, reasoning: str, calls: list[dict], diagnostics: list[dict], fed: int) -> dict:
    text = (
        f"{len(visible)} characters visible, {len(calls)} calls and {len(diagnostics)} diagnostics completed"
    )
    if reasoning:
        text += f", {len(reasoning)} characters of reasoning"
    return {
        "text": text,
        "visible_text": visible,
        "reasoning_text": reasoning,
        "calls": calls,
        "diagnostics": diagnostics,
        "fed": fed,
    }
