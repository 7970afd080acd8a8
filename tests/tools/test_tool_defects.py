"""A tool that fails by a defect of its own (a bug, not the call) answers with an
`internal_error` the agent can read: the exception's type and message, no traceback, the
server logging it and serving on. A batch of calls keeps the other calls' answers, and
cancellation and malformed arguments still go their own way."""

from __future__ import annotations

import logging

import pytest

from lsp_agent.config import Settings
from lsp_agent.errors import ArgumentError, Cancelled
from lsp_agent.tools import REGISTRY, Context, call, tool
from lsp_agent.workspace import Workspace

RAISES = {
    "runtime": RuntimeError("dictionary changed size during iteration"),
    "value": ValueError("a plain ValueError is a defect too"),
    "key": KeyError("missing"),
}


@pytest.fixture(scope="module", autouse=True)
def defect_tool():
    """`defect`: raises what its `kind` names (the three ways a tool leaves by exception)."""

    @tool(
        "defect",
        "Defect",
        "Test tool: raises.",
        {"type": "object", "properties": {"kind": {"type": "string"}}, "required": ["kind"]},
    )
    def defect(ctx, kind):
        if kind == "cancelled":
            raise Cancelled()
        if kind == "arguments":
            raise ArgumentError("kind: checked by the tool itself")
        raise RAISES[kind]

    yield
    REGISTRY.pop("defect")


@pytest.fixture
def ctx(tmp_path):
    (tmp_path / "notes.txt").write_text("first note\n")
    return Context(Workspace([tmp_path]), Settings())


@pytest.mark.parametrize("kind", sorted(RAISES))
def test_a_defect_is_an_internal_error_answer_and_the_traceback_goes_to_the_log(ctx, kind, caplog):
    with caplog.at_level(logging.ERROR, logger="lsp_agent.tools"):
        answer = call(ctx, "defect", {"kind": kind})
    exc = RAISES[kind]
    assert answer["error"]["code"] == "internal_error"
    assert f"{type(exc).__name__}: {exc}" in answer["text"] and "bug in lsp-agent" in answer["text"]
    assert "Traceback" not in answer["text"] and __file__ not in answer["text"]
    [record] = caplog.records
    assert record.exc_info is not None and record.exc_info[1] is exc  # the log has the traceback


def test_cancellation_and_arguments_the_tool_checks_are_not_defects(ctx):
    with pytest.raises(Cancelled):
        call(ctx, "defect", {"kind": "cancelled"})
    with pytest.raises(ArgumentError, match="checked by the tool itself"):
        call(ctx, "defect", {"kind": "arguments"})


def test_a_long_message_is_cut(ctx, monkeypatch):
    monkeypatch.setitem(RAISES, "runtime", RuntimeError("x" * 10_000))
    answer = call(ctx, "defect", {"kind": "runtime"})
    assert answer["error"]["code"] == "internal_error" and len(answer["text"]) < 600


def test_a_defect_in_a_batch_keeps_the_other_calls_answers(ctx):
    reply = (
        '<tool_call>\n{"name": "defect", "arguments": {"kind": "runtime"}}\n</tool_call>\n'
        '<tool_call>\n{"name": "read", "arguments": {"path": "notes.txt"}}\n</tool_call>\n'
    )
    answer = call(ctx, "run_calls", {"reply": reply})
    failed, read = answer["results"]
    assert failed["answer"]["error"]["code"] == "internal_error"
    assert read["answer"]["text"].splitlines()[1:] == ["1:first note"]
