"""Tagged JSON: <tool_call>{…}</tool_call> and its spellings; each malformed form exactly."""

from tests.support.callcheck import calls, check, diags

CALL = '{"name": "read", "arguments": {"path": "a.py"}}'


def test_valid_call_between_prose_lines():
    reply = f"Let me read it.\n<tool_call>\n{CALL}\n</tool_call>\nDone."
    got = check(reply)
    assert got.visible_text == "Let me read it.\nDone."
    assert calls(got) == [("read", {"path": "a.py"})]
    call = got.calls[0]
    assert (call.id, call.dialect, call.line, call.runnable) == ("call_1", "tagged_json", 2, True)
    assert reply[call.span[0] : call.span[1]] == f"<tool_call>\n{CALL}\n</tool_call>"
    assert got.diagnostics == []


def test_id_attribute_and_other_spellings():
    reply = f'<tool_call id="c7">{CALL}</tool_call> <toolcall>{CALL}</toolcall> <tool-call>{CALL}</tool-call>'
    got = check(reply)
    assert [c.id for c in got.calls] == ["c7", "call_2", "call_3"]
    assert got.visible_text == ""  # only blocks and spaces on the line: it goes whole


def test_array_of_calls_in_one_block_keeps_good_elements():
    reply = '<tool_call>[{"name": "read", "arguments": {"path": "a"}}, 7, {"arguments": {}}]</tool_call>'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a"})]
    assert [d[3] for d in diags(got, reply)] == [
        'element 2: expected an object with "name" and "arguments", got a number',
        'element 3: the object has no "name"',
    ]


def test_arguments_as_a_json_string_are_accepted():
    got = check('<tool_call>{"name": "read", "arguments": "{\\"path\\": \\"a.py\\"}"}</tool_call>')
    assert calls(got) == [("read", {"path": "a.py"})]


def test_bad_json_is_malformed_and_prose_after_it_stays():
    reply = '<tool_call>{"name": "read", "arguments": {"path": "a.py"}</tool_call>\nThen more.'
    got = check(reply)
    assert got.calls == []
    assert diags(got, reply) == [
        (
            "malformed",
            "tagged_json",
            '<tool_call>{"name": "read", "arguments": {"path": "a.py"}</tool_call>',
            "invalid JSON: Expecting ',' delimiter at line 1 column 47 of the JSON",
        )
    ]
    assert got.visible_text == "Then more."


def test_empty_missing_and_non_string_names():
    reply = (
        '<tool_call>{"name": "", "arguments": {}}</tool_call>\n'
        '<tool_call>{"arguments": {"path": "a"}}</tool_call>\n'
        '<tool_call>{"name": 3}</tool_call>\n'
        '<tool_call>{"name": "read", "arguments": [1]}</tool_call>'
    )
    got = check(reply)
    assert [(d.kind, d.line, d.reason) for d in got.diagnostics] == [
        ("malformed", 1, '"name" is empty'),
        ("malformed", 2, 'the object has no "name"'),
        ("malformed", 3, '"name" must be a string, got a number'),
        ("malformed", 4, '"arguments" must be an object, got an array'),
    ]


def test_missing_closer_at_the_end_unterminated_or_truncated():
    reply = f"Reading.\n<tool_call>{CALL}"
    got = check(reply)
    assert diags(got, reply) == [
        (
            "unterminated",
            "tagged_json",
            f"<tool_call>{CALL}",
            "<tool_call> was never closed: the reply ended before </tool_call>",
        )
    ]
    assert got.visible_text == "Reading.\n"
    cut = check(reply, "length")
    assert [d.kind for d in cut.diagnostics] == ["truncated"]
    assert "finish_reason=length" in cut.diagnostics[0].reason
    assert check(reply, "max_tokens").diagnostics[0].kind == "truncated"


def test_missing_closer_before_another_call_keeps_the_sibling():
    reply = f'<tool_call>{{"name": "read"\n<tool_call>{CALL}</tool_call>'
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py"})]
    assert diags(got, reply) == [
        (
            "malformed",
            "tagged_json",
            '<tool_call>{"name": "read"\n',
            "no </tool_call> before the next opener <tool_call>",
        )
    ]


def test_stray_closer_is_reported_and_removed():
    reply = f"{CALL}</tool_call>\nok"
    got = check(reply)
    assert got.calls == []
    assert diags(got, reply) == [
        (
            "malformed",
            "tagged_json",
            "</tool_call>",
            "</tool_call> with no open block before it (a call whose opener is missing?)",
        )
    ]
    assert got.visible_text == f"{CALL}\nok"


def test_repeated_tags():
    reply = f"<tool_call><tool_call>{CALL}</tool_call></tool_call>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py"})]
    assert [(d[2], d[3]) for d in diags(got, reply)] == [
        ("<tool_call>", "<tool_call> is repeated: the block opens twice"),
        ("</tool_call>", "</tool_call> with no open block before it (a call whose opener is missing?)"),
    ]


