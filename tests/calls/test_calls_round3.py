"""The wrapper and value classes the third held-out set found, and those still open from the
second: each case written from the format the peer's tests show, checked streamed in
several splits against the batch decode (callcheck.check)."""

from lsp_agent.calls import ToolSet
from lsp_agent.tools.calls import DIALECT_NAMES
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
        {
            "name": "edit",
            "parameters": {
                "type": "object",
                "properties": {
                    "path": {"type": "string"},
                    "patch": {"type": ["string", "array"]},
                    "meta": {"anyOf": [{"type": "string"}, {"type": "object"}]},
                    "note": {"type": ["string", "null"]},
                },
            },
        },
        {"name": "loose", "parameters": {"type": "object"}},
    ]
)
PARIS = [("get_weather", {"city": "Paris"})]
DSML = "｜DSML｜"


def test_the_dialects_enum_lists_each_name_once():
    assert len(DIALECT_NAMES) == len(set(DIALECT_NAMES))
    assert {"llama4", "mistral", "granite", "cohere"} <= set(DIALECT_NAMES)


# -- wrappers ---------------------------------------------------------------------------


def test_deepseek_v4_tool_calls_wrapper():
    reply = (
        f'Checking.\n<{DSML}tool_calls>\n<{DSML}invoke name="get_weather">\n'
        f'<{DSML}parameter name="city" string="true">Paris</{DSML}parameter>\n'
        f'<{DSML}parameter name="days" string="false">3</{DSML}parameter>\n'
        f"</{DSML}invoke>\n</{DSML}tool_calls>"
    )
    got = check(reply, tools=TOOLS, dialects=["deepseek-v4"])
    assert calls(got) == [("get_weather", {"city": "Paris", "days": 3})] and got.diagnostics == []
    assert got.visible_text == "Checking.\n"
    open_ = check(reply[:-30], "length", tools=TOOLS, dialects=["deepseek-v4"])
    assert [d.kind for d in open_.diagnostics] == ["truncated"] and open_.calls == []


def test_kimi_call_without_its_section_opener():
    call = (
        "<|tool_call_begin|>functions.get_weather:0<|tool_call_argument_begin|>"
        '{"city": "Paris"}<|tool_call_end|>'
    )
    for reply in (call, call + "<|tool_calls_section_end|>", f"Sure. {call}\n<|tool_calls_section_end|>"):
        got = check(reply, tools=TOOLS, dialects=["kimi-k2"])
        assert (calls(got), got.diagnostics) == (PARIS, []), reply
        assert got.visible_text in ("", "Sure. ")
    assert [c.id for c in check(call, tools=TOOLS, dialects=["kimi-k2"]).calls] == ["functions.get_weather:0"]


def test_gpt_oss_recipient_in_the_header_at_the_reply_start():
    # The prompt ended with `<|start|>assistant`: the reply begins inside the header.
    for reply in (
        ' to=functions.get_weather<|channel|>commentary json<|message|>{"city": "Paris"}<|call|>',
        'to=functions.get_weather <|constrain|>json<|message|>{"city": "Paris"}',
    ):
        got = check(reply, tools=TOOLS, dialects=["gpt-oss"])
        assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], ""), reply
    # Anywhere but at the start, the words are prose.
    prose = "Send it to=functions.get_weather later."
    assert check(prose, tools=TOOLS, dialects=["gpt-oss"]).visible_text == prose


def test_nemotron_upper_case_toolcall():
    reply = '<TOOLCALL>[{"name": "get_weather", "arguments": {"city": "Paris"}}]</TOOLCALL>'
    got = check(reply, tools=TOOLS, dialects=["nemotron"])
    assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], "")
    bad = check('<TOOLCALL>[{"name": "get_weather", "arguments": {"city": }}]</TOOLCALL>', tools=TOOLS)
    assert [d.kind for d in bad.diagnostics] == ["malformed"]


