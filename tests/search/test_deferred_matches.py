"""Matches are judged by their lines before they are decoded: those a common pattern's answer
will not show (it turns to counts) are never made, and every answer is the one of decoding
each match as it comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.search import Query, Target, ripgrep, run_search
from lsp_agent.search.collector import Collector
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


@pytest.fixture
def corpus(tmp_path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    for n in range(40):
        body = "".join(f"def f{i}(x):\n    return x.needle + {i}  # needle\n" for i in range(150))
        (root / f"m{n}.py").write_text(body + ("rare_word = 1\n" if n % 7 == 0 else ""))
    return root


def answers(root: Path, patterns: list[str], monkeypatch, *, lazy: bool) -> tuple[list[dict], int]:
    made = 0
    real = ripgrep.record

    def counted(data):
        nonlocal made
        made += 1
        return real(data)

    monkeypatch.setattr(ripgrep, "record", counted)
    if not lazy:  # each match decoded as it comes, as before
        monkeypatch.setattr(ripgrep.Pending, "__init__", lambda self, lazy: original(self, False))
    ctx = Context(Workspace([root]))
    found = [call(ctx, "search", {"pattern": p, **extra}) for p, extra in patterns]
    monkeypatch.undo()
    return found, made


original = ripgrep.Pending.__init__
PATTERNS = [
    ("needle", {}),  # 12,000 matches: counts
    ("rare_word", {}),  # a few: shown whole
    ("return", {}),  # 6,000: line numbers or counts
    ("needle", {"offset": 10, "limit": 5}),  # a page: every match kept
    ("needle", {"context_after": 1, "max_chars": 3000}),
    ("f1\\d", {"output": "files"}),
]


def test_answers_are_those_of_decoding_every_match(corpus, monkeypatch):
    lazy, made_lazily = answers(corpus, PATTERNS, monkeypatch, lazy=True)
    eager, made_eagerly = answers(corpus, PATTERNS, monkeypatch, lazy=False)
    assert lazy == eager
    assert made_lazily < made_eagerly


def test_a_common_pattern_s_matches_are_not_decoded_once_only_counts_can_be_shown(corpus, monkeypatch):
    """(Made only when looked at: none is made while rg writes nothing, as it can be then.)"""
    monkeypatch.setattr(Collector, "make_some", lambda self: False)
    found, made = answers(corpus, [("needle", {})], monkeypatch, lazy=True)
    assert found[0]["total_matches"] == 12_000 and found[0]["locations"] is None  # counts only
    assert made == 0


@pytest.mark.parametrize("multiline", [False, True])
def test_records_skipped_uncounted_are_the_files_matched_lines(tmp_path, multiline):
    """Once counts alone are kept, a file's other match records are skipped without counting
    their lines where each is one line (its end record says how many): every file's records
    are still ripgrep's count of them, across a switch in mid-file and hand-offs of CHUNK
    records; a multiline search counts them as it skips."""
    root = tmp_path / "ws"
    root.mkdir()
    for n, lines in enumerate((3, 700, 1300)):
        (root / f"f{n}.txt").write_text("x needle y\n" * lines + "none\n")
    seen = 0

    def keep(_entry, spans, _new) -> bool:
        nonlocal seen
        seen += len(spans)
        return seen < 100

    query = Query("needle", multiline=multiline)
    outcome = run_search(Workspace([root]), query, [Target(root, [""])], keep_details=keep)
    assert not outcome.detailed
    assert {f.path.name: f.count for f in outcome.files} == {"f0.txt": 3, "f1.txt": 700, "f2.txt": 1300}
    assert outcome.total == outcome.lines == 2003
