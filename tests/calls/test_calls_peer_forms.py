"""Forms the peers' newest tests show and the first round-three pass left out: Kimi K2's bare
counter id, Apertus lists cut short, Hunyuan A13B's answer tags, Apriel's reasoning markers,
Functionary v3.2's python recipient, and integers with leading zeros in Python calls. Each is
checked streamed in several splits against the batch decode (callcheck.check)."""

import pytest

from lsp_agent.calls import ToolSet
from tests.support.callcheck import calls, check

WEATHER = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string"}}},
}
FLIGHT = {"name": "book_flight", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
READ = {"name": "read_file", "parameters": {"type": "object", "properties": {"path": {"type": "string"}}}}
PYTHON = {"name": "python", "parameters": {"type": "object", "properties": {"code": {"type": "string"}}}}
ANY = {"name": "f", "parameters": {"type": "object"}}


def kimi(call_id: str, arguments: str) -> str:
    return (
        f"Let me check. <|tool_calls_section_begin|><|tool_call_begin|>{call_id} "
        f"<|tool_call_argument_begin|>{arguments}<|tool_call_end|><|tool_calls_section_end|>"
    )


# -- Kimi K2: a bare counter as the call id -----------------------------------------------


def test_kimi_bare_counter_names_the_one_tool_its_arguments_fit():
    reply = kimi("0", '{"city": "Oslo", "unit": "C"}')
    for tools in ([WEATHER], [READ, WEATHER], [WEATHER, FLIGHT]):  # `unit` only fits get_weather
        got = check(reply, tools=ToolSet.from_list(tools), dialects=["kimi-k2"])
        assert (calls(got), got.diagnostics) == ([("get_weather", {"city": "Oslo", "unit": "C"})], []), tools
        assert [c.id for c in got.calls] == ["0"] and got.visible_text == "Let me check. "


def test_kimi_bare_counter_is_reported_when_the_arguments_fit_several_tools_or_none():
    tools = ToolSet.from_list([WEATHER, FLIGHT])
    for arguments, fits in (
        ('{"city": "Oslo"}', "several tools: get_weather, book_flight"),
        ('{"x": 1}', "no tool"),
    ):
        got = check(kimi("3", arguments), tools=tools, dialects=["kimi-k2"])
        assert got.calls == [] and [d.kind for d in got.diagnostics] == ["malformed"]
        assert fits in got.diagnostics[0].reason and "'3'" in got.diagnostics[0].reason
    broken = check(kimi("0", '{"city": "Oslo"'), tools=ToolSet.from_list([WEATHER]), dialects=["kimi-k2"])
    assert broken.calls == [] and "not valid JSON" in broken.diagnostics[0].reason
    # A named id still needs no guessing, and an id that is neither is reported.
    assert calls(check(kimi("get_weather:1", '{"city": "Oslo"}'), tools=tools, dialects=["kimi-k2"])) == [
        ("get_weather", {"city": "Oslo"})
    ]
    dotted = check(kimi("functions.get_weather.0", "{}"), tools=tools, dialects=["kimi-k2"])
    assert dotted.calls == [] and "is not a call id" in dotted.diagnostics[0].reason


# -- Apertus: a list cut short ------------------------------------------------------------

APERTUS = '<|tools_prefix|>[{"get_weather": {"city": "London"}'


@pytest.mark.parametrize("tail", ["", "}", " \n", "}, ", "}]"])
def test_apertus_list_cut_right_after_a_call_is_whole_but_for_its_brackets(tail):
    got = check(APERTUS + tail.rstrip(", "), tools=ToolSet.from_list([WEATHER]), dialects=["apertus"])
    assert (calls(got), got.diagnostics, got.visible_text) == ([("get_weather", {"city": "London"})], [], "")


@pytest.mark.parametrize(
    "reply",
    [
        '<|tools_prefix|>[{"get_weather": {"city": "Lon',  # inside a string
        '<|tools_prefix|>[{"get_weather": {"tags": ["a"]',  # inside the arguments
        '<|tools_prefix|>[{"get_weather": {"city": "London"}}, ',  # after a comma
        '<|tools_prefix|>[{"get_weather": ',
    ],
)
def test_apertus_list_cut_anywhere_else_is_reported_cut_short(reply):
    tools = ToolSet.from_list([WEATHER])
    assert [d.kind for d in check(reply, "stop", tools=tools, dialects=["apertus"]).diagnostics] == [
        "unterminated"
    ]
    assert [d.kind for d in check(reply, "length", tools=tools, dialects=["apertus"]).diagnostics] == [
        "truncated"
    ]


def test_apertus_list_cut_by_the_length_limit_is_truncated_even_after_a_whole_call():
    got = check(APERTUS, "length", tools=ToolSet.from_list([WEATHER]), dialects=["apertus"])
    assert got.calls == [] and [d.kind for d in got.diagnostics] == ["truncated"]


# -- Hunyuan A13B: the answer tags --------------------------------------------------------


def test_hunyuan_answer_tags_are_layout():
    tools = ToolSet.from_list([WEATHER])
    reply = (
        "<think>\nThe user wants Boston.\n</think>\n<answer>\nChecking.\n"
        '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Boston"}}]</tool_calls>\n</answer>'
    )
    got = check(reply, tools=tools, dialects=["hunyuan-a13b"])
    assert calls(got) == [("get_weather", {"city": "Boston"})] and got.diagnostics == []
    assert (got.visible_text, got.reasoning_text) == ("Checking.\n", "The user wants Boston.")
    plain = check("<answer>\nIt is sunny.\n</answer>", tools=tools, dialects=["hunyuan-a13b"])
    assert plain.visible_text == "It is sunny.\n"
    # Other families keep the words: prose and prompts write <answer> too.
    assert check("<answer>x</answer>", tools=tools).visible_text == "<answer>x</answer>"


# -- Apriel: reasoning markers ------------------------------------------------------------

SEARCH = '<tool_calls>[{"name": "get_weather", "arguments": {"city": "Rome"}}]</tool_calls>'


def test_apriel_reasoning_ends_at_its_final_response_marker():
    tools = ToolSet.from_list([WEATHER])
    for header in ("Here are my reasoning steps:\n", ""):  # the model may repeat the prompt's header
        reply = (
            f"{header}The user wants Rome.\n[BEGIN FINAL RESPONSE]\n{SEARCH}\n[END FINAL RESPONSE]\n<|end|>"
        )
        got = check(reply, tools=tools, dialects=["apriel"])
        assert calls(got) == [("get_weather", {"city": "Rome"})] and got.diagnostics == []
        assert (got.reasoning_text, got.visible_text) == ("The user wants Rome.", ""), header


def test_apriel_call_quoted_in_its_reasoning_is_not_run():
    reply = f"Maybe {SEARCH}? No.\n[BEGIN FINAL RESPONSE]\nRome is sunny.\n[END FINAL RESPONSE]"
    got = check(reply, tools=ToolSet.from_list([WEATHER]), dialects=["apriel"])
    assert (got.calls, got.diagnostics, got.visible_text) == ([], [], "Rome is sunny.\n")
    assert got.reasoning_text.startswith("Maybe <tool_calls>")


def test_apriel_with_reasoning_closed_and_without_the_family():
    tools = ToolSet.from_list([WEATHER])
    got = check(f"[BEGIN FINAL RESPONSE]\n{SEARCH}", tools=tools, dialects=["apriel"], reasoning="closed")
    assert calls(got) == [("get_weather", {"city": "Rome"})] and got.visible_text == ""
    prose = "Here are my reasoning steps: first, read."
    assert check(prose, tools=tools).visible_text == prose  # not in the default set


# -- Functionary v3.2: the python recipient -----------------------------------------------


def test_functionary_python_recipient_takes_raw_code_to_the_end():
    tools = ToolSet.from_list([PYTHON, WEATHER])
    for reply, visible in (
        ('>>>python\nprint("hi")', ""),
        ("python\nimport os\nprint(os.getcwd())\n", ""),  # at the reply's start, the prompt wrote >>>
        ('all\nRunning it.>>>get_weather\n{"city": "Oslo"}>>>python\nx = 1', "Running it."),
    ):
        got = check(reply, tools=tools, dialects=["functionary-v3.2"])
        code = reply.partition("python\n")[2]
        assert [c for c in calls(got) if c[0] == "python"] == [("python", {"code": code})], reply
        assert got.diagnostics == [] and got.visible_text == visible
    as_json = check('>>>python\n{"code": "x = 1"}', tools=tools, dialects=["functionary-v3.2"])
    assert calls(as_json) == [("python", {"code": "x = 1"})]


def test_functionary_python_code_cut_by_the_length_limit_is_not_run():
    tools = ToolSet.from_list([PYTHON])
    got = check(">>>python\nfor i in range(", "length", tools=tools, dialects=["functionary-v3.2"])
    assert got.calls == [] and [d.kind for d in got.diagnostics] == ["truncated"]
    # Without a python tool, the call is named and not run.
    other = check(">>>python\nprint(1)", tools=ToolSet.from_list([WEATHER]), dialects=["functionary-v3.2"])
    assert [d.kind for d in other.diagnostics] == ["unknown_tool"] and not other.calls[0].runnable


# -- leading zeros in Python calls --------------------------------------------------------


@pytest.mark.parametrize(
    "source, arguments",
    [
        ("f(h=00, m=07)", {"h": 0, "m": 7}),
        ("f(month=-08, day=[01, 010])", {"month": -8, "day": [1, 10]}),
        ("f(s='''it's 07''', n=09)", {"s": "it's 07", "n": 9}),  # never inside a string
        ('f(s="""q"07""", n=007)', {"s": 'q"07', "n": 7}),
        ("f(s='北京 07', n=05)", {"s": "北京 07", "n": 5}),  # the parser's column is in bytes
        ("f(x=1.07, y=0x07, z=07.5, w=0)", {"x": 1.07, "y": 7, "z": 7.5, "w": 0}),
    ],
)
def test_leading_zero_integers_read_as_decimal_in_every_python_dialect(source, arguments):
    tools = ToolSet.from_list([ANY])
    for dialects, reply in (
        (["llama3.2"], f"[{source}]"),
        (["llama4"], f"<|python_start|>[{source}]<|python_end|>"),
        (["lfm2"], f"<|tool_call_start|>[{source}]<|tool_call_end|>"),
        (["olmo3"], f"<function_calls>\n{source}\n</function_calls>"),
    ):
        got = check(reply, tools=tools, dialects=dialects)
        assert (calls(got), got.diagnostics) == ([("f", arguments)], []), dialects


def test_other_leading_zero_literals_and_too_many_of_them_are_reported():
    tools = ToolSet.from_list([ANY])
    for reply in ("[f(a=0_7)]", "[" + ", ".join(["f(a=07)"] * 65) + "]"):
        got = check(reply, tools=tools, dialects=["pythonic"])
        assert got.calls == [] and [d.kind for d in got.diagnostics] == ["malformed"]


def test_python_string_holding_a_nul_character():
    got = check("[f(a='x\0y', b=r'\0z', c='''\0''')]", tools=ToolSet.from_list([ANY]), dialects=["pythonic"])
    assert calls(got) == [("f", {"a": "x\0y", "b": "\0z", "c": "\0"})]
    outside = check("[f(a=1\0)]", tools=ToolSet.from_list([ANY]), dialects=["pythonic"])
    assert outside.calls == [] and [d.kind for d in outside.diagnostics] == ["malformed"]


# -- Cohere Command A: its answer markers, and a list with one bad action -----------------

COHERE_TOOLS = ToolSet.from_list([WEATHER, ANY])


def test_cohere_text_markers_and_end_of_turn_are_layout():
    for reply in (
        "Weighing it.<|END_THINKING|><|START_TEXT|>Sunny.<|END_TEXT|><|END_OF_TURN_TOKEN|>",
        "Weighing it.<|END_THINKING|>Sunny.<|END_OF_TURN_TOKEN|>",
        "Weighing it.<|END_THINKING|><|CHATBOT_TOKEN|>Sunny.<|END_OF_TURN_TOKEN|>",  # Command R's
    ):
        got = check(reply, tools=COHERE_TOOLS, dialects=["cohere"], reasoning="open")
        assert (got.reasoning_text, got.visible_text, got.diagnostics) == ("Weighing it.", "Sunny.", [])


def test_cohere_one_bad_action_never_discards_the_others():
    good = '{"tool_call_id": "1", "tool_name": "get_weather", "parameters": {"city": "Oslo"}}'
    bad = '{"tool_call_id": "0", "tool_name": "f", "parameters": {"at": 15:30}}'
    for body in (f"[\n  {bad},\n  {good}\n]", f"[{good}{good}]"):  # a bad value; a missing comma
        got = check(f"<|START_ACTION|>{body}<|END_ACTION|>", tools=COHERE_TOOLS, dialects=["cohere"])
        assert [c for c in calls(got) if c[0] == "get_weather"] == [("get_weather", {"city": "Oslo"})] * (
            1 if bad in body else 2
        )
        assert [d.kind for d in got.diagnostics] == (["malformed"] if bad in body else [])
    garbage = check("<|START_ACTION|>[!!!]<|END_ACTION|>", tools=COHERE_TOOLS, dialects=["cohere"])
    assert garbage.calls == [] and [d.kind for d in garbage.diagnostics] == ["malformed"]


def test_tagged_json_list_with_one_bad_call_keeps_the_good_one():
    reply = (
        '<tool_call>[{"name": "f", "arguments": {"a": nope}}, '
        '{"name": "get_weather", "arguments": {"city": "Oslo"}}]</tool_call>'
    )
    got = check(reply, tools=COHERE_TOOLS, dialects=["hermes"])
    assert calls(got) == [("get_weather", {"city": "Oslo"})] and [d.kind for d in got.diagnostics] == [
        "malformed"
    ]


# -- DeepSeek: a tool's output echoed in the reply ------------------------------------------


def test_deepseek_tool_output_tokens_are_layout():
    reply = "It says <｜tool▁output▁begin｜>22°C, sunny<｜tool▁output▁end｜> today."
    got = check(reply, tools=COHERE_TOOLS, dialects=["deepseek-v3.1"])
    assert (got.visible_text, got.calls, got.diagnostics) == ("It says 22°C, sunny today.", [], [])


# -- XML values: layout line breaks ---------------------------------------------------------


def test_a_value_on_lines_of_its_own_loses_its_layout_breaks_an_inline_one_keeps_its_last():
    tools = ToolSet.from_list([{"name": "edit", "parameters": {"type": "object"}}])
    block = "<function=edit>\n<parameter=new>\n    pass\n\n</parameter>\n</function>"
    assert calls(check(f"<tool_call>\n{block}\n</tool_call>", tools=tools)) == [
        ("edit", {"new": "    pass\n"})
    ]
    inline = "<seed:tool_call>\n<function=edit>\n<parameter=new>    pass\n</parameter>\n</function>\n</seed:tool_call>"
    assert calls(check(inline, tools=tools, dialects=["seed-oss"])) == [("edit", {"new": "    pass\n"})]
    assert calls(check(inline.replace("pass\n<", "pass<"), tools=tools, dialects=["seed-oss"])) == [
        ("edit", {"new": "    pass"})
    ]


# -- Kimi K2: calls without their end token -------------------------------------------------

KIMI_TOOLS = ToolSet.from_list([WEATHER, READ])


def test_kimi_call_with_whole_arguments_needs_no_end_token():
    one = "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
    two = "<|tool_call_begin|>functions.read_file:1<|tool_call_argument_begin|>"
    want = [("get_weather", {"city": "Oslo"}), ("read_file", {"path": "a.py"})]
    for reply in (
        f'{one}{{"city": "Oslo"}}{two}{{"path": "a.py"}}',  # the next call, then the reply's end
        f'<think>Two calls.{one}{{"city": "Oslo"}}{two}{{"path": "a.py"}}',  # inside open reasoning
        f'<|tool_calls_section_begin|>{one}{{"city": "Oslo"}}{two}{{"path": "a.py"}}<|tool_call_end|>',
    ):
        got = check(reply, tools=KIMI_TOOLS, dialects=["kimi-k2"])
        assert (calls(got), got.diagnostics) == (want, []), reply


def test_kimi_call_cut_inside_its_arguments_is_cut_short():
    reply = '<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>{"city": '
    for finish, kind in (("stop", "unterminated"), ("length", "truncated")):
        got = check(reply, finish, tools=KIMI_TOOLS, dialects=["kimi-k2"])
        assert got.calls == [] and [d.kind for d in got.diagnostics] == [kind]
    whole = reply + '"Oslo"}'  # whole arguments, but the length limit cut the reply: not run
    assert check(whole, "length", tools=KIMI_TOOLS, dialects=["kimi-k2"]).calls == []


# -- MiniMax-M3: <mm:think> ----------------------------------------------------------------


def test_minimax_m3_reasoning_and_its_bare_closer():
    ns = "]<]minimax[>["
    call = f'{ns}<tool_call>\n{ns}<invoke name="get_weather">{ns}<city>Oslo{ns}</city>{ns}</invoke>\n{ns}</tool_call>'
    got = check(f"<mm:think>Check Oslo.</mm:think>{call}", tools=KIMI_TOOLS, dialects=["minimax-m3"])
    assert (calls(got), got.reasoning_text, got.visible_text) == (
        [("get_weather", {"city": "Oslo"})],
        "Check Oslo.",
        "",
    )
    plain = check("</mm:think>Sunny.", tools=KIMI_TOOLS, dialects=["minimax-m3"])
    assert (plain.visible_text, plain.reasoning_text, plain.diagnostics) == ("Sunny.", "", [])


def test_python_call_arguments_named_like_python_keywords():
    tools = ToolSet.from_list([ANY])
    reply = "<function_calls>\nf(from='SFO', to='NYC', note='from=here', lambda=[1])\n</function_calls>"
    got = check(reply, tools=tools, dialects=["olmo3"])
    assert calls(got) == [("f", {"from": "SFO", "to": "NYC", "note": "from=here", "lambda": [1]})]
    # A keyword used as a keyword is still an error.
    bad = check("[f(a=(from == 2))]", tools=tools, dialects=["pythonic"])
    assert bad.calls == [] and [d.kind for d in bad.diagnostics] == ["malformed"]


# -- LFM2: a shell command quoted with its own quotes ------------------------------------

SHELL = {"name": "bash", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}}


