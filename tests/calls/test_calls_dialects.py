"""Every dialect read by model family: a valid reply, a malformed one, one the reply leaves
open (unterminated, and truncated by the length limit), each checked streamed in several
splits against the batch decode (callcheck.check). Replies are written from each format."""

import re

import pytest

from lsp_agent.calls import ToolSet, decode
from lsp_agent.calls.dialects import DEFAULT, DIALECTS, FAMILIES, chosen
from tests.support.callcheck import calls, check

TOOLS = ToolSet.from_list(
    [
        {
            "name": "get_weather",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                "required": ["city"],
            },
        },
        {"name": "get_time", "parameters": {"type": "object", "properties": {}}},
    ]
)
PARIS = ("get_weather", {"city": "Paris", "days": 2})
NS = "]<]minimax[>["  # MiniMax-M3's namespace token
DSML = "｜DSML｜"

# family: (valid reply, its calls, malformed reply, reply left open)
CASES = {
    "llama3": (
        'Sure. {"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}; {"name": "get_time", "parameters": {}}',
        [PARIS, ("get_time", {})],
        '{"name": "get_weather", "parameters": {"city": Paris}}',
        '<|python_tag|>{"name": "get_weather", "parameters": {"city": "Par',
    ),
    "llama4": (
        "<|python_start|>[get_weather(city='Paris', days=2), get_time()]<|python_end|>",
        [PARIS, ("get_time", {})],
        "<|python_start|>[get_weather('Paris')]<|python_end|>",
        "<|python_start|>[get_weather(city='Par",
    ),
    "llama3.2": (
        "[get_weather(city='Paris', days=2)]",
        [PARIS],
        "[get_weather(city=open('x'))]",
        '[get_weather(city="Paris", ',
    ),
    "deepseek-v3": (
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n"
        '{"city": "Paris", "days": 2}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        [PARIS],
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": }<｜tool▁call▁end｜><｜tool▁calls▁end｜>',
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{",
    ),
    "deepseek-v3.1": (
        'Checking.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris", "days": 2}'
        "<｜tool▁call▁end｜><｜tool▁call▁begin｜>get_time<｜tool▁sep｜>{}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
        [PARIS, ("get_time", {})],
        '<｜tool▁calls▁begin｜>get_weather<｜tool▁sep｜>{"city": "Paris"}<｜tool▁calls▁end｜>',
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>{"city"',
    ),
    "deepseek-v3.2": (
        f'<{DSML}function_calls>\n<{DSML}invoke name="get_weather">\n'
        f'<{DSML}parameter name="city" string="true">Paris</{DSML}parameter>\n'
        f'<{DSML}parameter name="days" string="false">2</{DSML}parameter>\n'
        f"</{DSML}invoke>\n</{DSML}function_calls>",
        [PARIS],
        f"<{DSML}function_calls>\n<{DSML}call>x</{DSML}call>\n</{DSML}function_calls>",
        f'<{DSML}function_calls>\n<{DSML}invoke name="get_weather">\n<{DSML}parameter name="city" string="true">Pa',
    ),
    "kimi-k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris", "days": 2}<|tool_call_end|><|tool_calls_section_end|>',
        [PARIS],
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather<|tool_call_argument_begin|>{}"
        "<|tool_call_end|><|tool_calls_section_end|>",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{",
    ),
    "glm-4.5": (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>",
        [PARIS],
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_val>Paris</arg_val>\n</tool_call>",
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Par",
    ),
    "gpt-oss": (
        "<|channel|>analysis<|message|>Weather in Paris.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris", "days": 2}<|call|>',
        [PARIS],
        "<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>Paris please<|call|>",
        '<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>{"city": "Pa',
    ),
    "granite": (
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]',
        [PARIS],
        '<|tool_call|>[{"name": "get_weather", "arguments": {"city": "Paris"}]',
        '<tool_call> [{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "cohere": (
        '<|START_THINKING|>Paris.<|END_THINKING|><|START_ACTION|>[{"tool_call_id": "0", "tool_name": '
        '"get_weather", "parameters": {"city": "Paris", "days": 2}}]<|END_ACTION|>',
        [PARIS],
        'Action: ```json\n[{"tool_name": "get_weather", "parameters": "Paris"}]\n```',
        '<|START_ACTION|>[{"tool_name": "get_weather", "parameters": {"city": "Pa',
    ),
    "minimax-m2": (
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Paris</parameter>\n'
        '<parameter name="days">2</parameter>\n</invoke>\n</minimax:tool_call>',
        [PARIS],
        "<minimax:tool_call>\n<call>get_weather</call>\n</minimax:tool_call>",
        '<minimax:tool_call>\n<invoke name="get_weather">\n<parameter name="city">Pa',
    ),
    "mistral": (
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 2}',
        [PARIS],
        "[TOOL_CALLS]get_weather[ARGS]Paris",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa',
    ),
    "kimi-k3": (
        '<|open|>response<|sep|>Checking.<|close|>response<|sep|><|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|>'
        '<|open|>argument key="city" type="string"<|sep|>Paris<|close|>argument<|sep|>'
        '<|open|>argument key="days" type="number"<|sep|>2<|close|>argument<|sep|><|close|>call<|sep|>'
        '<|open|>call tool="get_time" index="2"<|sep|><|open|>json<|sep|>{}<|close|>json<|sep|><|close|>call<|sep|>'
        "<|close|>tools<|sep|><|close|>message<|sep|>",
        [PARIS, ("get_time", {})],
        '<|open|>tools<|sep|><|open|>call index="1"<|sep|><|close|>call<|sep|><|close|>tools<|sep|>',
        '<|open|>tools<|sep|><|open|>call tool="get_weather" index="1"<|sep|><|open|>argument key="city" type="string"<|sep|>Pa',
    ),
    "seed-oss": (
        "<seed:think>Paris.</seed:think>\n<seed:tool_call>\n<function=get_weather>\n<parameter=city>Paris</parameter>\n"
        "<parameter=days>2</parameter>\n</function>\n</seed:tool_call>",
        [PARIS],
        "<seed:tool_call>\n<function=get_weather>\ncity=Paris\n</function>\n</seed:tool_call>",
        "<seed:tool_call>\n<function=get_weather>\n<parameter=city>Pa",
    ),
    "olmo3": (
        "<function_calls>get_weather(city='Paris', days=2)\nget_time()</function_calls>",
        [PARIS, ("get_time", {})],
        "<function_calls>get_weather(city=open('x'))</function_calls>",
        "<function_calls>get_weather(city='Pa",
    ),
    "lfm2": (
        "<|tool_call_start|>[get_weather(city='Paris', days=2), get_time()]<|tool_call_end|>",
        [PARIS, ("get_time", {})],
        "<|tool_call_start|>[get_weather('Paris')]<|tool_call_end|>",
        "<|tool_call_start|>[get_weather(city='Pa",
    ),
    "minimax-m3": (
        f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<city>Paris{NS}</city>{NS}<days>2{NS}</days>{NS}</invoke>\n'
        f'{NS}<invoke name="get_time">{NS}</invoke>\n{NS}</tool_call>',
        [PARIS, ("get_time", {})],
        f"{NS}<tool_call>\n{NS}<call>get_weather{NS}</call>\n{NS}</tool_call>",
        f'{NS}<tool_call>\n{NS}<invoke name="get_weather">{NS}<city>Pa',
    ),
    "step3": (
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather">'
        '<steptml:parameter name="city">Paris</steptml:parameter><steptml:parameter name="days">2</steptml:parameter>'
        "</steptml:invoke><｜tool_call_end｜><｜tool_calls_end｜>",
        [PARIS],
        '<｜tool_calls_begin｜><｜tool_call_begin｜>get_weather<｜tool_sep｜>{"city": "Paris"}<｜tool_call_end｜><｜tool_calls_end｜>',
        '<｜tool_calls_begin｜><｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Pa',
    ),
    "hunyuan-a13b": (
        '<think>Paris.</think>\n<answer>\n<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]</tool_calls>\n</answer>',
        [PARIS],
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": Paris}}]</tool_calls>',
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "apriel": (
        "Here are my reasoning steps:\nParis.\n[BEGIN FINAL RESPONSE]\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]</tool_calls>\n[END FINAL RESPONSE]',
        [PARIS],
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": Paris}}]</tool_calls>',
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "xlam": (
        '[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}, {"name": "get_time", "arguments": {}}]',
        [PARIS, ("get_time", {})],
        '[{"name": "get_weather", "arguments": {"city": Paris}}]',
        '[{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "longcat": (
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}</longcat_tool_call>',
        [PARIS],
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": Paris}}</longcat_tool_call>',
        '<longcat_tool_call>{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "phi-4-mini": (
        'functools[{"name": "get_weather", "arguments": {"city": "Paris", "days": 2}}]',
        [PARIS],
        'functools[{"name": "get_weather", "arguments": {"city": Paris}}]',
        'functools[{"name": "get_weather", "arguments": {"city": "Pa',
    ),
    "internlm2": (
        '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Paris", "days": 2}}<|action_end|>',
        [PARIS],
        '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": Paris}}<|action_end|>',
        '<|action_start|><|plugin|>\n{"name": "get_weather", "parameters": {"city": "Pa',
    ),
    "apertus": (
        '<|tools_prefix|>[{"get_weather": {"city": "Paris", "days": 2}}, {"get_time": {}}]<|tools_suffix|>',
        [PARIS, ("get_time", {})],
        '<|tools_prefix|>[{"get_weather": "Paris"}]<|tools_suffix|>',
        '<|tools_prefix|>[{"get_weather": {"city": "Pa',
    ),
    "functionary-v3.2": (
        'all\nChecking.>>>get_weather\n{"city": "Paris", "days": 2}>>>get_time\n{}',
        [PARIS, ("get_time", {})],
        '>>>get_weather\n{"city": Paris}',
        '>>>get_weather\n{"city": "Pa',
    ),
    "magistral": (
        '[THINK]Paris.[/THINK][TOOL_CALLS]get_weather[ARGS]{"city": "Paris", "days": 2}',
        [PARIS],
        "[TOOL_CALLS]get_weather[ARGS]Paris",
        '[TOOL_CALLS]get_weather[ARGS]{"city": "Pa',
    ),
}


