"""Property tests over generated replies mixing prose, valid and malformed blocks of every
dialect, example fences and stray closers, split at random points (inside openers and
closers included):

1. chunking invariance: any split gives the batch decode's visible text, calls and diagnostics;
2. no silent loss: every generated block a dialect claims starts inside a call's or a
   diagnostic's span;
3. visible text never contains a decoded block, and it is the reply minus the spans
   (up to whitespace, which the line rule may remove).
"""

import json
import re
from itertools import pairwise

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lsp_agent.calls import Scrubber, decode
from lsp_agent.calls.dialects import DIALECTS
from lsp_agent.calls.prompt import render_call
from tests.support.callcheck import AGENT_TOOLS, as_tuple

# The property tests read every dialect (those read only when asked for too); the chunking
# test also runs with the default set.
ALL = list(DIALECTS)
TAUGHT = sorted(n for n, d in DIALECTS.items() if d.teaches)
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
    # Near misses: openers that are not (quite) openers, each split at every point by the
    # one-character stream.
    "[TOOL_CALLS][ARGS]{}",
    '[TOOL_CALLS][CALL_ID]"7"',
    "[TOOL_CALLS] read",
    "[TOOL_CALLS]read[CALL_ID]k",
    "<tool_call> then prose",
    '<tool_call id="x" <b>',
    "<tool_call\n>",
    "<function=read x>",
    "<function=read",
    '<invoke name="">',
    "<invoke name='read'",
    "<function_calls> later",
    "~~ ``",
    "<tool_call>get_weather then prose",
    "<|channel|> and <|call",
    "Action: take a break",
    '[f(a="""x\n"07""", b=07)]',
    "[not a call](link)",
    '{"no": "name"}',
]
EXAMPLE_FENCES = [
    '```python\n<tool_call>{"name": "read", "arguments": {"path": "example.py"}}</tool_call>\n```',
    "~~~xml\n<function=read><parameter=path>example.py</parameter></function>\n</tool_call>\n~~~",
    '```\n[TOOL_CALLS]read[ARGS]{"path": "example.py"}\n```',
]
# Claimed blocks a dialect cannot decode (each one is claimed by an opener).
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
    '<tool_call>{"name": "raed", "arguments": {"path": "x"}}</tool_call>',
    '<tool_call>{"name": "read", "arguments": {"start": 0}}</tool_call>',
    "<tool_call>read\n<arg_key>path</arg_key><oops></tool_call>",
    "<minimax:tool_call><parameter>x</minimax:tool_call>",
    "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{x}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    '<｜DSML｜function_calls><｜DSML｜invoke name="read"></｜DSML｜function_calls>',
    "<|tool_calls_section_begin|><|tool_call_begin|>read<|tool_calls_section_end|>",
    "<|channel|>commentary to=functions.read <|constrain|>json<|message|>[1]<|call|>",
    '<|tool_call|>[{"name": 1}]',
    '<|START_ACTION|>[{"parameters": {}}]<|END_ACTION|>',
    '<|python_tag|>{"name": "read", "parameters": [1]}',
    "[read(1)]",
    "<|python_start|>[read(path=open())]<|python_end|>",
    '<tool_call> [{"name": "read", "arguments": 7}]',
    '<|open|>tools<|sep|><|open|>call index="1"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
    "<seed:tool_call>\n<function=read>\npath=x\n</function>\n</seed:tool_call>",
    "<function_calls>read(path=open('x'))</function_calls>",
    "<|tool_call_start|>[read('x')]<|tool_call_end|>",
    "]<]minimax[>[<tool_call>\n]<]minimax[>[<call>x]<]minimax[>[</call>\n]<]minimax[>[</tool_call>",
    "<｜tool_calls_begin｜><｜tool_call_begin｜>read<｜tool_sep｜>{}<｜tool_call_end｜><｜tool_calls_end｜>",
    '<tool_calls>[{"name": 3}]</tool_calls>',
    '<|action_start|><|plugin|>{"name": }<|action_end|>',
    '<|tools_prefix|>[{"read": 1}]<|tools_suffix|>',
    'functools[{"arguments": {}}]',
]
# Blocks cut short: only ever the last piece (an open fence hides everything after it).
CUT_SHORT = [
    '<tool_call>{"name": "read", "arguments": {"path": "a',
    "<tool_call>\n<function=read>\n<parameter=path>\na",
    '<function_calls><invoke name="read"><parameter name="path">a',
    '[TOOL_CALLS]read[ARGS]{"path": "a',
    '[TOOL_CALLS][{"name": "read"',
    "```tool_call\n",
    '```tool_call\n{"name": "read", "arguments": {',
    "<tool_call>read\n<arg_key>path</arg_key>\n<arg_value>a",
    '<minimax:tool_call>\n<invoke name="read">',
    '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>read<｜tool▁sep｜>{"path"',
    '<｜DSML｜function_calls>\n<｜DSML｜invoke name="read">',
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.read:0",
    '<|channel|>commentary to=functions.read json<|message|>{"path": "a',
    '<|tool_call|>[{"name": "read"',
    '<|START_ACTION|>[{"tool_name": "read"',
    '<|python_tag|>{"name": "read", "parameters": {',
    '[read(path="a"',
    '<|python_start|>[read(path="a',
    '<tool_call> [{"name": "read"',
]
# Token soup for the chunking test: fragments of every opener, closer and marker, quotes,
# escapes, fences, CRLF and non-ASCII text, in any order.
FRAGMENTS = [
    *("<tool_call>", "</tool_call>", "<toolcall>", "<tool-call id='7'>", "</tool-call>"),
    *("<function=read>", "</function>", "<parameter=path>", "</parameter>", "<function_calls>"),
    *('<invoke name="read">', "</invoke>", '<parameter name="path">', "</function_calls>"),
    *("[TOOL_CALLS]", "[ARGS]", "[CALL_ID]", "read", "[", "]", "{", "}", '"', "\\", ":", ","),
    *("\n", "\r\n", " ", "    ", "`", "```", "```tool_call\n", "\n```\n", "~~~", "<", ">"),
    *('{"name": "read", "arguments": {"path": "a"}}', "é", "✓", "\U0001f600", "x"),
    *("<think>", "</think>", "<|channel|>analysis", "<|channel|>final", " to=functions.read", "<|message|>"),
    *("<|call|>", "<|end|>", "<|start|>assistant", "<arg_key>", "</arg_value>", "<｜tool▁calls▁begin｜>"),
    *("<｜tool▁call▁end｜>", "<|tool_call|>", "<|START_ACTION|>", "<|END_ACTION|>", "<|python_start|>", "("),
    *(")", "'", "Action: ```json\n", "<minimax:tool_call>", "<|tool_calls_section_begin|>", "<|python_tag|>"),
]
STRAY = ["</tool_call>", "</function>", "</invoke>", "</function_calls>", "</tool-call>"]

