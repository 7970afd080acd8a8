"""The first-search benchmark on a tiny corpus: a server from another commit's tree (here
HEAD's, extracted) and one from this tree each build their index once, then answer their first
search after warm starts, with identical answers. Nothing here asserts a time."""

from __future__ import annotations

import pytest

from benchmarks import bench_first_search
from benchmarks.common import source_tree
from lsp_agent.search import find_rg


@pytest.mark.skipif(find_rg() is None, reason="no rg")
def test_the_benchmark_times_both_trees_on_a_tiny_corpus(tmp_path, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for n in range(3):
        (corpus / f"m{n}.py").write_text(f"class Model{n}:\n    def save(self):\n        return {n}\n")
    monkeypatch.setattr(bench_first_search, "ROUNDS", 1)
    monkeypatch.setattr(bench_first_search, "PATTERNS", {"tiny": ["def save"]})
    (tree := tmp_path / "before").mkdir()
    before = source_tree("HEAD", tree)
    assert (before / "lsp_agent" / "tools" / "search.py").is_file()
    (row,) = bench_first_search.measure("tiny", corpus.resolve(), before)
    assert row[:4] == ["tiny", "def save", 3, "1: full matches"]
    assert all(isinstance(seconds, float) and seconds > 0 for seconds in row[4:6] + row[7:])
