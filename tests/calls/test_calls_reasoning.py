"""Reasoning the prompt opened (`reasoning="open"`, or implied by the model family), and
reasoning a reply never closes: reasoning never yields calls or diagnostics and comes back
as `reasoning_text`; a call written after reasoning left open is decoded, not swallowed.
Every case is checked streamed in several splits against the batch decode."""

import pytest

from lsp_agent.calls import ToolSet, decode
from lsp_agent.calls.dialects import OPENS_REASONING, prompt_opened_reasoning
from lsp_agent.errors import ArgumentError
from tests.support.callcheck import calls, check

TOOLS = ToolSet.from_list(
    [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        }
    ]
)
HERMES = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
KIMI = (
    "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    '{"city": "Paris"}<|tool_call_end|><|tool_calls_section_end|>'
)
PARIS = [("get_weather", {"city": "Paris"})]


def test_reasoning_the_prompt_opened_ends_at_its_closer():
    # DeepSeek R1, QwQ, GLM, Qwen3 thinking: the template ends the prompt with <think>.
    reply = f"The user wants Paris. I could write {HERMES} but first</think>\n\nChecking.\n{HERMES}"
    got = check(reply, tools=TOOLS, reasoning="open")
    assert got.reasoning_text == f"The user wants Paris. I could write {HERMES} but first"
    assert calls(got) == PARIS and got.diagnostics == []  # the call quoted in the reasoning is not run
    assert got.visible_text == "\nChecking.\n"


def test_without_the_option_the_same_reply_shows_its_reasoning_and_runs_the_quoted_call():
    reply = f"I could write {HERMES}</think>Done."
    got = check(reply, tools=TOOLS)
    assert got.reasoning_text == "" and len(got.calls) == 1 and "</think>" in got.visible_text


def test_a_family_whose_prompt_always_opens_reasoning_implies_it():
    reply = "Paris is in France.</think>It is sunny."
    for family in sorted(OPENS_REASONING - {"kimi-k3", "apriel"}):
        got = check(reply, tools=TOOLS, dialects=[family])
        assert (got.reasoning_text, got.visible_text) == ("Paris is in France.", "It is sunny."), family
    # Apriel's template ends the prompt with its header; its reasoning ends at its own marker.
    apriel = "Paris is in France.\n[BEGIN FINAL RESPONSE]\nIt is sunny.\n[END FINAL RESPONSE]\n<|end|>"
    got = check(apriel, tools=TOOLS, dialects=["apriel"])
    assert (got.reasoning_text, got.visible_text) == ("Paris is in France.", "It is sunny.\n")
    k3 = "Paris.<|close|>think<|sep|><|open|>response<|sep|>Sunny.<|close|>response<|sep|><|close|>message<|sep|>"
    got = check(k3, tools=TOOLS, dialects=["kimi-k3"])  # its thinking prompt ends with <|open|>think<|sep|>
    assert (got.reasoning_text, got.visible_text) == ("Paris.", "Sunny.")
    # "closed" overrides the family; a family that thinks only when asked does not imply it.
    got = check(reply, tools=TOOLS, dialects=["deepseek-r1"], reasoning="closed")
    assert got.reasoning_text == "" and got.visible_text == reply
    assert check(reply, tools=TOOLS, dialects=["qwen3"]).visible_text == reply


def test_reasoning_never_closed_is_all_reasoning_with_no_diagnostic():
    for reason in ("stop", "length"):
        got = check("Let me think about the weather", reason, tools=TOOLS, reasoning="open")
        assert (got.reasoning_text, got.visible_text, got.calls, got.diagnostics) == (
            "Let me think about the weather",
            "",
            [],
            [],
        )


def test_a_model_that_did_not_reason_though_the_prompt_opened_it_still_calls():
    got = check(HERMES, tools=TOOLS, reasoning="open")
    assert calls(got) == PARIS and got.reasoning_text == "" and got.diagnostics == []


