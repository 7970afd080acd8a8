"""The regex-hostility suite: patterns and globs chosen to hurt a regex engine (catastrophic
backtracking, huge repetitions, constructs ripgrep's engine refuses, malformed syntax) over
text chosen to make it worse (a 2 MB minified line). Each search is answered (a stage that
fits the budget, or a refusal naming the problem), and over stdio none of them keeps a read
waiting: searches run in the heavy lane, in ripgrep's own process, which a cancel kills."""

from __future__ import annotations

import asyncio
import json

import pytest

from lsp_agent.search import MAX_PATTERN, ripgrep
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.raw_rpc import RawClient

BUDGET = 4000

PATTERNS = [
    # catastrophic backtracking in a backtracking engine; linear in ripgrep's
    r"(a+)+$",
    r"(a|aa)+$",
    r"(x+x+)+y",
    r".*.*.*.*.*.*.*.*.*.*=",
    r"(.*a){12}",
    r"^(([a-z])+.)+[A-Z]([a-z])+$",
    r"(\w+\s?)*$",
    # huge repetitions: over the compiled size limit, refused
    r"a{100000}",
    r"(?:a{1000}){1000}",
    r"[a-z]{1,65535}",
    r"(\w{500}){500}",
    # constructs the engine does not have
    r"(?=a)b",
    r"(?<=a)b",
    r"(a)\1",
    r"a++",
    # malformed
    "(",
    "[",
    "a)",
    "\\",
    "*a",
    "a**",
    r"\p{NotAClass}",
    r"(?P<n>a)(?P<n>b)",
    r"[z-a]",
    r"x{2,1}",
    # matching everything, or nothing visible
    "^",
    "$",
    r"\b",
    ".",
    r"(?s).",
    # unicode
    r"\w+",
    r"(?i)ǅ",
    r"[\p{Han}]+",
    r"\p{Emoji}",
    # long alternations, up to the accepted length
    "|".join(f"word{n}" for n in range(1500))[:MAX_PATTERN],
]

REFUSED_CODES = {"invalid_regex", "invalid_glob"}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    root = tmp_path_factory.mktemp("regex")
    minified = "var a=" + ",".join(f"x{n}=" + "a" * (n % 40) for n in range(6_000)) + ";\n"
    (root / "bundle.min.js").write_text(minified)  # one 130 KB line
    (root / "aaaa.txt").write_text(("a" * 5000 + "!\n") * 20)
    (root / "words.py").write_text(
        "".join(f"def word{n}():\n    return 'ǅ 漢字 😀 {n}'\n\n" for n in range(500))
    )
    (root / "small.txt").write_text("alpha\nbeta\n")
    return root


def check_answer(answer: dict) -> None:
    assert isinstance(answer["text"], str)
    assert len(answer["text"]) <= BUDGET, len(answer["text"])
    assert "Traceback" not in answer["text"]
    if "error" in answer:
        assert answer["error"]["code"] in REFUSED_CODES, answer["error"]
        assert answer["error"]["message"]
    else:
        assert answer["total_matches"] >= 0 and answer["stage"]


@pytest.mark.parametrize("pattern", PATTERNS, ids=[p[:40] or "empty" for p in PATTERNS])
def test_each_hostile_pattern_is_answered_within_the_budget(corpus, pattern):
    ctx = Context(Workspace([corpus]))
    check_answer(call(ctx, "search", {"pattern": pattern, "max_chars": BUDGET}))
    check_answer(call(ctx, "search", {"pattern": pattern, "max_chars": BUDGET, "ignore_case": True}))
    literal = call(ctx, "search", {"pattern": pattern, "max_chars": BUDGET, "fixed_strings": True})
    check_answer(literal)
    assert "error" not in literal  # any text is a valid fixed string