def test_a_lone_arguments_wrapper_the_schema_does_not_name_is_unwrapped():
    for key, string in (("arguments", "false"), ("input", "true")):
        reply = (
            f'<{DSML}function_calls>\n<{DSML}invoke name="get_weather">\n'
            f'<{DSML}parameter name="{key}" string="{string}">{{"city": "Paris"}}</{DSML}parameter>\n'
            f"</{DSML}invoke>\n</{DSML}function_calls>"
        )
        got = check(reply, tools=TOOLS, dialects=["deepseek-v3.2"])
        assert (calls(got), got.diagnostics) == (PARIS, []), key
    # Not a wrapper: keys the schema does not know stay where they are, and are reported.
    got = check(
        '<tool_call>{"name": "get_weather", "arguments": {"arguments": {"town": "x"}}}</tool_call>',
        tools=TOOLS,
    )
    assert [d.kind for d in got.diagnostics] == ["invalid_arguments"]


# -- values -----------------------------------------------------------------------------


def test_a_union_with_string_reads_json_arrays_and_objects():
    reply = (
        '<function=edit><parameter=patch>[1, 2]</parameter><parameter=meta>{"a": 1}</parameter>'
        "<parameter=path>[not json</parameter><parameter=note>null</parameter></function>"
    )
    got = check(reply, tools=TOOLS)
    assert calls(got) == [("edit", {"patch": [1, 2], "meta": {"a": 1}, "path": "[not json", "note": None})]
    # An array where only an object or a string is allowed stays the text it was.
    got = check("<function=edit><parameter=meta>[1]</parameter></function>", tools=TOOLS)
    assert calls(got) == [("edit", {"meta": "[1]"})]


def test_a_parameter_with_no_schema_reads_json():
    reply = '<function=loose><parameter=n>3</parameter><parameter=xs>["a"]</parameter><parameter=s>a b</parameter></function>'
    assert calls(check(reply, tools=TOOLS)) == [("loose", {"n": 3, "xs": ["a"], "s": "a b"})]


def test_glm_value_missing_its_closer_never_swallows_the_next_key():
    reply = (
        "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris\n"
        "<arg_key>days</arg_key>\n<arg_value>2</arg_value>\n</tool_call>"
    )
    got = check(reply, tools=TOOLS, dialects=["glm-4.5"])
    assert (calls(got), got.diagnostics) == ([("get_weather", {"city": "Paris", "days": 2})], [])
    assert all("<arg_key>" not in str(v) for c in got.calls for v in c.arguments.values())


def test_function_xml_value_missing_its_closer_never_swallows_the_next_parameter():
    reply = "<function=get_weather><parameter=city>Paris<parameter=days>2</parameter></function>"
    got = check(reply, tools=TOOLS)
    assert (calls(got), got.diagnostics) == ([("get_weather", {"city": "Paris", "days": 2})], [])


def test_a_repeated_argument_key_takes_the_last_value():
    glm = "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Rome</arg_value><arg_key>city</arg_key><arg_value>Paris</arg_value></tool_call>"
    assert calls(check(glm, tools=TOOLS, dialects=["glm-4.7"])) == PARIS
    invoke = '<invoke name="get_weather"><parameter name="city">Rome</parameter><parameter name="city">Paris</parameter></invoke>'
    assert calls(check(invoke, tools=TOOLS)) == PARIS


# -- reported where the peer decodes ----------------------------------------------------


def test_cohere_action_with_the_fence_on_the_next_line():
    reply = 'Action:\n```json\n[{"tool_name": "get_weather", "parameters": {"city": "Paris"}}]\n```'
    got = check(reply, tools=TOOLS, dialects=["cohere"])
    assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], "")


def test_glm_call_complete_but_missing_its_final_closer():
    reply = "Checking.\n<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
    for reason in ("stop", "length"):
        got = check(reply, reason, tools=TOOLS, dialects=["glm-4.5"])
        assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], "Checking.\n")
    cut = check(reply[:-10], "length", tools=TOOLS, dialects=["glm-4.5"])
    assert [d.kind for d in cut.diagnostics] == ["truncated"] and cut.calls == []