def test_every_dialect_has_a_case_and_a_family():
    covered = {d for family in CASES for d in FAMILIES[family]}
    assert set(DIALECTS) - {"tagged_json", "function_xml", "invoke_xml", "fenced_json"} <= covered
    assert all(set(names) <= set(DIALECTS) for names in FAMILIES.values())


@pytest.mark.parametrize("family", sorted(CASES))
def test_valid(family):
    reply, want, _, _ = CASES[family]
    got = check(reply, tools=TOOLS, dialects=[family])
    assert calls(got) == want and got.diagnostics == []
    assert all(c.runnable for c in got.calls)


@pytest.mark.parametrize("family", sorted(CASES))
def test_malformed(family):
    _, _, reply, _ = CASES[family]
    got = check(reply, tools=TOOLS, dialects=[family])
    assert got.calls == [] and [d.kind for d in got.diagnostics] == ["malformed"]
    assert got.diagnostics[0].span == (reply.index(reply.lstrip()[0]), len(reply))


@pytest.mark.parametrize("family", sorted(CASES))
@pytest.mark.parametrize("finish_reason, kind", [("stop", "unterminated"), ("length", "truncated")])
def test_left_open(family, finish_reason, kind):
    _, _, _, reply = CASES[family]
    got = check(reply, finish_reason, tools=TOOLS, dialects=[family])
    assert got.calls == [] and [(d.kind, d.span) for d in got.diagnostics] == [(kind, (0, len(reply)))]
    assert got.visible_text == ""


