"""The search benchmark on a tiny corpus: rg, ours in process, ours over LSP stdio and Serena
answer in the same rounds, and the report reads their answers and judges the targets from the
figures it prints. Nothing here asserts a time."""

from __future__ import annotations

import asyncio

import pytest

from benchmarks.bench_search import (
    CALLERS,
    SERENA_VENV,
    Figures,
    located,
    measure,
    reports,
    serena_located,
)

CART = """import os


class Cart:
    def add(self, item):
        self.items.append(item)

    def total(self):
        return sum(i.price for i in self.items)


def helper():
    return os.getcwd()
"""


def figures(kind: str, walls: dict[str, float]) -> Figures:
    f = Figures("corpus", kind, "pattern", {}, "", {})
    for caller, wall in walls.items():
        f.wall[caller], f.cpu[caller] = [wall], [wall]
    return f


def test_verdicts_judge_in_process_and_over_stdio_apart():
    f = figures("rare", {"rg": 0.010, "in process": 0.012, "stdio": 0.020, "serena": 0.150})
    assert f.ratio("serena", "in process") == pytest.approx(12.5)
    assert f.verdicts() == "ours ≤ 1.5× rg: met / not met; Serena ≥ 10× ours: met / not met"
    f = figures("very common", {"rg": 0.1, "in process": 0.2, "stdio": 0.25, "serena": 3.0})
    assert f.verdicts() == "ours ≤ 3.0× rg: met; Serena ≥ 10× ours: met"
    f = figures("common", {"rg": 0.1, "in process": 0.2, "stdio": 0.25, "serena": 1.0})
    assert f.verdicts() == "Serena ≥ 10× ours: not met"  # no rg target for a common pattern


def test_located_reads_symbols_and_line_numbers_from_our_stages(ws, run):
    (ws.roots[0] / "a.py").write_text(CART)
    full = run("search", pattern="self|def helper", max_chars=2000)
    assert full["stage"] == 1
    assert located(full["text"], 1) == (4, 5)  # `def helper` is at module level: a line, no symbol
    numbers = run("search", pattern="self|def helper", max_chars=200)
    assert numbers["stage"] == 4
    assert located(numbers["text"], 4) == (5, 5)  # here `helper` names the definition on its line


@pytest.mark.skipif(
    not (SERENA_VENV / "bin" / "python").exists(),
    reason="Serena's environment is made by `make bench BENCH=search`",
)
def test_a_tiny_corpus_through_every_caller(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text(CART)
    found = asyncio.run(measure("tiny", tmp_path, [("rare", "helper"), ("very common", "self")], repeat=2))

    rare, common = found
    assert [f.pattern for f in found] == ["helper", "self"]
    for f in found:
        assert all(len(f.wall[c]) == len(f.cpu[c]) == 2 for c in CALLERS)
        assert all(wall > 0 for c in CALLERS for wall in f.wall[c])
    assert (rare.answer["total_matches"], common.answer["total_matches"]) == (1, 4)
    assert located(rare.answer["text"], rare.answer["stage"]) == (0, 1)
    assert located(common.answer["text"], common.answer["stage"]) == (4, 4)
    assert serena_located(common.serena_text) == ("full matches", 4)
    assert serena_located(rare.serena_text) == ("full matches", 1)

    speed, cpu, where = reports(found, "start", "end")
    assert [row[:4] for row in speed.rows] == [
        ["tiny", "helper", "rare", 1],
        ["tiny", "self", "very common", 4],
    ]
    assert speed.rows[1][-1].startswith("ours ≤ 3.0× rg: ")
    assert "Medians of 2 rounds" in speed.notes[0]
    assert [row[4:6] for row in where.rows] == [[0, 1], [4, 4]]
    assert len(cpu.rows) == 2
