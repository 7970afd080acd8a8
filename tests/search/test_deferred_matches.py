"""Matches are judged by their lines before they are made (decoded from rg's JSON, or read
from the file for its plain output): those a common pattern's answer will not show (it turns
to counts) are never made, and every answer is the one of the JSON engine decoding each match
as it comes."""

from __future__ import annotations

from pathlib import Path

import pytest

from lsp_agent.search import Query, Target, plain, ripgrep, run_search
from lsp_agent.search.collector import Collector
from lsp_agent.search.model import FileMatches
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
    decoded, read = ripgrep.record, plain.located_matches

    def counted(data):
        nonlocal made
        made += 1
        return decoded(data)

    def located(*args):
        nonlocal made
        found = read(*args)
        made += len(found)
        return found

    monkeypatch.setattr(ripgrep, "record", counted)
    monkeypatch.setattr(plain, "located_matches", located)
    if not lazy:  # rg's JSON, each match decoded as it comes, as before
        monkeypatch.setattr(ripgrep.Pending, "__init__", lambda self, lazy: original(self, False))
        monkeypatch.setattr(ripgrep.RipgrepEngine, "__init__", json_only)
    ctx = Context(Workspace([root]))
    found = [call(ctx, "search", {"pattern": p, **extra}) for p, extra in patterns]
    monkeypatch.undo()
    return found, made


original = ripgrep.Pending.__init__
engine = ripgrep.RipgrepEngine.__init__


def json_only(self, rg: str, query: Query) -> None:
    engine(self, rg, query)
    self.plain = False


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


@pytest.mark.parametrize("multiline, before", [(False, 0), (False, 1), (True, 0)])
def test_records_skipped_uncounted_are_the_files_matched_lines(tmp_path, multiline, before):
    """Once counts alone are kept, a file's other match records are skipped without counting
    their lines where each is one line (its end record says how many): every file's records
    are still ripgrep's count of them, across a switch in mid-file and hand-offs of CHUNK
    records; a multiline search counts them as it skips (both rg's JSON, for context lines
    and multiline); its plain output counts them too."""
    root = tmp_path / "ws"
    root.mkdir()
    for n, lines in enumerate((3, 700, 1300)):
        (root / f"f{n}.txt").write_text("x needle y\n" * lines + "none\n")
    seen = 0

    def keep(_entry, spans, _new) -> bool:
        nonlocal seen
        seen += len(spans)
        return seen < 100

    query = Query("needle", multiline=multiline, before=before)
    outcome = run_search(Workspace([root]), query, [Target(root, [""])], keep_details=keep)
    assert not outcome.detailed
    assert {f.path.name: f.count for f in outcome.files} == {"f0.txt": 3, "f1.txt": 700, "f2.txt": 1300}
    assert outcome.total == outcome.lines == 2003


def test_symbols_are_got_ahead_for_the_first_files_only(tmp_path, monkeypatch):
    """While rg runs, the enclosing symbols of the first PREFETCHED_FILES files with matches
    that may be shown are got; a pattern found in more files is most often shown as counts.
    Past them, or once the matches will not be shown, it wants no more files."""
    from lsp_agent.tools import search

    paths = []
    for n in range(search.PREFETCHED_FILES + 12):
        path = tmp_path / f"m{n}.py"
        path.write_text(f"def f{n}():\n    return {n}\n")
        paths.append(path.resolve())
    warmed, warm = [], search.LINE_SYMBOLS.warm
    monkeypatch.setattr(search.LINE_SYMBOLS, "warm", lambda ws, path, index: warmed.append(path) or warm(ws, path, index))  # fmt: skip
    prefetch = search.symbols_ahead(Context(Workspace([tmp_path])))
    first = FileMatches(str(paths[0]), paths[0].name)
    assert prefetch(first, False) is False  # its matches will not be shown: nothing got, but it counts
    wanted = [prefetch(FileMatches(str(path), path.name), True) for path in paths[1:]]
    assert warmed == paths[1 : search.PREFETCHED_FILES]
    assert wanted == [n < search.PREFETCHED_FILES for n in range(2, len(paths) + 1)]


def test_matches_are_made_ahead_only_while_the_pattern_looks_rare(tmp_path):
    """While rg writes nothing, the matches kept are made (read from their file) only until
    MADE_AHEAD records have come: past them a pattern's answer is most often counts, which
    makes none; those still kept are made when looked at."""
    from lsp_agent.search import collector

    made: list[int] = []
    sink = Collector(Workspace([tmp_path]), lambda *_: True, set())

    def part(n: int, records: int) -> None:
        sink.add(str(tmp_path / f"f{n}.py"), lambda: made.append(n) or [], {}, records, lines=[1])

    part(0, collector.MADE_AHEAD // 2)
    part(1, collector.MADE_AHEAD // 2)
    assert sink.make_some() and sink.make_some() and made == [0, 1]  # 1,000 records: rare enough
    part(2, 1)
    assert not sink.make_some() and made == [0, 1]  # 1,001: left for when they are looked at
    sink.made()
    assert made == [0, 1, 2]
