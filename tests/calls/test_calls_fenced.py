"""```tool_call fences hold calls; every other fence is an example."""

from tests.support.callcheck import calls, check, diags

CALL = '{"name": "read", "arguments": {"path": "a.py"}}'


def test_tool_call_fence():
    reply = f"Reading.\n```tool_call\n{CALL}\n```\nDone."
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py"})]
    assert got.calls[0].dialect == "fenced_json"
    assert reply[slice(*got.calls[0].span)] == f"```tool_call\n{CALL}\n```"
    assert got.visible_text == "Reading.\nDone."


def test_tildes_longer_fences_and_indentation():
    reply = f"  ~~~~tool_call\n{CALL}\n~~~~\n````tool_call\n[{CALL}, {CALL}]\n````"
    assert len(calls(check(reply))) == 3


def test_empty_and_bad_json_fences():
    reply = "```tool_call\n```\n```tool_call\n{name: read}\n```"
    assert [d.reason for d in check(reply).diagnostics] == [
        "the tool_call fence is empty",
        "invalid JSON: Expecting property name enclosed in double quotes at line 1 column 2 of the JSON",
    ]


def test_unclosed_fence_unterminated_or_truncated():
    reply = f"```tool_call\n{CALL}\n"
    got = check(reply)
    assert diags(got, reply) == [
        (
            "unterminated",
            "fenced_json",
            reply,
            "```tool_call was never closed: the reply ended before the closing ```",
        )
    ]
    assert check(reply, "length").diagnostics[0].kind == "truncated"


def test_other_fences_are_examples_even_with_calls_inside():
    for info in ("json", "python", "xml", ""):
        reply = f"Example:\n```{info}\n<tool_call>{CALL}</tool_call>\n[TOOL_CALLS]read[ARGS]{{}}\n```\nend"
        got = check(reply)
        assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_indented_four_spaces_is_not_a_fence_and_bare_json_is_not_a_call():
    reply = f"    ```tool_call\n{CALL}\n    ```"
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_inline_triple_backticks_are_not_a_fence():
    reply = f"Use ```tool_call``` fences.\n<tool_call>{CALL}</tool_call>"
    assert calls(check(reply)) == [("read", {"path": "a.py"})]


def test_literal_closers_inside_the_json_are_text():
    reply = '```tool_call\n{"name": "read", "arguments": {"path": "</tool_call> ``` x"}}\n```'
    assert calls(check(reply)) == [("read", {"path": "</tool_call> ``` x"})]