def test_the_default_set_leaves_bare_json_and_python_lists_as_prose():
    prose = (
        'The API returns {"name": "get_weather", "parameters": {"city": "Paris"}} for a call.\n'
        "In Python, [get_weather(city='Paris')] is a list.\nAction: ```json\n[]\n```\n"
    )
    got = check(prose, tools=TOOLS)
    assert (got.visible_text, got.calls, got.diagnostics) == (prose, [], [])
    assert "llama_json" not in DEFAULT and "pythonic" not in DEFAULT and "cohere_action" not in DEFAULT


def test_a_family_reads_only_its_own_dialects():
    reply = '<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    assert calls(check(reply, tools=TOOLS, dialects=["kimi-k2"])) == []
    assert calls(check(reply, tools=TOOLS, dialects=["kimi-k2", "hermes"])) == [("get_time", {})]
    with pytest.raises(ValueError, match="unknown dialect or model family 'llama5'"):
        chosen(["llama5"])


# -- reasoning --------------------------------------------------------------------------


def test_think_is_reasoning_returned_apart_with_no_calls_from_it():
    reply = (
        '<think>Maybe <tool_call>{"name": "get_time", "arguments": {}}</tool_call> or [TOOL_CALLS]x</think>'
        '\nThe time:\n<tool_call>{"name": "get_time", "arguments": {}}</tool_call>'
    )
    got = check(reply, tools=TOOLS)
    assert got.reasoning_text.startswith("Maybe <tool_call>") and got.reasoning_text.endswith("[TOOL_CALLS]x")
    assert calls(got) == [("get_time", {})] and got.diagnostics == []
    assert got.visible_text == "The time:\n"  # the line of the reasoning block goes with it


def test_reasoning_cut_short_is_still_reasoning_not_a_diagnostic():
    got = check("<think>Let me think about", "length", tools=TOOLS)
    assert (got.reasoning_text, got.calls, got.diagnostics, got.visible_text) == (
        "Let me think about",
        [],
        [],
        "",
    )


def test_the_dialects_own_reasoning_channels():
    harmony = "<|channel|>analysis<|message|>Greeting.<|end|><|start|>assistant<|channel|>final<|message|>Hello!<|return|>"
    got = check(harmony, tools=TOOLS, dialects=["gpt-oss"])
    assert (got.reasoning_text, got.visible_text, got.calls, got.diagnostics) == (
        "Greeting.",
        "Hello!",
        [],
        [],
    )
    cohere = "<|START_THINKING|>Hmm.<|END_THINKING|><|START_RESPONSE|>Hi.<|END_RESPONSE|>"
    got = check(cohere, tools=TOOLS, dialects=["cohere"])
    assert (got.reasoning_text, got.visible_text) == ("Hmm.", "Hi.")


