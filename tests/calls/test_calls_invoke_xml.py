"""Invoke XML: <invoke name="…"><parameter name="…">…</parameter></invoke>, optionally in <function_calls>."""

from lsp_agent.calls import ToolSet
from lsp_agent.tools import REGISTRY
from tests.support.callcheck import calls, check, diags

READ_ARGUMENTS = ", ".join(sorted(REGISTRY["read"].schema["properties"]))  # other branches add arguments


def test_two_invokes_in_function_calls():
    reply = (
        "Reading both.\n<function_calls>\n"
        '<invoke name="read">\n<parameter name="path">a.py</parameter>\n</invoke>\n'
        "<invoke name='read'><parameter name='path'>b.py</parameter><parameter name=\"start\">2</parameter></invoke>\n"
        "</function_calls>\nWaiting."
    )
    got = check(reply)
    assert calls(got) == [("read", {"path": "a.py"}), ("read", {"path": "b.py", "start": 2})]
    assert {c.dialect for c in got.calls} == {"invoke_xml"}
    assert got.visible_text == "Reading both.\nWaiting."


def test_bare_invoke():
    got = check('<invoke name="read"><parameter name="path">a.py</parameter></invoke>')
    assert calls(got) == [("read", {"path": "a.py"})]


def test_unknown_tool_names_the_closest():
    # A tool set of its own, so that tools added to the registry do not change the answer.
    # 'edit' shares 'ed' with 'raed' (half alike by difflib's ratio) but every letter differs:
    # far less alike than 'read', it is not named beside it; 'list_files' is not near at all.
    tools = ToolSet.from_list([{"name": "read"}, {"name": "edit"}, {"name": "list_files"}])
    reply = '<invoke name="raed"><parameter name="path">a.py</parameter></invoke>'
    got = check(reply, tools=tools)
    d = got.diagnostics[0]
    assert (d.kind, d.name, d.closest, d.reason) == (
        "unknown_tool",
        "raed",
        ["read"],
        "there is no tool 'raed'; did you mean 'read'?",
    )
    assert (got.calls[0].runnable, d.call_id) == (False, got.calls[0].id)
    # With the agent's own tools, whatever they are, 'read' is the best guess and named first.
    d = check(reply).diagnostics[0]
    assert (d.kind, d.closest[0]) == ("unknown_tool", "read")
    assert d.reason.startswith("there is no tool 'raed'; did you mean 'read'")


def test_names_nearly_as_alike_as_the_best_are_all_suggested():
    tools = ToolSet.from_list([{"name": n} for n in ("callers", "callees", "read", "edit")])
    assert tools.closest("caller") == ["callers", "callees"]  # one letter off, and two
    assert tools.closest("Raed") == ["read"]
    assert tools.closest("overview") == []


def test_missing_invoke_closer():
    reply = '<invoke name="read"><parameter name="path">a.py</parameter>'
    assert [d.kind for d in check(reply).diagnostics] == ["unterminated"]
    reply = '<function_calls><invoke name="read"><parameter name="path">a.py'
    got = check(reply + "</function_calls>")
    assert diags(got, reply + "</function_calls>") == [
        (
            "malformed",
            "invoke_xml",
            reply + "</function_calls>",
            '<invoke name="read"> has no </invoke> before the wrapper\'s closer',
        )
    ]
    # Its last parameter closed, the call is whole but for </invoke>: the wrapper closes it.
    assert calls(check(reply + "</parameter></function_calls>")) == [("read", {"path": "a.py"})]


def test_invoke_without_a_name_is_text_and_its_closer_stray():
    reply = '<invoke><parameter name="path">a</parameter></invoke>'
    got = check(reply)
    assert [(d[2], d[1]) for d in diags(got, reply)] == [("</invoke>", "invoke_xml")]
    assert got.visible_text == '<invoke><parameter name="path">a</parameter>'


def test_missing_parameter_closer_and_unknown_argument():
    reply = '<invoke name="read"><parameter name="path">a</invoke>\n<invoke name="read"><parameter name="path">a</parameter><parameter name="depth">2</parameter></invoke>'
    got = check(reply)
    assert [c.arguments for c in got.calls] == [{"path": "a"}, {"path": "a", "depth": 2}]
    assert [(d.kind, d.argument, d.reason) for d in got.diagnostics] == [
        (
            "invalid_arguments",
            "depth",
            f"read: unexpected argument(s) 'depth' (known: {READ_ARGUMENTS})",
        ),
    ]


def test_prose_mentions():
    reply = "The <function_calls> wrapper holds calls; `</invoke>` ends one."
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])


def test_fenced_example_is_text():
    reply = 'Like this:\n```xml\n<function_calls><invoke name="read"></invoke></function_calls>\n```\n'
    got = check(reply)
    assert (got.visible_text, got.calls, got.diagnostics) == (reply, [], [])