def lfm2(source: str) -> str:
    return f"<|tool_call_start|>[{source}]<|tool_call_end|>"


@pytest.mark.parametrize(
    ("source", "arguments"),
    [
        ("bash(command='sed -n '10,20p' src/app.py')", {"command": "sed -n '10,20p' src/app.py"}),
        (
            "bash(command='echo 'a' && echo 'b'', cwd='/tmp')",
            {"command": "echo 'a' && echo 'b'", "cwd": "/tmp"},
        ),
        # the value is taken as written: its backslashes stay, its raw line break is one
        (
            "bash(command='python3 -c \"import re\nprint(re.sub(r'\\\\s', '', x))\"')",
            {"command": "python3 -c \"import re\nprint(re.sub(r'\\\\s', '', x))\""},
        ),
    ],
)
def test_lfm2_string_holding_its_own_quotes_closes_where_the_call_goes_on(source, arguments):
    got = check(lfm2(source), tools=ToolSet.from_list([SHELL, ANY]), dialects=["lfm2"])
    assert (calls(got), got.diagnostics) == ([("bash", arguments)], [])


def test_lfm2_string_no_reading_mends_is_reported():
    for source in ("bash(command='a'b'c' d)", "bash(command='a' 'b' c)"):
        got = check(lfm2(source), tools=ToolSet.from_list([SHELL]), dialects=["lfm2"])
        assert got.calls == [] and [d.kind for d in got.diagnostics] == ["malformed"], source