paths = st.text(alphabet="abc./_<>\"'\\ {}[]`\n", min_size=1, max_size=12)


@st.composite
def valid_block(draw):
    dialect = draw(st.sampled_from(TAUGHT))
    path = draw(paths)
    if DIALECTS[dialect].lists_parameters:  # raw text values cannot hold their own tags
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
def piece(draw, noise=False):
    """(text, claimed, needs_own_line)."""
    kinds = ["prose", "prose", "valid", "valid", "malformed", "fence", "stray"] + ["noise"] * (2 * noise)
    kind = draw(st.sampled_from(kinds))
    if kind == "noise":
        return "".join(draw(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=10))), False, False
    if kind == "prose":
        return draw(st.sampled_from(PROSE)), False, False
    if kind == "valid":
        text = draw(valid_block())
        return text, True, text.startswith(("```", "Action:"))
    if kind == "malformed":
        text = draw(st.sampled_from(MALFORMED))
        return text, True, text.startswith("```")
    if kind == "fence":
        return draw(st.sampled_from(EXAMPLE_FENCES)), False, True
    return draw(st.sampled_from(STRAY)), True, False


@st.composite
def reply(draw, noise=False):
    """The reply, the offsets where claimed blocks start, and whether it ends inside a
    block. With `noise`, token soup is mixed in (it may claim blocks of its own, so
    `starts` is then incomplete)."""
    text, starts = "", []
    pieces = draw(st.lists(piece(noise), min_size=1, max_size=8))
    cut_short = draw(st.booleans())
    if cut_short:
        cut = draw(st.sampled_from(CUT_SHORT))
        pieces.append((cut, True, cut.startswith("```")))
    for text_piece, claimed, own_line in pieces:
        sep = draw(st.sampled_from(["", " ", "\n", "\n\n", "  "]))
        if own_line or (text and text[-1] == "`"):
            sep = "\n"
        text += sep
        if claimed:
            starts.append(len(text))
        text += text_piece
        if own_line:
            text += "\n"
    return text, starts, cut_short


