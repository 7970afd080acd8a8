"""The first search of a freshly started server whose symbol index loads warm from disk: its
labels taken from the index's records (this tree) against labels from parsing every file the
answer shows (the tree of BEFORE, the last commit that labelled from outlines only), side by
side in one run.

    python -m benchmarks.bench_first_search       (or: make bench BENCH=first_search)

Both servers are `python -m lsp_agent serve` over LSP stdio, driven by benchmarks/common.py's
client; the earlier one runs from its commit's package, extracted with `git archive`
(BENCH_BEFORE=<commit> picks another). Each has its own index cache folder, built by one
untimed start. Then, in each round and for each pattern, each server is started afresh (in
alternating order), waits for its index (warm: nothing is parsed), and its first `lspAgent/search`
is timed as the client sees it, then a second one of the same pattern (every label cached).
The answers of the two must be identical.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import tempfile
import time
from pathlib import Path

from benchmarks.bench_search import stdlib_copy
from benchmarks.common import Client, Report, django_tree, source_tree, the_run

BEFORE = os.environ.get("BENCH_BEFORE", "372dda8")
ROUNDS = 5
BUDGET = 20_000  # the default max_chars
PATTERNS = {"django": ["queryset", "self"], "stdlib": ["import os", "self"]}
WAYS = ("outlines (before)", "index (after)")


async def first_searches(
    root: Path, cache: str, code: Path | None, pattern: str
) -> tuple[dict, float, float]:
    """(the first answer, seconds of the first search, seconds of a second one) of a fresh
    server once its index is loaded."""
    client = await Client.start(root, cache, code)
    try:
        await asyncio.wait_for(client.indexed.wait(), 600)
        arguments = {"pattern": pattern, "max_chars": BUDGET}
        started = time.perf_counter()
        answer = await client.request("lspAgent/search", arguments)
        first = time.perf_counter() - started
        second = await client.timed("lspAgent/search", arguments)
    finally:
        await client.stop()
    assert isinstance(answer, dict)
    return answer, first, second


async def warm_up(root: Path, cache: str, code: Path | None) -> None:
    """One start that builds the index and saves it to `cache`."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 600)
    await client.stop()


def measure(corpus: str, root: Path, before: Path) -> list[list[object]]:
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as old_cache, tempfile.TemporaryDirectory() as new_cache:
        ways = {WAYS[0]: (old_cache, before), WAYS[1]: (new_cache, None)}
        for cache, code in ways.values():
            asyncio.run(warm_up(root, cache, code))
        for pattern in PATTERNS[corpus]:
            first: dict[str, list[float]] = {way: [] for way in WAYS}
            second: dict[str, list[float]] = {way: [] for way in WAYS}
            answers: dict[str, dict] = {}
            for n in range(ROUNDS):
                for way in WAYS if n % 2 == 0 else reversed(WAYS):
                    answer, once, again = asyncio.run(first_searches(root, *ways[way], pattern))
                    if answers.setdefault(way, answer) != answer:
                        raise RuntimeError(
                            f"{pattern!r}: {way} answered differently from one start to the next"
                        )
                    first[way].append(once)
                    second[way].append(again)
            if answers[WAYS[0]] != answers[WAYS[1]]:
                raise RuntimeError(f"{pattern!r}: labels from the index differ from labels from outlines")
            answer = answers[WAYS[1]]
            old, new = (statistics.median(first[way]) for way in WAYS)
            rows.append([
                corpus, pattern, answer["total_matches"], f"{answer['stage']}: {answer['stage_name']}",
                old, new, f"{old / new:.2f}×", statistics.median(second[WAYS[0]]), statistics.median(second[WAYS[1]]),
            ])  # fmt: skip
            print(f"{corpus} {pattern!r}: first {first}, second {second}", flush=True)
    return rows


def main() -> None:
    corpora = {"django": django_tree(), "stdlib": stdlib_copy()}
    started = the_run()
    report = Report(
        "first_search",
        "The first search after a warm start: labels from outlines (before) vs from the index (after)",
        [
            "corpus",
            "pattern",
            "matches",
            "stage",
            "first search, before (s)",
            "first search, after (s)",
            "before ÷ after",
            "second search, before (s)",
            "second search, after (s)",
        ],
    )
    with tempfile.TemporaryDirectory() as folder:
        before = source_tree(BEFORE, Path(folder))
        for corpus, root in corpora.items():
            for row in measure(corpus, root, before):
                report.add(*row)
    report.note(
        f"Run from {started} to {the_run()}; before: commit {BEFORE}. Medians of {ROUNDS} fresh "
        "server starts per way and pattern (alternating which starts first), each timed as the "
        "client sees it (LSP stdio), after the server's index has loaded from its cache folder; "
        "the second search repeats the first in the same server. Answers identical."
    )
    report.write()


if __name__ == "__main__":
    main()
