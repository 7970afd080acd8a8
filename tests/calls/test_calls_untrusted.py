"""Hostile replies and odd tool lists: every one is an answer (a call or a diagnostic),
never an exception, and nothing decoded is unfit for a JSON answer."""

import json

import pytest

from lsp_agent.calls import ToolSet
from lsp_agent.calls.dialects import DIALECTS
from lsp_agent.calls.jsoncall import MAX_DEPTH
from lsp_agent.calls.nudge import nudge_for
from lsp_agent.calls.prompt import tool_prompt
from tests.support.callcheck import calls, check

DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    "reply, reason",
    [
        (
            f'<tool_call>{{"name": "read", "arguments": {{"path": {DEEP}}}}}</tool_call>',
            "invalid JSON: nested deeper than 64 levels",
        ),
        (f"<tool_call>{DEEP}</tool_call>", "invalid JSON: nested deeper than 64 levels"),
        (f"```tool_call\n{DEEP}\n```", "invalid JSON: nested deeper than 64 levels"),
        (
            "[TOOL_CALLS]read[ARGS]" + '{"a": ' * 5000 + "1" + "}" * 5000,
            "invalid JSON after [ARGS]: nested deeper than 64 levels",
        ),
        (f"[TOOL_CALLS]{DEEP}", "invalid JSON: nested deeper than 64 levels"),
        (
            '<tool_call>{"name": "read", "arguments": {"path": "a", "start": NaN}}</tool_call>',
            "invalid JSON: NaN is not a JSON value",
        ),
        (
            '[TOOL_CALLS]read[ARGS]{"path": "a", "start": -Infinity}',
            "invalid JSON after [ARGS]: -Infinity is not a JSON value",
        ),
        (
            '<tool_call>{"name": "read", "arguments": {"path": "a", "start": 1e999}}</tool_call>',
            "invalid JSON: 1e999 is out of range for a number",
        ),
        (
            '<tool_call>{"name": "read", "arguments": {"start": ' + "9" * 5000 + "}}</tool_call>",
            "invalid JSON: an integer with too many digits",
        ),
        (
            '<tool_call>{"name": "read", "arguments": "{\\"start\\": NaN}"}</tool_call>',
            '"arguments" is a string that is not valid JSON: NaN is not a JSON value',
        ),
    ],
)
def test_json_no_answer_could_carry_is_malformed_not_a_crash(reply, reason):
    got = check(reply)
    assert got.calls == []
    assert [(d.kind, d.reason) for d in got.diagnostics] == [("malformed", reason)]


def test_nesting_up_to_the_limit_is_accepted():
    value = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    got = check(f'<tool_call>{{"name": "x", "arguments": {{"a": {value[2:-2]}}}}}</tool_call>')
    assert [c.name for c in got.calls] == ["x"]
    json.dumps(got.to_dict(), allow_nan=False)


def test_xml_values_the_schema_wants_typed_stay_text_when_they_are_not_json_we_accept():
    for value in (DEEP, "NaN", "1e999", "9" * 5000):
        got = check(
            f"<function=read><parameter=path>a</parameter><parameter=start>{value}</parameter></function>"
        )
        assert calls(got) == [("read", {"path": "a", "start": value})]
        assert [(d.kind, d.argument) for d in got.diagnostics] == [("invalid_arguments", "start")]


def test_mistral_marker_split_before_args_waits_to_be_told_apart():
    # `[TOOL_CALLS][ARGS]` has no name: malformed, also when a delta ends at `[TOOL_CALLS][`.
    for reply in ("[TOOL_CALLS][ARGS]{}", '[TOOL_CALLS][CALL_ID]"7"', "see [TOOL_CALLS] [ARGS] x"):
        got = check(reply)
        assert (got.calls, [d.kind for d in got.diagnostics]) == ([], ["malformed"])
        assert got.visible_text == reply[: reply.index("[TOOL_CALLS]")]


TOOLS = [
    {"name": "anything", "parameters": {"type": "object", "properties": {"a": True}, "required": ["a"]}},
    {"name": "dangling", "parameters": {"type": "object", "properties": {"a": {"$ref": "#/nope"}}}},
]


def test_odd_but_valid_schemas_from_the_runtime():
    tools = ToolSet.from_list(TOOLS)
    for dialect in (n for n, d in DIALECTS.items() if d.teaches):
        assert "### anything" in tool_prompt(dialect, tools)
    got = check(
        '<tool_call>{"name": "anything", "arguments": {"a": [1]}}</tool_call>'
        '<tool_call>{"name": "dangling", "arguments": {"a": 1}}</tool_call>',
        tools=tools,
    )
    assert [c.runnable for c in got.calls] == [True, False]
    assert [(d.kind, d.reason) for d in got.diagnostics] == [
        (
            "invalid_arguments",
            "dangling: the tool's schema cannot be checked: PointerToNowhere: '/nope' does not exist within {'type': 'object', 'properties': {'a': {'$ref': '#/nope'}}}",
        )
    ]
    assert nudge_for(got, tools).kind == "invalid_calls"
