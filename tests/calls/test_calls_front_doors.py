"""The registry front doors (decode_calls, streaming sessions, tool_prompt) and the CLI."""

import json
import subprocess
import sys

import pytest

from lsp_agent.errors import ArgumentError
from lsp_agent.tools import REGISTRY, catalog
from lsp_agent.tools import calls as front

REPLY = 'Reading.\n<tool_call>{"name": "read", "arguments": {"path": "a.txt"}}</tool_call>\n<tool_call>{"name": "read"'


def test_runtime_tools_are_registered_but_hidden_from_agents():
    names = {"decode_calls", "run_calls", "stream_open", "stream_feed", "stream_flush", "tool_prompt"}
    assert names <= set(REGISTRY) and all(not REGISTRY[n].for_agents for n in names)
    assert names.isdisjoint(t["name"] for t in catalog())


def test_decode_calls_answer(run):
    answer = run("decode_calls", reply=REPLY, finish_reason="length")
    assert answer["visible_text"] == "Reading.\n"
    assert [c["name"] for c in answer["calls"]] == ["read"]
    assert [d["kind"] for d in answer["diagnostics"]] == ["truncated"]
    assert answer["nudge"]["kind"] == "truncated" and answer["nudges_left"] == 1
    assert answer["text"].splitlines()[:3] == [
        "1 call decoded · 1 diagnostic",
        'call_1  read {"path": "a.txt"}  [tagged_json, line 2]',
        (
            "truncated  [tagged_json, line 3, chars 81-107] the reply hit its length limit (finish_reason=length) "
            "inside <tool_call>, before </tool_call>: the call is cut short, not malformed"
        ),
    ]


def test_decode_calls_with_the_runtimes_tools(run):
    tools = [
        {
            "name": "shell",
            "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}, "required": ["cmd"]},
        }
    ]
    answer = run(
        "decode_calls", reply='<tool_call>{"name": "shell", "arguments": {}}</tool_call>', tools=tools
    )
    assert answer["diagnostics"][0]["reason"] == "shell: argument 'cmd' is required but missing"
    assert answer["diagnostics"][0]["argument"] == "cmd"
    with pytest.raises(ArgumentError):
        run("decode_calls", reply="x", tools=[{"parameters": {}}])


def test_decode_text_fits_the_budget(run):
    answer = run("decode_calls", reply="word " * 2000, max_chars=500)
    assert len(answer["text"]) <= 500 and len(answer["visible_text"]) == 10000
    assert answer["text"].endswith("the whole text is in `visible_text`")


def test_stream_session(run):
    session = run("stream_open")["session"]
    pieces = [REPLY[:20], REPLY[20:50], REPLY[50:]]
    fed, visible, calls = 0, "", []
    for piece in pieces:
        answer = run("stream_feed", session=session, delta=piece, offset=fed)
        fed += len(piece)
        visible += answer["visible_text"]
        calls += answer["calls"]
        assert answer["fed"] == fed
    end = run("stream_flush", session=session, finish_reason="stop")
    visible += end["visible_text"]
    assert visible == "Reading.\n" and [c["name"] for c in calls] == ["read"]
    assert [d["kind"] for d in end["diagnostics"]] == ["unterminated"]
    assert end["closed"] and end["nudge"]["kind"] == "undecodable"
    gone = run("stream_feed", session=session, delta="x")
    assert gone["error"]["code"] == "unknown_session"