@st.composite
def splits(draw, text):
    cuts = sorted(draw(st.lists(st.integers(0, len(text)), max_size=12)))
    return [text[a:b] for a, b in zip([0, *cuts], [*cuts, len(text)], strict=False)]


@SETTINGS
@given(
    st.data(),
    reply(noise=True),
    st.sampled_from([None, "stop", "length"]),
    st.sampled_from([None, ALL]),
    st.sampled_from([None, "open"]),
)
def test_chunking_invariance(data, generated, finish_reason, dialects, reasoning):
    """Also with reasoning the prompt opened: the reply then starts inside it."""
    text, _, _ = generated
    if reasoning:
        text = f"Thinking about {text[:40]}</think>{text}"
    batch = decode(text, finish_reason, tools=AGENT_TOOLS, dialects=dialects, reasoning=reasoning)
    want = (*as_tuple(batch.visible_text, batch.calls, batch.diagnostics), batch.reasoning_text)
    for pieces in (data.draw(splits(text)), list(text)):
        scrubber = Scrubber(AGENT_TOOLS, dialects=dialects, reasoning=reasoning)
        visible = "".join(scrubber.feed(p) for p in pieces) + scrubber.flush(finish_reason)
        got = as_tuple(visible, scrubber.calls, scrubber.diagnostics)
        assert (*got, scrubber.reasoning_text) == want


@SETTINGS
@given(reply(), st.sampled_from([None, "length"]))
def test_no_silent_loss(generated, finish_reason):
    text, starts, _ = generated
    got = decode(text, finish_reason, tools=AGENT_TOOLS, dialects=ALL)
    spans = [c.span for c in got.calls] + [d.span for d in got.diagnostics]
    for start in starts:
        assert any(a <= start < b for a, b in spans), (start, text[start : start + 40])


@SETTINGS
@given(reply())
def test_visible_text_is_the_reply_minus_the_blocks(generated):
    text, _, _ = generated
    got = decode(text, tools=AGENT_TOOLS, dialects=ALL)
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

    def squash(s):
        return re.sub(r"\s+", "", s)

    assert squash(got.visible_text) == squash("".join(rest))


@SETTINGS
@given(reply(), st.sampled_from([None, "stop", "length", "max_tokens", "tool_calls"]))
@example(  # the cut block's opener sat in a string still open at its line's end: it was missed
    (
        '<tool_call>{"name": "read", "arguments": {"path": "x}}</tool_call><tool_call>{"name": "read"'
        "<tool_call>\n<function=read>\n<parameter=path>\na",
        [0, 66, 92],
        True,
    ),
    None,
)
def test_a_reply_ending_inside_a_block_is_truncated_only_by_the_length_limit(generated, finish_reason):
    text, starts, cut_short = generated
    got = decode(text, finish_reason, tools=AGENT_TOOLS, dialects=ALL)
    open_at_end = [d for d in got.diagnostics if d.kind in ("truncated", "unterminated")]
    kind = "truncated" if finish_reason in ("length", "max_tokens") else "unterminated"
    assert {d.kind for d in open_at_end} <= {kind}
    if cut_short:  # the cut block is reported to the end, alone or inside an earlier open block
        assert any(a <= starts[-1] and b == len(text) for a, b in (d.span for d in open_at_end))
