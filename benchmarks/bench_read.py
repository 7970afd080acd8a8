"""Paged read of TypeScript's 9 MB lib/typescript.js from start to end, against one plain
read of the file plus a line split. Linear paging keeps the ratio small and constant; a
reader that re-scanned the file for every page would be hundreds of times slower."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
import time
from pathlib import Path

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

from .common import Report, median, timed, typescript_js


def plain_read(path: Path) -> int:
    return len(path.read_bytes().decode("utf-8").split("\n"))


def numbered_read(path: Path) -> int:
    """The least any numbered read must do: read, split, and number every line once."""
    lines = path.read_bytes().decode("utf-8").split("\n")
    return len("\n".join(f"{n:>6}  {line}" for n, line in enumerate(lines, 1)))


def paged_read(path: Path, budget: int) -> tuple[int, list[float]]:
    """Every page from start=1, with a new workspace (cold line index) each run."""
    ctx = Context(Workspace([path.parent]))
    arguments: dict = {"path": path.name, "max_chars": budget}
    pages, page_times = 0, []
    while True:
        started = time.perf_counter()
        answer = call(ctx, "read", arguments)
        page_times.append(time.perf_counter() - started)
        pages += 1
        if answer["next"] is None:
            return pages, page_times
        arguments = {"path": path.name, "max_chars": budget, **answer["next"]}


async def paged_over_stdio(path: Path, budget: int) -> int:
    from lsp_agent.demo import Session

    async with Session(path.parent) as agent:
        arguments: dict = {"path": str(path), "max_chars": budget}
        pages = 0
        while True:
            answer = await agent.call("read", **arguments)
            assert "error" not in answer, answer["text"]
            pages += 1
            if answer["next"] is None:
                return pages
            arguments = {"path": str(path), "max_chars": budget, **answer["next"]}


def main() -> None:
    path = typescript_js()
    size = path.stat().st_size
    lines = plain_read(path)
    report = Report(
        "read",
        f"Paged read of typescript.js ({size / 1e6:.1f} MB, {lines:,} lines)",
        ["what", "pages", "median s", "× plain read"],
    )
    floor = median(timed(lambda: plain_read(path), repeat=5))
    report.add("plain read + split", 1, floor, 1.0)
    numbered = median(timed(lambda: numbered_read(path), repeat=5))
    report.add("plain read + split + number every line", 1, numbered, numbered / floor)
    totals = {}
    for budget in (20_000, 5_000):
        runs = [paged_read(path, budget) for _ in range(3)]
        total = totals[budget] = median([sum(t) for _, t in runs])
        pages, page_times = runs[0]
        report.add(f"read, max_chars={budget:,}", pages, total, total / floor)
        tenth = max(1, len(page_times) // 10)
        early, late = median(page_times[1 : tenth + 1]), median(page_times[-tenth:])
        report.note(
            f"max_chars={budget:,}: median page {early * 1e3:.2f} ms in the first tenth, "
            f"{late * 1e3:.2f} ms in the last tenth (flat = linear); "
            f"first page (builds the line index) {page_times[0] * 1e3:.1f} ms"
        )
    with tempfile.TemporaryDirectory() as alone:  # a workspace of this one file: no other work
        copy = Path(shutil.copy(path, alone))
        started = time.perf_counter()
        pages = asyncio.run(paged_over_stdio(copy, 20_000))
        stdio = time.perf_counter() - started
    report.add("read over LSP stdio, max_chars=20,000", pages, stdio, stdio / floor)
    report.note("Target: the in-process paged read within 3x of the plain read (linear, not quadratic).")
    report.note(
        f"Against a read that also numbers every line once, the paged read at max_chars=20,000 "
        f"takes {totals[20_000] / numbered:.2f}x."
    )
    report.write(chart=("what", "× plain read"))


if __name__ == "__main__":
    main()