# -- the failure classes the peers' cases found ------------------------------------------


def test_qwen3_coder_without_its_opener_decodes_once_with_no_diagnostic():
    reply = (
        "Checking.\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>"
    )
    got = check(reply, tools=TOOLS)
    assert calls(got) == [("get_weather", {"city": "Paris"})] and got.diagnostics == []
    assert got.visible_text == "Checking.\n"


def test_python_literals_as_xml_values_where_the_schema_wants_the_type():
    tools = ToolSet.from_list(
        [
            {
                "name": "t",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "flag": {"type": "boolean"},
                        "opts": {"type": "object"},
                        "tags": {"type": "array"},
                        "note": {"type": ["string", "null"]},
                        "text": {"type": "string"},
                    },
                },
            }
        ]
    )
    reply = (
        "<function=t><parameter=flag>True</parameter><parameter=opts>{'a': 1, 'b': (2, 3)}</parameter>"
        "<parameter=tags>['x']</parameter><parameter=note>None</parameter><parameter=text>True</parameter></function>"
    )
    got = check(reply, tools=tools)
    assert calls(got) == [
        ("t", {"flag": True, "opts": {"a": 1, "b": [2, 3]}, "tags": ["x"], "note": None, "text": "True"})
    ]
    assert got.diagnostics == []
    # A literal JSON cannot hold stays text, and the schema check reports it.
    got = check(
        "<function=t><parameter=flag>{1, 2}</parameter><parameter=opts>1e999</parameter></function>",
        tools=tools,
    )
    assert [(d.kind, d.argument) for d in got.diagnostics] == [("invalid_arguments", "flag")]


def test_glm_values_typed_by_the_schema():
    reply = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>2</arg_value></tool_call>"
    assert calls(check(reply, tools=TOOLS, dialects=["glm-4.7"])) == [PARIS]


def test_kimi_ids_are_kept():
    reply = CASES["kimi-k2"][0]
    assert [c.id for c in decode(reply, tools=TOOLS, dialects=["kimi-k2"]).calls] == [
        "functions.get_weather:0"
    ]


def test_granite_31_leaves_its_tag_open_and_may_close_it():
    for reply in (
        '<tool_call> [{"name": "get_time", "arguments": {}}]',
        '<tool_call> [{"name": "get_time", "arguments": {}}]\n</tool_call>',
    ):
        got = check(reply, tools=TOOLS, dialects=["granite"])
        assert (calls(got), got.diagnostics, got.visible_text) == ([("get_time", {})], [], "")


def reasoning_closer(family: str) -> str:
    return next(
        (DIALECTS[d].reasoning_closer for d in chosen([family]) if DIALECTS[d].reasoning_closer), "</think>"
    )


@pytest.mark.parametrize("family", sorted(CASES))
def test_reasoning_open(family):
    """The same valid reply after reasoning its prompt opened: the reasoning (quoting a call
    of the family's own dialect) comes back apart, the calls are the same."""
    reply, want, _, _ = CASES[family]
    closer = reasoning_closer(family)
    quoted = reply.replace(closer, "")  # the reasoning quotes the calls (its closer would end it)
    opened = f"I will write {quoted} once I am sure.{closer}\n{reply}"
    got = check(opened, tools=TOOLS, dialects=[family], reasoning="open")
    assert calls(got) == want and got.diagnostics == []
    own = decode(reply, tools=TOOLS, dialects=[family]).reasoning_text  # the reply's own reasoning
    assert got.reasoning_text == "\n".join(filter(None, [f"I will write {quoted} once I am sure.", own]))


def test_the_docs_table_lists_every_dialect_and_family_with_its_sources():
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "docs" / "calls.md").read_text(encoding="utf-8")
    table = text[text.index("| dialect | model families |") : text.index("Each family also names")]
    rows = {line.split("|")[1].strip(" `"): line for line in table.splitlines()[2:] if line.startswith("| `")}
    assert set(rows) == set(DIALECTS)
    listed = " ".join(line.split("|")[2] for line in rows.values())
    named = set(re.findall(r"`([\w.\-*]+)`", listed))  # `deepseek-*` names every deepseek family
    missing = [
        f
        for f in FAMILIES
        if f not in named and not any(f.startswith(n[:-1]) for n in named if n.endswith("*"))
    ]
    assert missing == []
    assert all(line.split("|")[6].strip() for line in rows.values())  # every row names its sources