def test_nested_tags():
    inner = '<tool_call>{"name": "read", "arguments": {"path": "b"}}</tool_call>'
    reply = f'<tool_call>{{"name": "read", "arguments": {inner}}}</tool_call>'
    got = check(reply)
    assert calls(got) == [("read", {"path": "b"})]
    assert [(d[2], d[3]) for d in diags(got, reply)] == [
        ('<tool_call>{"name": "read", "arguments": ', "no </tool_call> before the next opener <tool_call>"),
        ("</tool_call>", "</tool_call> with no open block before it (a call whose opener is missing?)"),
    ]
    assert got.visible_text == "}"


def test_literal_closer_inside_a_json_string_is_part_of_the_argument():
    reply = '<tool_call>{"name": "read", "arguments": {"path": "x</tool_call>y"}}</tool_call> after'
    got = check(reply)
    assert calls(got) == [("read", {"path": "x</tool_call>y"})]
    assert got.visible_text == " after"


def test_unclosed_string_holding_the_closer_ends_the_block_at_that_closer():
    reply = '<tool_call>{"name": "read", "arguments": {"path": "a.py}}</tool_call>\nThen I will summarise.'
    got = check(reply)
    assert diags(got, reply) == [
        (
            "malformed",
            "tagged_json",
            '<tool_call>{"name": "read", "arguments": {"path": "a.py}}</tool_call>',
            "a JSON string was still open when its line ended; the </tool_call> inside it closes the block",
        )
    ]
    assert got.visible_text == "Then I will summarise."


def test_unclosed_string_holding_an_opener_ends_the_block_where_the_next_one_starts():
    # The string opened at "a.py is still open when its line ends, so its quotes are out of
    # step: the <tool_call> in it opens the next block, whole (not cut at <function=read>).
    first = '<tool_call>{"name": "read", "arguments": {"path": "a.py'
    reply = f"{first}<tool_call>\n<function=read>\n<parameter=path>\nb.py\n</parameter>\n</function>\n</tool_call>"
    got = check(reply)
    assert calls(got) == [("read", {"path": "b.py"})]
    assert reply[got.calls[0].span[0] :].startswith("<tool_call>\n<function=read>")
    assert diags(got, reply) == [
        (
            "malformed",
            "tagged_json",
            first,
            "no </tool_call> before the next opener <tool_call> (a JSON string was still open when its line ended)",
        )
    ]


def test_the_first_of_closer_and_opener_in_an_unclosed_string_ends_the_block():
    closer_first = (
        '<tool_call>{"name": "read", "arguments": {"path": "a.py}}</tool_call><tool_call>{}</tool_call>'
    )
    opener_first = (
        '<tool_call>{"name": "read", "arguments": {"path": "a.py<tool_call>{}</tool_call>}}</tool_call>'
    )
    closes = "a JSON string was still open when its line ended; the </tool_call> inside it closes the block"
    opens = "no </tool_call> before the next opener <tool_call> (a JSON string was still open when its line ended)"
    no_name = ("<tool_call>{}</tool_call>", 'the object has no "name"')
    got = check(closer_first + "\nok")
    assert [(d[2], d[3]) for d in diags(got, closer_first)] == [
        (closer_first.removesuffix(no_name[0]), closes),
        no_name,
    ]
    got = check(opener_first + "\nok")
    assert [(d[2], d[3]) for d in diags(got, opener_first)] == [
        ('<tool_call>{"name": "read", "arguments": {"path": "a.py', opens),
        no_name,
        ("</tool_call>", "</tool_call> with no open block before it (a call whose opener is missing?)"),
    ]


def test_raw_line_break_in_a_string_is_malformed():
    reply = '<tool_call>{"name": "read", "arguments": {"path": "a\nb"}}</tool_call>'
    got = check(reply)
    # The break cuts the string, so the next quote opens one that swallows the closer.
    assert [(d.kind, d.reason) for d in got.diagnostics] == [
        (
            "malformed",
            (
                "a JSON string was still open when the reply ended; the </tool_call> inside it closes the block "
                "(a raw line break cut an earlier string: write line breaks in JSON strings as \\n)"
            ),
        )
    ]


def test_prose_that_mentions_the_tags():
    reply = "Wrap each call in <tool_call> tags; `</tool_call>` closes it, and `<tool_call>{…}` is the shape."
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_fenced_examples_are_text():
    reply = f"For example:\n```xml\n<tool_call>{CALL}</tool_call>\n```\nand\n~~~\n</tool_call>\n~~~\n"
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_mismatched_spelling_does_not_close():
    reply = f"<toolcall>{CALL}</tool_call>"
    got = check(reply)
    assert [(d.kind, d.reason) for d in got.diagnostics] == [
        ("unterminated", "<toolcall> was never closed: the reply ended before </toolcall>")
    ]