def test_stream_session_by_model_family_returns_reasoning_as_it_completes(run):
    reply = (
        "<|channel|>analysis<|message|>Read a.txt first.<|end|><|start|>assistant<|channel|>commentary "
        'to=functions.read <|constrain|>json<|message|>{"path": "a.txt"}<|call|>'
    )
    session = run("stream_open", dialects=["gpt-oss"])["session"]
    answers = [run("stream_feed", session=session, delta=reply[k : k + 7]) for k in range(0, len(reply), 7)]
    answers.append(run("stream_flush", session=session))
    assert "".join(a["reasoning_text"] for a in answers) == "Read a.txt first."
    assert "".join(a["visible_text"] for a in answers) == ""
    assert [c["name"] for a in answers for c in a["calls"]] == ["read"]
    batch = run("decode_calls", reply=reply, dialects=["gpt-oss"])
    assert (batch["reasoning_text"], batch["visible_text"]) == ("Read a.txt first.", "")
    assert batch["text"].endswith("reasoning text (17 chars):\nRead a.txt first.")


def test_stream_refusals(run, monkeypatch):
    monkeypatch.setattr(front, "SESSIONS", front.Sessions(limit=2))
    first = run("stream_open")["session"]
    run("stream_open")
    full = run("stream_open")
    assert full["error"]["code"] == "too_many_sessions"
    assert full["text"].startswith("2 streaming sessions are open; close one with stream_flush")
    run("stream_feed", session=first, delta="abc")
    late = run("stream_feed", session=first, delta="x", offset=0)
    assert late["error"]["code"] == "out_of_order" and late["fed"] == 3
    run("stream_flush", session=first)
    assert "session" in run("stream_open")  # flushing freed a place


def test_idle_sessions_expire(run, monkeypatch):
    monkeypatch.setattr(front, "SESSIONS", front.Sessions(limit=1, idle=0.0))
    old = run("stream_open")["session"]
    assert "session" in run("stream_open")
    assert run("stream_feed", session=old, delta="x")["error"]["code"] == "unknown_session"


def test_an_idle_session_expires_without_another_open(run, monkeypatch):
    monkeypatch.setattr(front, "SESSIONS", front.Sessions(idle=0.0))
    sid = run("stream_open")["session"]
    assert run("stream_feed", session=sid, delta="x")["error"]["code"] == "unknown_session"


def test_a_feed_that_loses_the_race_to_flush_is_refused(run, monkeypatch):
    sid = run("stream_open")["session"]
    session = front.SESSIONS.get(sid)
    run("stream_flush", session=sid)
    monkeypatch.setattr(front.SESSIONS, "get", lambda _: session)  # the feed got it before the flush
    assert run("stream_feed", session=sid, delta="x")["error"]["code"] == "unknown_session"


def test_tool_prompt_and_its_budget(run):
    answer = run("tool_prompt", dialect="mistral")
    assert '[TOOL_CALLS]read[ARGS]{"path": "README.md"}' in answer["text"]
    small = run("tool_prompt", dialect="tagged_json", max_chars=200)
    assert small["error"]["code"] == "budget_too_small" and small["minimum"] > 200


def cli(*args, stdin="", cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_cli_decode_and_run(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    out = cli("decode", "--finish-reason", "length", stdin=REPLY)
    assert out.returncode == 1  # a diagnostic
    assert out.stdout.startswith("1 call decoded · 1 diagnostic\n")
    out = cli("decode", "--json", stdin="plain answer")
    assert out.returncode == 0 and json.loads(out.stdout)["visible_text"] == "plain answer"
    out = cli("run", "--root", str(tmp_path), stdin=REPLY.rsplit("\n", 1)[0])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[:2] == ["ran 1 of 1 call", '── call_1 read {"path": "a.txt"}'] and lines[3] == "1:alpha"


def test_max_nudges_setting(ws):
    from lsp_agent.config import Settings
    from lsp_agent.tools import Context, call

    settings, problems = Settings.from_options({"max_nudges": 0})
    assert problems == [] and settings.max_nudges == 0
    answer = call(Context(ws, settings), "decode_calls", {"reply": "<tool_call>{oops}</tool_call>"})
    assert answer["nudge"] is None and answer["nudges_left"] == 0
    assert Settings.from_options({"max_nudges": -1})[1] == [
        "option max_nudges=-1 is invalid (an integer >= 0 expected); using 2."
    ]