# -- still open from the second held-out set --------------------------------------------


def test_two_call_objects_separated_by_a_comma_in_one_tool_call():
    reply = (
        '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}, '
        '{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    )
    got = check(reply, tools=TOOLS)
    assert calls(got) == [*PARIS, ("get_weather", {"city": "Rome"})] and got.diagnostics == []
    bad = check('<tool_call>{"name": "get_weather"}, {"name": </tool_call>', tools=TOOLS)
    assert [d.kind for d in bad.diagnostics] == ["malformed"]


def test_function_xml_whose_body_is_one_json_object():
    for reply in (
        '<function=get_weather>{"city": "Paris"}</function>',
        '<tool_call>\n<function=get_weather>\n{"city": "Paris"}\n</function>\n</tool_call>',
    ):
        got = check(reply, tools=TOOLS)
        assert (calls(got), got.diagnostics) == (PARIS, []), reply
    bad = check('<function=get_weather>{"city": }</function>', tools=TOOLS)
    assert [d.kind for d in bad.diagnostics] == ["malformed"]


def test_mistral_text_before_the_json_list():
    reply = '[TOOL_CALLS] Sure, calling: [{"name": "get_weather", "arguments": {"city": "Paris"}}]\nDone.'
    got = check(reply, tools=TOOLS, dialects=["mistral"])
    assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], "Done.")
    # No list on the marker's line: reported to the line's end, as before.
    got = check("[TOOL_CALLS] Sure, calling it.\nDone.", tools=TOOLS, dialects=["mistral"])
    assert [d.kind for d in got.diagnostics] == ["malformed"] and got.visible_text == "Done."
    cut = check('[TOOL_CALLS] Sure: [{"name": "get_weather", "arguments": {"ci', "length", tools=TOOLS)
    assert [d.kind for d in cut.diagnostics] == ["truncated"]


# -- details of the new families the peers' tests show ------------------------------------


def test_lfm2_sets_and_strings_broken_over_lines():
    tools = ToolSet.from_list(
        [
            {"name": "label", "parameters": {"type": "object", "properties": {"tags": {"type": "array"}}}},
            {"name": "exec", "parameters": {"type": "object", "properties": {"command": {"type": "string"}}}},
        ]
    )
    got = check(
        "<|tool_call_start|>[label(tags={'urgent', 'bug'})]<|tool_call_end|>", tools=tools, dialects=["lfm2"]
    )
    assert calls(got) == [("label", {"tags": ["urgent", "bug"]})]  # in the order written
    reply = "<|tool_call_start|>[exec(command='cat > f.py << EOF\nprint(1)\nEOF')]<|tool_call_end|>\nDone."
    got = check(reply, tools=tools, dialects=["lfm2"])
    assert (calls(got), got.visible_text) == (
        [("exec", {"command": "cat > f.py << EOF\nprint(1)\nEOF"})],
        "Done.",
    )


def test_integers_with_leading_zeros_in_python_calls():
    tools = ToolSet.from_list([{"name": "set_date", "parameters": {"type": "object"}}])
    reply = "<|tool_call_start|>[set_date(month=07, day=05, note='007')]<|tool_call_end|>"
    assert calls(check(reply, tools=tools, dialects=["lfm2"])) == [
        ("set_date", {"month": 7, "day": 5, "note": "007"})
    ]
    olmo = "<function_calls>set_date(month=07)</function_calls>"
    assert calls(check(olmo, tools=tools, dialects=["olmo3"])) == [("set_date", {"month": 7})]


def test_olmo3_reads_json_literals_and_keeps_good_siblings_of_a_bad_call():
    reply = "<function_calls>get_weather(city='Paris', days=null)\nbad(x=b'z')</function_calls>"
    got = check(reply, tools=TOOLS, dialects=["olmo3"])
    assert [c.arguments for c in got.calls] == [{"city": "Paris", "days": None}]
    assert [d.kind for d in got.diagnostics] == ["invalid_arguments", "malformed"]


