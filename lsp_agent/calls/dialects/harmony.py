"""gpt-oss's harmony format, as the reply's text shows it:

    <|channel|>analysis<|message|>The user wants a.py.<|end|>
    <|start|>assistant<|channel|>commentary to=functions.read <|constrain|>json<|message|>{"path": "a.py"}<|call|>

A message header (`<|start|>assistant`, `<|channel|>…`, a recipient `to=…` before or after
the channel, `<|constrain|>json` or ` json`) ends at `<|message|>`. A message to
`functions.NAME` is a call whose arguments are one JSON object, closed by `<|call|>` (which
servers that stop on it leave out); the `analysis` channel is reasoning; any other message
(`final`, a `commentary` preamble) is the answer: its header and its end token are layout
and leave the visible text.
"""

from __future__ import annotations

import json
import re

from ..dialect import Dialect
from ..jsoncall import call_with_arguments
from ..model import Decodable, Problem, Reasoning
from ..scan import (
    PARTIAL,
    TAG_LIMIT,
    ClosedAt,
    Finder,
    JsonValueFinder,
    Opening,
    OpenToEnd,
    TokenFinder,
    WithTrailer,
    skip_ws,
    starts,
)

NAME = "harmony"
START, CHANNEL, MESSAGE = "<|start|>", "<|channel|>", "<|message|>"
END_TOKENS = ("<|end|>", "<|return|>", "<|call|>")
RECIPIENT = re.compile(r"\bto=([^\s<]+)")
RECIPIENT_HEAD = "to=functions."
CHANNEL_NAME = re.compile(r"<\|channel\|>\s*(\w+)")


def opening(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    for token in END_TOKENS:  # outside a message: layout
        r = starts(text, j, token, final)
        if r is PARTIAL:
            return PARTIAL
        if r:
            return Opening(NAME, base + j, j + len(token), ClosedAt(base + j + len(token)), no_calls, token)
    head = next((t for t in (START, CHANNEL) if text.startswith(t, j)), None)
    if head is None:
        return PARTIAL if any(starts(text, j, t, final) is PARTIAL for t in (START, CHANNEL)) else None
    return message(text, j, base, final, head)


def reply_start(text: str, j: int, base: int, final: bool, scanner: object) -> Opening | object | None:
    """A reply whose prompt ended with `<|start|>assistant` may begin inside the header:
    ` to=functions.NAME<|channel|>commentary json<|message|>{…}`."""
    k = skip_ws(text, j)
    r = starts(text, k, RECIPIENT_HEAD, final)
    if r is not True:
        return PARTIAL if r is PARTIAL or (k == len(text) and not final) else None
    found = message(text, j, base, final, RECIPIENT_HEAD)
    return found if found is PARTIAL or (isinstance(found, Opening) and found.decode is decode_call) else None


def message(text: str, j: int, base: int, final: bool, head: str) -> Opening | object | None:
    """A message whose header begins at text[j] with `head`."""
    k = text.find(MESSAGE, j, j + TAG_LIMIT)
    if k < 0:
        if not final and len(text) < j + TAG_LIMIT:
            return PARTIAL
        if final:
            return Opening(NAME, base + j, len(text), OpenToEnd(MESSAGE), no_calls, head)
        return None
    end = k + len(MESSAGE)
    header = text[j:k]
    recipient = RECIPIENT.search(header)
    channel = CHANNEL_NAME.search(header)
    token = text[j:end]
    if recipient:
        k = skip_ws(text, end)
        if k == len(text) and not final:
            return PARTIAL
        if text.startswith("{", k):  # servers that stop on <|call|> leave it out
            finder: Finder = WithTrailer(JsonValueFinder("{", "the end of the JSON arguments"), "<|call|>")
        else:
            finder = TokenFinder("<|call|>")
        return Opening(NAME, base + j, end, finder, decode_call, token)
    if channel and channel.group(1) == "analysis":
        return Opening(NAME, base + j, end, TokenFinder("<|end|>"), decode_reasoning, token, open_ok=True)
    return Opening(NAME, base + j, end, ClosedAt(base + end), no_calls, token)


def no_calls(block: str) -> list[Decodable | Problem]:
    return []


def decode_reasoning(block: str) -> list[Reasoning]:
    body = block[block.index(MESSAGE) + len(MESSAGE) :].removesuffix("<|end|>")
    return [Reasoning(body.strip())]


def decode_call(block: str) -> list[Decodable | Problem]:
    k = block.index(MESSAGE)
    recipient = RECIPIENT.search(block[:k])
    assert recipient is not None  # the block was claimed on it
    name = recipient.group(1).removeprefix("functions.")
    return [call_with_arguments(name, block[k + len(MESSAGE) :].rstrip().removesuffix("<|call|>"))]


def render(name: str, arguments: dict) -> str:
    args = json.dumps(arguments, ensure_ascii=False)
    return f"{CHANNEL}commentary to=functions.{name} <|constrain|>json{MESSAGE}{args}<|call|>"


DIALECT = Dialect(
    name=NAME,
    label="<|channel|>commentary to=functions.NAME",
    summary="harmony messages to=functions.NAME (gpt-oss); the analysis channel is reasoning",
    prefixes=(START, CHANNEL, *END_TOKENS),
    opening=opening,
    reply_start=reply_start,
    render=render,
    rules=(
        "- Write <|channel|>commentary to=functions.NAME <|constrain|>json<|message|>, the arguments as one JSON object, then <|call|>.",
    ),
)
