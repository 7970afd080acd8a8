"""Nudges, run_calls and the tool-protocol prompt."""

import pytest

from lsp_agent.calls import ToolSet, decode
from lsp_agent.calls.dialects import DIALECTS
from lsp_agent.calls.nudge import Nudger, nudge_for
from lsp_agent.calls.prompt import render_call, tool_prompt
from lsp_agent.tools import Context, call
from lsp_agent.tools.calls import agent_tools

TOOLS = agent_tools()


def run_calls(ctx, reply, **options):
    """The run_calls tool through the registry, as every front door calls it."""
    return call(ctx, "run_calls", {"reply": reply, **options})


GOOD = '<tool_call>{"name": "read", "arguments": {"path": "a.txt"}}</tool_call>'
BAD = '<tool_call>{"name": "read", "arguments": {"path": "b.txt"}</tool_call>'


def test_clean_reply_gets_no_nudge():
    assert nudge_for(decode(f"Reading.\n{GOOD}", tools=TOOLS), TOOLS) is None
    assert nudge_for(decode("Just an answer.", tools=TOOLS), TOOLS) is None


def test_undecodable_block_nudge_names_the_dialect_and_format():
    nudge = nudge_for(decode(f"Reading.\n{GOOD}\n{BAD}", tools=TOOLS), TOOLS)
    assert nudge.kind == "undecodable"
    assert nudge.text == (
        "1 tool call block in your reply could not be decoded, so nothing in it was run:\n"
        "- line 3 (<tool_call> JSON): invalid JSON: Expecting ',' delimiter at line 1 column 48 of the JSON\n"
        "Write each call exactly in this form (<tool_call> JSON):\n"
        "<tool_call>\n"
        '{"name": "read", "arguments": {"path": "README.md"}}\n'
        "</tool_call>\n\n"
        "The other call (call_1) was decoded and runs as written. Resend only what failed."
    )


def test_truncated_nudge():
    nudge = nudge_for(decode("<function=read><parameter=path>a", "length", tools=TOOLS), TOOLS)
    assert nudge.kind == "truncated"
    assert nudge.text.startswith(
        "Your reply was cut off by its length limit inside a tool call (<function=…> XML, line 1)"
    )
    assert nudge.text.endswith("No call ran. Send the calls again, corrected.")


def test_nudge_budget_per_turn():
    nudger = Nudger(TOOLS, max_nudges=2)
    bad = decode(BAD, tools=TOOLS)
    assert nudger.nudge(decode(GOOD, tools=TOOLS)) is None and nudger.left == 2  # clean replies cost nothing
    assert nudger.nudge(bad) is not None and nudger.nudge(bad) is not None
    assert nudger.nudge(bad) is None and nudger.left == 0
    nudger.new_turn()
    assert nudger.nudge(bad) is not None


@pytest.fixture
def ctx(ws, tmp_path):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    return Context(ws)


def test_run_calls_runs_the_good_and_reports_the_bad(ctx):
    reply = (
        f"Reading.\n{GOOD}\n{BAD}\n"
        + '<tool_call>{"name": "decode_calls", "arguments": {"reply": "x"}}</tool_call>'
    )
    answer = run_calls(ctx, reply)
    first, second = answer["results"]
    assert first["answer"]["text"].splitlines()[1:] == ["1:alpha", "2:beta"]
    # The agent's tools nearest by spelling (callers and callees today: `call` is in each),
    # whatever tools the registry has; the rule itself is pinned with a tool set of its own
    # in test_calls_invoke_xml.
    near = TOOLS.closest("decode_calls")
    assert near
    assert second["error"] == {
        "code": "unknown_tool",
        "message": "there is no tool 'decode_calls'; did you mean " + " or ".join(map(repr, near)) + "?",
    }
    assert [d["kind"] for d in answer["diagnostics"]] == ["malformed", "unknown_tool"]
    assert answer["nudge"]["kind"] == "undecodable" and answer["nudges_left"] == 1
    assert "The other call (call_1) ran; its result follows." in answer["nudge"]["text"]
    assert answer["text"].startswith(
        'ran 1 of 2 calls · 1 block not decoded\n── call_1 read {"path": "a.txt"}\n'
    )
    assert answer["visible_text"] == "Reading.\n"


