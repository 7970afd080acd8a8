"""Mistral: [TOOL_CALLS][{…}, …] and [TOOL_CALLS]NAME[ARGS]{…} (with an optional [CALL_ID])."""

from tests.support.callcheck import calls, check, diags


def test_array_form():
    reply = 'Sure.[TOOL_CALLS][{"name": "read", "arguments": {"path": "a"}}, {"name": "read", "arguments": {"path": "b"}, "id": "x9"}] then'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"}), ("read", {"path": "b"})]
    assert [c.id for c in got.calls] == ["call_1", "x9"]
    assert got.visible_text == "Sure. then"


def test_name_args_form_with_and_without_call_id():
    reply = '[TOOL_CALLS]read[ARGS]{"path": "a"}[TOOL_CALLS]read[CALL_ID]k2[ARGS]{"path": "b", "start": 4}'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"}), ("read", {"path": "b", "start": 4})]
    assert [c.id for c in got.calls] == ["call_1", "k2"]


def test_bracket_mismatch_ends_the_block():
    reply = '[TOOL_CALLS][{"name": "read", "arguments": {"path": "a"]}] rest'
    got = check(reply)
    assert diags(got, reply) == [
        (
            "malformed",
            "mistral",
            '[TOOL_CALLS][{"name": "read", "arguments": {"path": "a"]',
            "']' does not match '{'",
        )
    ]
    assert got.visible_text == "}] rest"


def test_unterminated_and_truncated():
    reply = '[TOOL_CALLS]read[ARGS]{"path": "a'
    assert [(d.kind, d.reason) for d in check(reply).diagnostics] == [
        (
            "unterminated",
            "[TOOL_CALLS]read[ARGS] was never closed: the reply ended before the end of the JSON arguments",
        )
    ]
    assert [d.kind for d in check(reply, "length").diagnostics] == ["truncated"]


def test_bad_json_and_bad_elements():
    reply = '[TOOL_CALLS]read[ARGS]{"path": a.py}\n[TOOL_CALLS]["read"]'
    assert [d.reason for d in check(reply).diagnostics] == [
        "invalid JSON after [ARGS]: Expecting value at line 1 column 10 of the JSON",
        'element 1: expected an object with "name" and "arguments", got a string',
    ]


def test_a_new_opener_inside_the_json_ends_it():
    reply = '[TOOL_CALLS][{"name": "read", "arguments": {"path": "a"}\n[TOOL_CALLS]read[ARGS]{"path": "b"}'
    got = check(reply)
    assert calls(got) == [("read", {"path": "b"})]
    assert [d.reason for d in got.diagnostics] == ["a new [TOOL_CALLS]read[ARGS] began before the JSON ended"]


def test_marker_is_a_special_token_claimed_wherever_it_is_unless_quoted_as_code():
    # A Mistral model writes [TOOL_CALLS] only to call: what follows it that is not a call
    # is reported (to the end of its line), and the token leaves the visible text.
    reply = "Mistral writes [TOOL_CALLS] before its calls;\n`[TOOL_CALLS][…]` is the old form."
    got = check(reply)
    assert got.visible_text == "Mistral writes \n`[TOOL_CALLS][…]` is the old form."
    assert diags(got, reply) == [
        (
            "malformed",
            "mistral",
            "[TOOL_CALLS] before its calls;",
            "expected a JSON array or NAME[ARGS]{…} after [TOOL_CALLS], found 'before its calls;'",
        )
    ]


def test_closers_and_brackets_inside_json_strings_are_text():
    reply = '[TOOL_CALLS]read[ARGS]{"path": "a]}</tool_call>[TOOL_CALLS]"} after'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a]}</tool_call>[TOOL_CALLS]"})]
    assert got.visible_text == " after"


def test_fenced_example_is_text():
    reply = 'Old form:\n```\n[TOOL_CALLS][{"name": "read", "arguments": {}}]\n```\n'
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_compact_form_without_the_args_marker():
    # Servers that drop the [ARGS] special token from the text show the newer form so.
    reply = 'Reading.[TOOL_CALLS]read{"path": "a"}[TOOL_CALLS]read[CALL_ID]k3{"path": "b"} and [TOOL_CALLS]read{"path": x}'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"}), ("read", {"path": "b"})]
    assert got.calls[1].id == "k3"
    assert [(d.kind, d.reason) for d in got.diagnostics] == [
        ("malformed", "invalid JSON after read: Expecting value at line 1 column 10 of the JSON")
    ]
    assert got.visible_text == "Reading. and "


def test_junk_a_bare_name_and_a_cut_reply_are_reported():
    for reply in (
        "[TOOL_CALLS]read (the marker)",
        "[TOOL_CALLS]read[ARG",
        "[TOOL_CALLS]read[",
        "[TOOL_CALLS] Sure: [{}]",
    ):
        got = check(reply)
        assert (got.visible_text, got.calls, [d.kind for d in got.diagnostics]) == ("", [], ["malformed"]), (
            reply
        )
    for reply in ("[TOOL_CALLS]read", "[TOOL_CALLS]read[CALL_ID]a1", "[TOOL_CALLS]"):
        assert [d.kind for d in check(reply).diagnostics] == ["unterminated"]
        assert [d.kind for d in check(reply, "length").diagnostics] == ["truncated"]
