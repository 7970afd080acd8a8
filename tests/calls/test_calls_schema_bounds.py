"""A runtime's tool schema is untrusted input: a pattern that takes exponential time or a
$ref that loops is a diagnostic saying the call cannot be checked, in bounded time, and the
server keeps answering meanwhile."""

from __future__ import annotations

import threading
from pathlib import Path

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

# Python's re takes about 2**40 steps on this before it fails
CATASTROPHIC = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a|a)*$"}}}
REPLY = '<tool_call>{"name": "t", "arguments": {"a": "' + "a" * 40 + '!"}}</tool_call>'


def decode(tmp_path: Path, schema: dict, reply: str = REPLY) -> dict:
    tools = [{"name": "t", "parameters": schema}]
    return call(Context(Workspace([tmp_path])), "decode_calls", {"reply": reply, "tools": tools})


def reasons(answer: dict) -> list[str]:
    return [d["reason"] for d in answer["diagnostics"]]


def test_a_catastrophic_pattern_is_a_call_that_cannot_be_checked(tmp_path: Path) -> None:
    answers: list[dict] = []
    worker = threading.Thread(target=lambda: answers.append(decode(tmp_path, CATASTROPHIC)), daemon=True)
    worker.start()
    worker.join(60)  # without the bound: hours
    assert answers, "the pattern was not bounded"
    (reason,) = reasons(answers[0])
    assert reason.startswith("t: the tool's schema cannot be checked: the pattern '^(a|a)*$' did not finish")
    assert [c["runnable"] for c in answers[0]["calls"]] == [False]


def test_a_read_runs_while_a_pattern_is_matched(tmp_path: Path) -> None:
    (tmp_path / "f.py").write_text("x = 1\n")
    started, reads = threading.Event(), []
    schema = {
        "type": "object",
        "properties": {"a": {"type": "array", "items": CATASTROPHIC["properties"]["a"]}},
    }
    many = (
        '<tool_call>{"name": "t", "arguments": {"a": ['
        + ", ".join(['"' + "a" * 40 + '!"'] * 50)
        + "]}}</tool_call>"
    )

    def slow() -> None:
        started.set()
        decode(tmp_path, schema, many)

    worker = threading.Thread(target=slow, daemon=True)
    worker.start()
    started.wait()
    while worker.is_alive() and len(reads) < 3:  # reads finish while the patterns run
        reads.append(call(Context(Workspace([tmp_path])), "read", {"path": "f.py"})["text"])
    worker.join(60)
    assert not worker.is_alive()
    assert len(reads) == 3 and all("x = 1" in r for r in reads)


def test_a_pattern_still_checks_what_it_can(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^b"}}}
    (reason,) = reasons(decode(tmp_path, schema))
    assert "does not match '^b'" in reason
    keyed = {
        "type": "object",
        "patternProperties": {"^a": {"type": "integer"}},
        "additionalProperties": False,
    }
    (reason,) = reasons(decode(tmp_path, keyed))
    assert "must be of type integer" in reason


def test_a_ref_loop_is_a_diagnostic_not_an_internal_error(tmp_path: Path) -> None:
    for schema in ({"$ref": "#"}, {"type": "object", "properties": {"a": {"$ref": "#/properties/a"}}}):
        answer = decode(tmp_path, schema)
        assert "error" not in answer
        assert reasons(answer) == [
            "t: the tool's schema cannot be checked: its $ref refers back to itself without end"
        ]


def test_a_recursive_schema_that_consumes_the_value_still_checks(tmp_path: Path) -> None:
    tree = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "kids": {"type": "array", "items": {"$ref": "#"}}},
    }
    reply = '<tool_call>{"name": "t", "arguments": {"a": "x", "kids": [{"a": "y", "kids": [{"a": 1}]}]}}</tool_call>'
    (reason,) = reasons(decode(tmp_path, tree, reply))
    assert "must be of type string" in reason
