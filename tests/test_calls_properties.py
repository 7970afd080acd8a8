"""Property tests over generated replies mixing prose, valid and malformed blocks of every
grammar, example fences and stray closers, split at random points (inside openers and
closers included):

1. chunking invariance: any split gives the batch decode's visible text, calls and diagnostics;
2. no silent loss: every generated block a grammar claims starts inside a call's or a
   diagnostic's span;
3. visible text never contains a decoded block, and it is the reply minus the spans
   (up to whitespace, which the line rule may remove).
"""

import json
import re
from itertools import pairwise

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.calls import decode
from lsp_agent.calls.prompt import DIALECTS, render_call

from .callcheck import as_tuple, streamed

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

PROSE = [
    "Let me look.",
    "a < b and c > d",
    "lists [1, 2] and {x: 1}",
    "it's `inline` code",
    "`<tool_call>` and `</function>` are tags",
    "use <tool_call> tags for calls",
    "the [TOOL_CALLS] marker",
    "<b>bold</b> <function=> <invoke>",
    'quote " and backslash \\',
    "```tool_call``` inline",
    "ünïcödé ✓",
]
EXAMPLE_FENCES = [
    '```python\n<tool_call>{"name": "read", "arguments": {"path": "example.py"}}</tool_call>\n```',
    "~~~xml\n<function=read><parameter=path>example.py</parameter></function>\n</tool_call>\n~~~",
    '```\n[TOOL_CALLS]read[ARGS]{"path": "example.py"}\n```',
]
# Claimed blocks a grammar cannot decode (each one is claimed by an opener).
MALFORMED = [
    '<tool_call>{"name": "read", "arguments": {"path": "x"}</tool_call>',
    '<tool_call>{"name": ""}</tool_call>',
    '<tool_call>{"name": "read", "arguments": {"path": "x}}</tool_call>',
    '<tool_call>{"name": "read"',
    '<tool_call><tool_call>{"name": "read", "arguments": {"path": "r"}}</tool_call>',
    '<toolcall>{"arguments": {}}</toolcall>',
    "<function=read><parameter=path>x</function>",
    "<function=read><parameter=path>x</parameter>",
    "<tool_call><function=read><parameter=path>x</parameter></tool_call>",
    '<invoke name="read"><parameter name="path">x</invoke>',
    '<function_calls><invoke name="read"></function_calls>',
    '[TOOL_CALLS][{"name": "read", "arguments": {"path": "x"]}]',
    '[TOOL_CALLS]read[ARGS]{"path": x}',
    '[TOOL_CALLS]["read"',
    "```tool_call\n{oops}\n```",
    "```tool_call\n",
    '<tool_call>{"name": "raed", "arguments": {"path": "x"}}</tool_call>',
    '<tool_call>{"name": "read", "arguments": {"start": 0}}</tool_call>',
]
STRAY = ["</tool_call>", "</function>", "</invoke>", "</function_calls>", "</tool-call>"]

paths = st.text(alphabet="abc./_<>\"'\\ {}[]`\n", min_size=1, max_size=12)


@st.composite
def valid_block(draw):
    dialect = draw(st.sampled_from(sorted(DIALECTS)))
    path = draw(paths)
    if dialect in ("function_xml", "invoke_xml"):  # raw text values cannot hold their own tags
        path = re.sub(r"[<>\n`]", "_", path)
    arguments = {"path": path}
    if draw(st.booleans()):
        arguments["start"] = draw(st.integers(1, 99))
    if dialect == "mistral" and draw(st.booleans()):
        return "[TOOL_CALLS]" + json.dumps([{"name": "read", "arguments": arguments}])
    if dialect == "function_xml" and draw(st.booleans()):
        return (
            render_call(dialect, "read", arguments)
            .removeprefix("<tool_call>\n")
            .removesuffix("\n</tool_call>")
        )
    return render_call(dialect, "read", arguments)


@st.composite
def piece(draw):
    """(text, claimed, needs_own_line)."""
    kind = draw(st.sampled_from(["prose", "prose", "valid", "valid", "malformed", "fence", "stray"]))
    if kind == "prose":
        return draw(st.sampled_from(PROSE)), False, False
    if kind == "valid":
        text = draw(valid_block())
        return text, True, text.startswith("```")
    if kind == "malformed":
        text = draw(st.sampled_from(MALFORMED))
        return text, True, text.startswith("```")
    if kind == "fence":
        return draw(st.sampled_from(EXAMPLE_FENCES)), False, True
    return draw(st.sampled_from(STRAY)), True, False


@st.composite
def reply(draw):
    """The reply, and the offsets where claimed blocks start."""
    text, starts = "", []
    for text_piece, claimed, own_line in draw(st.lists(piece(), min_size=1, max_size=8)):
        sep = draw(st.sampled_from(["", " ", "\n", "\n\n", "  "]))
        if own_line or (text and text[-1] == "`"):
            sep = "\n"
        text += sep
        if claimed:
            starts.append(len(text))
        text += text_piece
        if own_line:
            text += "\n"
    return text, starts


@st.composite
def splits(draw, text):
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)])]


@SETTINGS
@given(st.data(), reply(), st.sampled_from([None, "stop", "length"]))
def test_chunking_invariance(data, generated, finish_reason):
    text, _ = generated
    batch = decode(text, finish_reason)
    want = as_tuple(batch.visible_text, batch.calls, batch.diagnostics)
    assert as_tuple(*streamed(text, data.draw(splits(text)), finish_reason)) == want
    assert as_tuple(*streamed(text, list(text), finish_reason)) == want


@SETTINGS
@given(reply(), st.sampled_from([None, "length"]))
def test_no_silent_loss(generated, finish_reason):
    text, starts = generated
    got = decode(text, finish_reason)
    spans = [c.span for c in got.calls] + [d.span for d in got.diagnostics]
    for start in starts:
        assert any(a <= start < b for a, b in spans), (start, text[start : start + 40])


@SETTINGS
@given(reply())
def test_visible_text_is_the_reply_minus_the_blocks(generated):
    text, _ = generated
    got = decode(text)
    spans = sorted({c.span for c in got.calls} | {d.span for d in got.diagnostics})
    for (a1, b1), (a2, b2) in pairwise(spans):
        assert b1 <= a2 or (a1, b1) == (a2, b2)  # blocks never overlap
    for call in got.calls:
        assert text[call.span[0] : call.span[1]] not in got.visible_text
    rest, at = [], 0
    for a, b in spans:
        rest.append(text[at:a])
        at = b
    rest.append(text[at:])
    squash = lambda s: re.sub(r"\s+", "", s)
    assert squash(got.visible_text) == squash("".join(rest))