def test_run_calls_refusals_are_answers(ctx):
    answer = run_calls(
        ctx, '<tool_call>{"name": "read", "arguments": {"path": "../../etc/passwd"}}</tool_call>'
    )
    assert answer["results"][0]["answer"]["error"]["code"] == "outside_workspace"
    assert "(refused)" in answer["text"]


def test_run_calls_text_fits_its_budget(ctx, tmp_path):
    (tmp_path / "big.txt").write_text("".join(f"line {n} " + "x" * 60 + "\n" for n in range(400)))
    reply = '<tool_call>{"name": "read", "arguments": {"path": "big.txt"}}</tool_call>' * 2
    answer = run_calls(ctx, reply, max_chars=3000)
    assert len(answer["text"]) <= 3000
    assert (
        "more characters cut to fit the budget; the whole text is in `results[1].answer.text`"
        in answer["text"]
    )
    assert len(answer["results"][1]["answer"]["text"]) > 3000


def test_nudge_budget_spent_in_run_calls(ctx):
    answer = run_calls(ctx, BAD, nudges_used=2, max_nudges=2)
    assert answer["nudge"] is None and answer["nudges_left"] == 0
    assert "no nudge: this turn's nudge budget is spent" in answer["text"]


TAUGHT = sorted(n for n, d in DIALECTS.items() if d.teaches)


@pytest.mark.parametrize("dialect", TAUGHT)
def test_prompt_example_decodes_to_the_example_call(dialect):
    prompt = tool_prompt(dialect, TOOLS)
    example = render_call(dialect, "read", {"path": "README.md"})
    assert example in prompt
    got = decode(example, tools=TOOLS, dialects=[dialect])
    assert [(c.name, c.arguments) for c in got.calls] == [
        ("read", {"path": "README.md"})
    ] and got.diagnostics == []
    assert "### read" in prompt


@pytest.mark.parametrize("dialect", TAUGHT)
def test_render_call_round_trips_typed_arguments(dialect):
    tools = ToolSet.from_list(
        [
            {
                "name": "t",
                "inputSchema": {
                    "type": "object",
                    "properties": {
                        "n": {"type": "integer"},
                        "flags": {"type": "array"},
                        "s": {"type": "string"},
                    },
                },
            }
        ]
    )
    arguments = {"n": 3, "flags": ["a", "b"], "s": 'say "hi" </x>\nnext'}
    got = decode(render_call(dialect, "t", arguments), tools=tools, dialects=[dialect])
    assert [(c.name, c.arguments) for c in got.calls] == [("t", arguments)] and got.diagnostics == []


def test_prompt_lists_parameters_for_xml_and_schemas_for_json():
    assert "- path (string, required): File path" in tool_prompt("function_xml", TOOLS)
    assert 'Parameters (JSON Schema): {"type": "object"' in tool_prompt("tagged_json", TOOLS)


@pytest.mark.parametrize("came_in", [True, False])
def test_each_call_of_a_reply_counts_its_time_from_when_it_began(ctx, monkeypatch, came_in):
    """A reply's calls run one after the other: each one's answer time (Context.arrived,
    which references holds its by-name candidates to) starts with it, not with the reply."""
    import dataclasses
    import time

    from lsp_agent.tools import calls as calls_tool

    began: list[float | None] = []
    real = calls_tool.call

    def timed(sub, name, arguments):
        began.append(sub.arrived)
        return real(sub, name, arguments)

    monkeypatch.setattr(calls_tool, "call", timed)
    reply_in = time.monotonic() - 10.0 if came_in else None
    answer = run_calls(dataclasses.replace(ctx, arrived=reply_in), f"{GOOD}\n{GOOD}")
    assert [r["answer"]["text"].splitlines()[1] for r in answer["results"]] == ["1:alpha"] * 2
    if came_in:
        assert len(began) == 2 and reply_in + 10.0 <= began[0] <= began[1]
    else:
        assert began == [None, None]
