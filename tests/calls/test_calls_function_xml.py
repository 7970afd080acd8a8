"""Function XML: <function=NAME><parameter=K>V</parameter></function>, bare or in <tool_call>."""

from tests.support.callcheck import calls, check, diags

QWEN = "<tool_call>\n<function=read>\n<parameter=path>\na.py\n</parameter>\n<parameter=start>\n3\n</parameter>\n</function>\n</tool_call>"


def test_wrapped_call_values_typed_by_the_schema():
    reply = f"I'll look.\n{QWEN}\nDone."
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py", "start": 3})]  # start is an integer in read's schema
    assert got.calls[0].dialect == "function_xml"
    assert reply[slice(*got.calls[0].span)] == QWEN
    assert got.visible_text == "I'll look.\nDone."


def test_string_parameters_stay_text_even_when_they_look_like_json():
    got = check("<function=read><parameter=path>123</parameter></function>")
    assert calls(got) == [("read", {"path": "123"})]


def test_values_keep_inner_whitespace_and_lose_one_layout_break_each_side():
    got = check("<function=read><parameter=path>\n\n  a b  \n\n</parameter></function>")
    assert calls(got) == [("read", {"path": "\n  a b  \n"})]


def test_two_functions_in_one_tool_call():
    reply = "<tool_call><function=read><parameter=path>a</parameter></function>\n<function=read><parameter=path>b</parameter></function></tool_call>"
    assert calls(check(reply)) == [("read", {"path": "a"}), ("read", {"path": "b"})]


def test_missing_outer_closer_is_not_an_error():
    reply = "<tool_call>\n<function=read>\n<parameter=path>a</parameter>\n</function>\nNow I wait."
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"})]
    assert got.diagnostics == []
    assert got.visible_text == "Now I wait."


def test_missing_parameter_closer_ends_the_value_at_the_next_parameter_or_the_call():
    # The value never swallows the next parameter (as vLLM and SGLang read it), so the call
    # runs with the values the model meant.
    reply = "<function=read><parameter=path>a.py\n<parameter=start>3\n</parameter></function>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py", "start": 3})] and got.diagnostics == []
    reply = "<function=read><parameter=path>a.py</function>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py"})] and got.diagnostics == []


def test_missing_function_closer_at_the_end_and_before_a_sibling():
    reply = "<function=read><parameter=path>a</parameter>"
    assert [(d.kind, d.reason) for d in check(reply).diagnostics] == [
        ("unterminated", "<function=read> was never closed: the reply ended before </function>")
    ]
    assert [d.kind for d in check(reply, "length").diagnostics] == ["truncated"]
    reply = "<function=read><parameter=path>a</parameter>\n<function=read><parameter=path>b</parameter></function>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "b"})]
    assert diags(got, reply) == [
        (
            "malformed",
            "function_xml",
            "<function=read><parameter=path>a</parameter>\n",
            "a new <function=read> began before </function>",
        )
    ]


def test_missing_function_closer_inside_tool_call():
    # The wrapper's closer closes a call whose last parameter is closed (as SGLang reads it);
    # a value cut by it is reported, never run short.
    reply = "<tool_call><function=read><parameter=path>a</parameter></tool_call>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"})] and got.diagnostics == []
    cut = (
        "<tool_call><function=read><parameter=path>use </tool_call> to end</parameter></function></tool_call>"
    )
    got = check(cut)
    assert got.calls == [] and got.diagnostics[0].kind == "malformed"
    assert got.diagnostics[0].reason == "<function=read> has no </function> before the wrapper's closer"


def test_duplicate_parameter_takes_the_last_value_and_stray_text_is_reported():
    # A parameter given twice: the last value counts, as vLLM and llama.cpp read it.
    reply = "<function=read><parameter=path>a</parameter><parameter=path>b</parameter></function>\n<function=read>path=a</function>"
    got = check(reply)
    assert [c.arguments for c in got.calls] == [{"path": "b"}]
    assert [d.reason for d in got.diagnostics] == [
        "in <function=read>: expected <parameter=NAME>, found 'path=a'"
    ]


def test_empty_name_is_not_an_opener_and_its_closer_is_stray():
    reply = "<function=><parameter=path>a</parameter></function>"
    got = check(reply)
    assert got.calls == []
    assert diags(got, reply) == [
        (
            "malformed",
            "function_xml",
            "</function>",
            "</function> with no open block before it (a call whose opener is missing?)",
        )
    ]
    assert got.visible_text == "<function=><parameter=path>a</parameter>"


def test_non_json_value_where_the_schema_wants_an_integer():
    got = check("<function=read><parameter=path>a</parameter><parameter=start>three</parameter></function>")
    assert [(d.kind, d.argument, d.reason) for d in got.diagnostics] == [
        ("invalid_arguments", "start", "read: argument 'start' = \"three\": must be of type integer")
    ]
    assert got.calls[0].runnable is False


def test_fenced_example_inside_a_value_is_part_of_it():
    value = "# Use\n```xml\n<function=read></function>\n```"
    got = check(f"<function=read><parameter=path>\n{value}\n</parameter></function>")
    assert calls(got) == [("read", {"path": value})]


def test_a_fence_left_open_inside_a_value_hides_the_closers():
    reply = "<function=read><parameter=path>\n```python\nx = 1\n</parameter></function>\nmore"
    got = check(reply)
    assert [(d.kind, d.reason) for d in got.diagnostics] == [
        ("unterminated", "<function=read> was never closed: the reply ended before </function>")
    ]


def test_mentions_and_fenced_examples_are_text():
    reply = "Write `<function=NAME>` blocks, e.g.\n```\n<function=read><parameter=path>a</parameter></function>\n```\n"
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])