def test_step3_without_function_sep_and_with_separators_between_calls():
    call = '<｜tool_call_begin｜><steptml:invoke name="get_weather"><steptml:parameter name="city">Paris</steptml:parameter></steptml:invoke><｜tool_call_end｜>'
    reply = f"<｜tool_calls_begin｜>{call}<｜tool_sep｜>{call}<｜tool_calls_end｜>"
    assert calls(check(reply, tools=TOOLS, dialects=["step3"])) == PARIS * 2


def test_apertus_without_its_suffix():
    reply = '<|tools_prefix|>[{"get_weather": {"city": "Paris"}}]\nDone.'
    got = check(reply, tools=TOOLS, dialects=["apertus"])
    assert (calls(got), got.diagnostics, got.visible_text) == (PARIS, [], "Done.")


def test_minimax_m3_nested_elements():
    ns = "]<]minimax[>["
    tools = ToolSet.from_list(
        [
            {
                "name": "order",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "integer"},
                        "items": {"type": "array"},
                        "meta": {"type": "object"},
                    },
                },
            }
        ]
    )
    reply = (
        f'{ns}<tool_call>\n{ns}<invoke name="order">{ns}<id>42{ns}</id>'
        f"{ns}<items>{ns}<item>{ns}<sku>a{ns}</sku>{ns}<qty>2{ns}</qty>{ns}</item>{ns}<item>{ns}<sku>b{ns}</sku>{ns}</item>{ns}</items>"
        f"{ns}<meta>{ns}<tag>x{ns}</tag>{ns}<tag>y{ns}</tag>{ns}</meta>{ns}</invoke>\n{ns}</tool_call>"
    )
    got = check(reply, tools=tools, dialects=["minimax-m3"])
    assert calls(got) == [
        ("order", {"id": 42, "items": [{"sku": "a", "qty": 2}, {"sku": "b"}], "meta": {"tag": ["x", "y"]}})
    ]
    bad = check(
        f'{ns}<tool_call>\n{ns}<invoke name="order">{ns}<id>42{ns}</invoke>\n{ns}</tool_call>',
        tools=tools,
        dialects=["minimax-m3"],
    )
    assert bad.calls == [] and [d.kind for d in bad.diagnostics] == ["malformed"]


def test_a_union_with_string_reads_a_json_number_or_boolean_as_one():
    tools = ToolSet.from_list(
        [
            {
                "name": "pay",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "amount": {"type": ["string", "number"]},
                        "ok": {"type": ["string", "boolean"]},
                        "code": {"type": ["string", "integer"]},
                    },
                },
            }
        ]
    )
    reply = (
        "<function=pay><parameter=amount>42</parameter><parameter=ok>true</parameter>"
        "<parameter=code>02134</parameter></function>"
    )
    # 02134 is no JSON number: a zip code stays the text it was
    assert calls(check(reply, tools=tools)) == [("pay", {"amount": 42, "ok": True, "code": "02134"})]
    got = check(
        "<function=pay><parameter=amount>4.5</parameter><parameter=ok>yes</parameter></function>", tools=tools
    )
    assert calls(got) == [("pay", {"amount": 4.5, "ok": "yes"})]


def test_an_integer_with_leading_zeros_and_a_boolean_in_capitals_are_read_where_no_string_is_allowed():
    tools = ToolSet.from_list(
        [
            {
                "name": "flag",
                "parameters": {
                    "type": "object",
                    "properties": {"n": {"type": "integer"}, "on": {"type": "boolean"}},
                },
            }
        ]
    )
    got = check(
        "<function=flag><parameter=n>007</parameter><parameter=on>FALSE</parameter></function>", tools=tools
    )
    assert (calls(got), got.diagnostics) == ([("flag", {"n": 7, "on": False})], [])
    # a word that is neither is left as text and reported, never guessed
    bad = check("<function=flag><parameter=n>seven</parameter></function>", tools=tools)
    assert [d.kind for d in bad.diagnostics] == ["invalid_arguments"]
