"""The streaming scrubber: what it holds back, the line rule, truncated vs unterminated."""

import pytest

from lsp_agent.calls import Scrubber, decode
from tests.support.callcheck import AGENT_TOOLS, calls, check

CALL = '<tool_call>{"name": "read", "arguments": {"path": "a.py"}}</tool_call>'


def test_emits_at_once_and_holds_only_what_may_become_a_block():
    s = Scrubber(AGENT_TOOLS)
    assert s.feed("Let me look ") == "Let me look "
    assert s.feed("at it <tool_ca") == "at it "  # a split opener is held
    assert s.feed('ll>{"name": "read", ') == ""  # a pending block is held
    assert s.feed('"arguments": {"path": "a.py"}}</tool_') == ""
    assert s.feed("call> and a <b> tag") == " and a <b> tag"
    assert calls(s) == [("read", {"path": "a.py"})]
    assert s.feed(" <tool_cab") == " <tool_cab"  # no longer an opener: out at once
    assert s.flush() == ""


def test_held_partial_opener_at_the_end_is_text():
    for reason in (None, "length"):
        got = check("see <tool_ca", reason)
        assert (got.visible_text, got.calls, got.diagnostics) == ("see <tool_ca", [], [])


def test_flush_is_final():
    s = Scrubber(AGENT_TOOLS)
    s.feed("x")
    s.flush()
    with pytest.raises(RuntimeError):
        s.feed("y")


@pytest.mark.parametrize(
    "reply, visible",
    [
        (f"a\n{CALL}\nb", "a\nb"),  # a block alone on its line: the line goes
        (f"a\n  {CALL}  \r\nb", "a\nb"),  # with its indentation and CRLF
        (f"a\n{CALL} {CALL}\nb", "a\nb"),  # several blocks on one line
        (f"a\n{CALL}", "a\n"),
        (f"{CALL}\n\nb", "\nb"),  # only the block's own line goes; the blank line stays
        (f"see {CALL} here", "see  here"),  # sharing its line with text: cut out exactly
        (f"  {CALL} x\n", "   x\n"),
        ("  indented\n", "  indented\n"),
    ],
)
def test_line_rule(reply, visible):
    assert check(reply).visible_text == visible


def test_truncated_vs_unterminated_in_batch_and_stream():
    reply = f"Writing.\n{CALL}\n<function=read><parameter=path>b"
    for reason, kind in (
        (None, "unterminated"),
        ("stop", "unterminated"),
        ("length", "truncated"),
        ("max_tokens", "truncated"),
    ):
        batch = decode(reply, reason, tools=AGENT_TOOLS)
        s = Scrubber(AGENT_TOOLS)
        visible = "".join(s.feed(reply[k : k + 5]) for k in range(0, len(reply), 5)) + s.flush(reason)
        for got in (batch.diagnostics, s.diagnostics):
            assert [(d.kind, d.dialect, d.line) for d in got] == [(kind, "function_xml", 3)]
        assert visible == batch.visible_text == "Writing.\n"
        assert calls(s) == calls(batch) == [("read", {"path": "a.py"})]


def test_earliest_opener_wins_and_calls_come_in_order():
    reply = (
        '<function=read><parameter=path>1</parameter></function> [TOOL_CALLS]read[ARGS]{"path": "2"} '
        '<invoke name="read"><parameter name="path">3</parameter></invoke>\n```tool_call\n{"name": "read", "arguments": {"path": "4"}}\n```\n'
        + CALL
    )
    got = check(reply)
    assert [c.arguments["path"] for c in got.calls] == ["1", "2", "3", "4", "a.py"]
    assert [c.dialect for c in got.calls] == [
        "function_xml",
        "mistral",
        "invoke_xml",
        "fenced_json",
        "tagged_json",
    ]
    assert [c.id for c in got.calls] == [f"call_{n}" for n in range(1, 6)]


def test_custom_tools_and_id_prefix():
    from lsp_agent.calls import ToolSet

    tools = ToolSet.from_list(
        [
            {
                "type": "function",
                "function": {
                    "name": "shell",
                    "parameters": {
                        "type": "object",
                        "properties": {"cmd": {"type": "string"}},
                        "required": ["cmd"],
                    },
                },
            }
        ]
    )
    got = decode(
        '<tool_call>{"name": "shell", "arguments": {"cmd": "ls"}}</tool_call><tool_call>{"name": "read", "arguments": {}}</tool_call>',
        tools=tools,
        id_prefix="t3_",
    )
    assert [(c.id, c.runnable) for c in got.calls] == [("t3_1", True), ("t3_2", False)]
    assert got.diagnostics[0].reason == "there is no tool 'read'; the tools are shell"


def test_many_blocks_in_a_long_reply():
    reply = "".join(f"line {n}\n{CALL}\n" for n in range(300))
    got = check(reply)
    assert len(got.calls) == 300 and got.diagnostics == []
    assert got.visible_text == "".join(f"line {n}\n" for n in range(300))
    assert got.calls[-1].line == 600


def test_fence_markers_in_the_middle_of_a_line_are_text():
    reply = f"run ```python\n{CALL}\n```"  # not at a line start: no fence opens, the call is real
    assert calls(check(reply)) == [("read", {"path": "a.py"})]