def test_refusals_name_the_problem(corpus):
    ctx = Context(Workspace([corpus]))
    for pattern in ("(", r"(?=a)b", r"(\w{500}){500}"):
        answer = call(ctx, "search", {"pattern": pattern})
        assert answer["error"]["code"] == "invalid_regex", answer
    assert call(ctx, "search", {"pattern": "a\nb"})["error"]["code"] == "invalid_regex"
    assert call(ctx, "search", {"pattern": "a\x00b"})["error"]["code"] == "invalid_regex"
    too_long = call(ctx, "search", {"pattern": "a" * (MAX_PATTERN + 1)})
    assert too_long["error"]["code"] == "invalid_regex"


def test_answers_are_right_where_a_hostile_pattern_matches(corpus):
    ctx = Context(Workspace([corpus]))
    assert call(ctx, "search", {"pattern": r"(a+)+!", "paths": ["aaaa.txt"]})["total_matches"] == 20
    assert call(ctx, "search", {"pattern": "^", "paths": ["small.txt"]})["total_matches"] == 2
    words = call(
        ctx, "search", {"pattern": "|".join(f"word{n}\\b" for n in range(500)), "paths": ["words.py"]}
    )
    assert words["total_matches"] == 500
    assert call(ctx, "search", {"pattern": r"(?i)ǆ", "paths": ["words.py"]})["total_matches"] == 500
    everything = call(ctx, "search", {"pattern": r"(?s).+", "multiline": True, "paths": ["small.txt"]})
    assert everything["total_matches"] == 1


@pytest.mark.parametrize("glob", ["**/*{", "[", "{a,{b,{c,{d}}}}", "!" * 500, "**/" * 200 + "*.py", "\\"])
def test_hostile_globs_are_answered(corpus, glob):
    ctx = Context(Workspace([corpus]))
    check_answer(call(ctx, "search", {"pattern": "a", "glob": glob, "max_chars": BUDGET}))


async def test_hostile_searches_in_flight_do_not_hold_reads_or_cancels(corpus):
    client = await RawClient.start()
    try:
        await client.initialize(corpus)
        searches = [
            client.request("lspAgent/search", {"pattern": p, "max_chars": BUDGET})
            for p in PATTERNS
            for _ in range(2)
        ]
        # reads interleaved with the searches, each answered and right
        for _ in range(20):
            answer = await client.call("lspAgent/read", {"path": "small.txt"}, timeout=30)
            assert answer["result"]["text"].endswith("1:alpha\n2:beta")
        # a cancelled search is answered as cancelled (or with its result, if it was done)
        slow_id, slow = client.request(
            "lspAgent/search", {"pattern": r"(\w+\s?)*$", "multiline": True, "max_chars": BUDGET}
        )
        client.cancel(slow_id)
        cancelled = await asyncio.wait_for(slow, 60)
        assert "result" in cancelled or cancelled["error"]["code"] == -32800, cancelled
        for _, future in searches:
            answer = await asyncio.wait_for(future, 120)
            assert "result" in answer, answer
            check_answer(answer["result"])
        assert not any("Traceback" in json.dumps(m) for m in client.received)
    finally:
        assert await client.finish() == 0


def test_a_match_line_with_a_million_submatches_is_decoded_from_its_first():
    """`.` over a minified line: rg lists every character as a submatch. Only the first is
    decoded; the rest of the message is as rg sent it."""
    text = 'x},{"match":{"text":"y"}' * 40_000
    submatches = [{"match": {"text": ch}, "start": i, "end": i + 1} for i, ch in enumerate(text)]
    message = {
        "type": "match",
        "data": {
            "path": {"text": "a.js"},
            "lines": {"text": text + "\n"},
            "line_number": 1,
            "absolute_offset": 0,
            "submatches": submatches,
        },
    }
    raw = json.dumps(message, separators=(",", ":")).encode()
    assert len(raw) > 10 * ripgrep.LONG_MESSAGE
    loaded = ripgrep.load(raw)
    assert loaded["data"]["submatches"] == submatches[:1]
    assert {k: v for k, v in loaded["data"].items() if k != "submatches"} == {
        k: v for k, v in message["data"].items() if k != "submatches"
    }
    small = json.dumps({**message, "data": {**message["data"], "submatches": submatches[:3]}}).encode()
    assert ripgrep.load(small)["data"]["submatches"] == submatches[:3]