def test_kimi_calls_inside_an_unclosed_think_are_decoded_not_swallowed():
    reply = f"<think>The user wants the weather in Paris. {KIMI}"
    got = check(reply, tools=TOOLS, dialects=["kimi-k2"])
    assert calls(got) == PARIS and got.diagnostics == []
    assert got.reasoning_text == "The user wants the weather in Paris."
    # ... and a call cut short there is reported truncated, not taken for reasoning.
    cut = f"<think>Paris. {KIMI[:-60]}"
    got = check(cut, "length", tools=TOOLS, dialects=["kimi-k2"])
    assert got.calls == [] and [d.kind for d in got.diagnostics] == ["truncated"]
    assert got.reasoning_text == "Paris."


def test_a_closed_think_keeps_the_calls_it_quotes():
    reply = f"<think>Maybe {KIMI}</think>No call needed."
    got = check(reply, tools=TOOLS, dialects=["kimi-k2"])
    assert (got.calls, got.diagnostics, got.visible_text) == ([], [], "No call needed.")


def test_magistral_think_brackets():
    reply = '[THINK]Paris, so get_weather.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris"}'
    got = check(reply, tools=TOOLS, dialects=["magistral"])
    assert (got.reasoning_text, calls(got), got.diagnostics) == ("Paris, so get_weather.", PARIS, [])
    assert check(reply, tools=TOOLS).reasoning_text == "Paris, so get_weather."  # read by default
    opened = check("Paris.[/THINK]Sunny.", tools=TOOLS, dialects=["magistral"], reasoning="open")
    assert (opened.reasoning_text, opened.visible_text) == ("Paris.", "Sunny.")


def test_cohere_command_a_thinking_the_prompt_opened():
    reply = 'Paris.<|END_THINKING|><|START_ACTION|>[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]<|END_ACTION|>'
    got = check(reply, tools=TOOLS, dialects=["cohere"], reasoning="open")
    assert (got.reasoning_text, calls(got), got.diagnostics, got.visible_text) == ("Paris.", PARIS, [], "")


def test_reasoning_open_with_no_reasoning_dialect_chosen_reads_think():
    got = check(f"Hmm.</think>{HERMES}", tools=TOOLS, dialects=["hermes"], reasoning="open")
    assert (got.reasoning_text, calls(got)) == ("Hmm.", PARIS)


def test_an_unknown_reasoning_mode_is_refused():
    with pytest.raises(ValueError, match="reasoning must be one of open, closed"):
        prompt_opened_reasoning(None, "maybe")
    with pytest.raises(ValueError):
        decode("x", tools=TOOLS, reasoning="yes")


def test_reasoning_open_over_the_front_doors(run):
    reply = 'I need a.txt.</think>\n<tool_call>{"name": "read", "arguments": {"path": "a.txt"}}</tool_call>'
    batch = run("decode_calls", reply=reply, reasoning="open")
    assert (batch["reasoning_text"], batch["visible_text"]) == ("I need a.txt.", "")
    assert [c["name"] for c in batch["calls"]] == ["read"]
    session = run("stream_open", reasoning="open")["session"]
    answers = [run("stream_feed", session=session, delta=reply[k : k + 5]) for k in range(0, len(reply), 5)]
    answers.append(run("stream_flush", session=session))
    assert "".join(a["reasoning_text"] for a in answers) == "I need a.txt."
    assert [c["name"] for a in answers for c in a["calls"]] == ["read"]
    with pytest.raises(ArgumentError, match="'ajar' is not one of"):
        run("decode_calls", reply=reply, reasoning="ajar")


def test_an_opener_the_model_writes_though_the_prompt_opened_the_reasoning_is_not_reasoning_text():
    got = check(f"<think>\nPlanning.</think>\n{HERMES}", tools=TOOLS, dialects=["qwq"])
    assert (got.reasoning_text, calls(got)) == ("Planning.", PARIS)
