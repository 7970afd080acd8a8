"""Fast where agents wait (issue 28): each figure beside its anchor in one run, on Django
5.2.8 (PyPI sdist) and the monorepo of bench_scale (8 Django copies, rxjs, jQuery and this
interpreter's standard library).

- overview over a warm server against `ctags -R` (Debian's universal-ctags): its first call
  (ranking every file) beside one ctags run, then asked again (the ranking remembered, each
  file's stat checked) alternating with ctags; the server's peak memory;
- CLI one-shots (after a server saved its index, whose records `search` and `find-symbol`
  take): `search` against `rg -n`, `find-symbol` against `rg -nw`, runs alternating (medians of
  each, and of the ratio pair by pair); alone (no server running), and asking the server that
  is running for the same roots (local.py); the interpreter's own start beside them. The
  package's modules are compiled to bytecode first, as an install from a wheel has them (with
  PYTHONDONTWRITEBYTECODE set, an editable install would compile every module at each start);
- search over a warm server against `rg -n` in a subprocess, per pattern class;
- a read and a documentSymbol after an edit while 8 heavy calls run, against the same idle;
- definition by name over a warm server;
- the server's memory after a warm start against after a cold build.

The load (`uptime`) is noted beside each workspace's figures: the cores are shared.
`python -m benchmarks speed` runs both; `BENCH_SPEED_SCALES=django` picks one;
`BENCH_SPEED_PARTS=overview` measures overview alone (its calls, the server's and its
worker's peak memory; with `BENCH_SPEED_BEFORE=<commit>` beside that commit's first call);
`BENCH_SPEED_PARTS=cli` the CLI one-shots alone (a server's cold build
saves the index; asked while it runs, then alone after it stopped); `BENCH_SPEED_PARTS=references`, references on a common name alone
(its first ask on a warm server and asked again, against `rg -nw`), with
`BENCH_SPEED_BEFORE=<commit>` beside a server run from that commit's package;
`BENCH_SPEED_PARTS=load` the read and the documentSymbol after an edit
while 8 heavy calls run, over a warm server, and the read while a cold index builds (then its
use tables), with `BENCH_SPEED_BEFORE=<commit>` beside the same
from that commit's package (runs alternating, BENCH_SPEED_ROUNDS of each, default 2;
BENCH_SPEED_AFTER=<commit>: that commit's package instead of this tree);
`BENCH_SPEED_PARTS=definition` the warm start's memory against the cold
build's and definition alone (by name and from a use, over the server, first call and again, and
as a CLI one-shot; with `BENCH_SPEED_BEFORE=<commit>` beside that commit's server, the warm runs
alternating, BENCH_SPEED_ROUNDS of each, default 2);
`BENCH_SPEED_PARTS=typing` documentSymbol after an edit alone (while a
cold index builds, idle, and under the 8 heavy calls), with `BENCH_SPEED_BASELINE=<commit>`
beside that commit's server, runs alternating.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import lsp_agent
from benchmarks.bench_scale import BIG_FILE_LINES, CTAGS_LANGUAGES, big_file, p99, workspace
from benchmarks.common import Client, Report, source_tree, the_run
from lsp_agent.search import find_rg

SCALES = ["django", "monorepo"]
RUNS = 5
NAME = "get_response"  # defined in every Django copy
METHOD = "save"  # a common method name: models, forms, sessions, the standard library
METHOD_USE = ("django/contrib/auth/forms.py", 154, "user.save()")  # a use of it, receiver untyped
# Search patterns by class: rare (a few dozen lines), common (thousands), very common.
PATTERNS = {"rare": "get_response", "common": "self\\.assert", "very common": "self"}
HEAVY = [
    ("lspAgent/overview", {}),
    ("lspAgent/references", {"name": "filter"}),
    ("lspAgent/search", {"pattern": "self", "max_chars": 8000}),
    ("lspAgent/search", {"pattern": "def ", "max_chars": 8000}),
] * 2  # 8 heavy calls at once
CLI = [sys.executable, "-m", "lsp_agent"]


def load() -> str:
    return "{:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def wall(command: list[str], cwd: Path, env: dict | None = None) -> float:
    started = time.perf_counter()
    subprocess.run(
        command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False
    )
    return time.perf_counter() - started


def alternating(a, b, runs: int = RUNS) -> tuple[float, float, float]:
    """Medians of a, of b and of a/b, the two run in turn (a b a b …) after one warm-up each."""
    a(), b()
    pairs = [(a(), b()) for _ in range(runs)]
    return (
        statistics.median(x for x, _ in pairs),
        statistics.median(y for _, y in pairs),
        statistics.median(x / y for x, y in pairs),
    )


def ctags_command(root: Path, tags: str) -> list[str]:
    if shutil.which("ctags") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "universal-ctags"], check=True)
    return ["ctags", "-R", f"--languages={CTAGS_LANGUAGES}", "-f", tags, str(root)]


def memory_mib(client: Client, field: str = "VmHWM") -> float:
    """The server's resident memory (VmRSS) or its peak so far (VmHWM), from /proc."""
    with open(f"/proc/{client.process.pid}/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field + ":")) / 1024


def alternating_lsp(client: Client, method: str, params: dict, anchor, runs: int = RUNS):
    """Like alternating, for a request over the server against a subprocess anchor."""
    loop = asyncio.get_running_loop()

    async def run() -> tuple[float, float, float]:
        await client.request(method, params)
        await loop.run_in_executor(None, anchor)
        pairs = []
        for _ in range(runs):
            x = await client.timed(method, params)
            y = await loop.run_in_executor(None, anchor)
            pairs.append((x, y))
        return (
            statistics.median(x for x, _ in pairs),
            statistics.median(y for _, y in pairs),
            statistics.median(x / y for x, y in pairs),
        )

    return run()


async def under_load(client: Client, light, samples: int = 40, *, cancel_rest: bool = False, pace: float = 0.0) -> list[float]:  # fmt: skip
    """Latencies of `light()` (a coroutine making one request) while the 8 heavy calls run:
    each sampled `pace` seconds after the last answered, until the heavy calls end or
    `samples`; then the heavy calls are waited for, or with `cancel_rest` cancelled
    ($/cancelRequest)."""
    loop = asyncio.get_running_loop()
    heavy = {}
    for method, params in HEAVY:
        n = next(client.ids)
        heavy[n] = client.pending[n] = loop.create_future()
        client.send({"id": n, "method": method, "params": params})
    await asyncio.sleep(0.05)  # the heavy calls have started
    times = []
    while len(times) < samples and not all(h.done() for h in heavy.values()):
        times.append(await light())
        await asyncio.sleep(pace)
    for n, future in heavy.items():
        if cancel_rest and not future.done():
            client.notify("$/cancelRequest", {"id": n})
    await asyncio.gather(*heavy.values(), return_exceptions=True)
    for n in heavy:
        del client.pending[n]
    return times


async def server_figures(root: Path, cache: str) -> dict:
    rg = find_rg()
    assert rg is not None
    figures: dict[str, str] = {}
    # a cold build, then a warm start from what it saved
    client = await Client.start(root, cache)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    cold = memory_mib(client, "VmRSS")
    await client.stop()
    client = await Client.start(root, cache)
    started = time.perf_counter()
    await asyncio.wait_for(client.indexed.wait(), 1800)
    ready = time.perf_counter() - started
    warm = memory_mib(client, "VmRSS")
    figures["warm start / cold build, server memory MiB"] = f"{warm:.0f} / {cold:.0f} ({warm / cold:.2f}×; ready in {ready:.1f} s)"  # fmt: skip

    with tempfile.TemporaryDirectory() as tmp:
        tags = ctags_command(root, f"{tmp}/tags")
        wall(tags, root)  # ctags' files in the page cache, as the server's are
        first = await client.timed("lspAgent/overview", {})
        first_tags = wall(tags, root)
        ours, theirs, ratio = await alternating_lsp(
            client, "lspAgent/overview", {}, lambda: wall(tags, root), runs=3
        )
    figures["overview, first call (warm server) / ctags -R right after, s"] = f"{first:.2f} / {first_tags:.2f} = {first / first_tags:.2f}×"  # fmt: skip
    figures["overview again, nothing changed (remembered ranking) / ctags -R, s"] = f"{ours:.2f} / {theirs:.2f} = {ratio:.2f}×"  # fmt: skip
    figures["  server peak memory after overview, MiB"] = f"{memory_mib(client):.0f}"

    for kind, pattern in PATTERNS.items():
        params = {"pattern": pattern}
        ours, theirs, ratio = await alternating_lsp(
            client, "lspAgent/search", params, lambda pattern=pattern: wall([rg, "-n", pattern, "."], root)
        )
        figures[f"search {kind} {pattern!r} (server) / rg -n, ms"] = f"{ours * 1000:.0f} / {theirs * 1000:.0f} = {ratio:.2f}×"  # fmt: skip

    definition = [await client.timed("lspAgent/definition", {"name": NAME}) for _ in range(7)]
    figures[f"definition {NAME!r} (warm server), median ms"] = f"{statistics.median(definition) * 1000:.0f}"

    read = {"path": "big_module.py", "start": 4000, "max_chars": 2000}
    idle = [await client.timed("lspAgent/read", read) for _ in range(20)]
    busy = await under_load(client, lambda: client.timed("lspAgent/read", read))
    busy_p50, busy_p99, idle_p50 = (
        statistics.median(busy) * 1000,
        p99(busy) * 1000,
        statistics.median(idle) * 1000,
    )
    figures["read 2,000 chars while 8 heavy calls run, p50 / p99 ms"] = (
        f"{busy_p50:.0f} / {busy_p99:.0f} (idle p50 {idle_p50:.0f}; {len(busy)} reads)"
    )
    figures[f"documentSymbol after an edit ({BIG_FILE_LINES:,} lines) while 8 heavy calls run, p50 / p99 ms"] = await typing_under_load(client, root)  # fmt: skip
    asked = await asyncio.get_running_loop().run_in_executor(
        None, cli_figures, root, cache, "asking the server"
    )
    await client.stop()
    return figures | asked


async def cli_part(root: Path, cache: str) -> dict:
    """The CLI one-shots alone: asking a server that built and saved the index, then with none."""
    client = await Client.start(root, cache)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    asked = await asyncio.get_running_loop().run_in_executor(
        None, cli_figures, root, cache, "asking the server"
    )
    await client.stop()
    return asked


async def typing_under_load(client: Client, root: Path, **load: Any) -> str:
    idle, busy, _ = await typing_times(client, root, **load)
    return f"{statistics.median(busy) * 1000:.0f} / {p99(busy) * 1000:.0f} (idle p50 {statistics.median(idle) * 1000:.0f}; {len(busy)} edits)"  # fmt: skip


def typist(client: Client, root: Path):
    """Opens the big file and returns a coroutine function: one edit (a character typed or
    taken back on one line), then documentSymbol, timed."""
    path = big_file(root)
    uri = path.as_uri()
    lines = path.read_text(encoding="utf-8").split("\n")
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "\n".join(lines)}})  # fmt: skip
    row = next(n for n in range(BIG_FILE_LINES // 2, BIG_FILE_LINES) if lines[n].startswith("        return"))
    version = iter(range(2, 10**6))

    async def edit_then_outline() -> float:
        n = next(version)
        end = 9 if n % 2 else 8
        change = {"range": {"start": {"line": row, "character": 8}, "end": {"line": row, "character": end}}, "text": "" if n % 2 else "x"}  # fmt: skip
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n}, "contentChanges": [change]})  # fmt: skip
        return await client.timed("textDocument/documentSymbol", {"textDocument": {"uri": uri}})

    return edit_then_outline


async def typing_times(client: Client, root: Path, rounds: int = 1, **load: Any) -> tuple[list[float], list[float], float]:  # fmt: skip
    """documentSymbol after an edit: idle, and while the 8 heavy calls run (`rounds` times);
    and the CPU the server spent on each idle edit and documentSymbol."""
    edit_then_outline = typist(client, root)
    await client.request("textDocument/documentSymbol", {"textDocument": {"uri": big_file(root).as_uri()}})
    cpu = client.cpu_seconds()
    idle = [await edit_then_outline() for _ in range(20)]
    cpu = (client.cpu_seconds() - cpu) / len(idle)
    busy = []
    for _ in range(rounds):
        busy += await under_load(client, edit_then_outline, **load)
    client.notify("textDocument/didClose", {"textDocument": {"uri": big_file(root).as_uri()}})
    return idle, busy, cpu


async def typing_once(root: Path, code: Path | None) -> dict[str, list[float]]:
    """One server from an empty cache: typing while its cold index builds, then idle and
    under load."""
    with tempfile.TemporaryDirectory() as cache:
        client = await Client.start(root, cache, code)
        edit_then_outline = typist(client, root)
        await client.request(
            "textDocument/documentSymbol", {"textDocument": {"uri": big_file(root).as_uri()}}
        )
        cold: list[float] = []
        while not client.indexed.is_set() and len(cold) < 400:
            cold.append(await edit_then_outline())
        client.notify("textDocument/didClose", {"textDocument": {"uri": big_file(root).as_uri()}})
        await asyncio.wait_for(client.indexed.wait(), 1800)
        idle, busy, cpu = await typing_times(client, root, rounds=2)
        await client.stop()
    return {"while a cold index builds": cold, "idle": idle, "while 8 heavy calls run": busy, "CPU": [cpu]}


async def typing_figures(root: Path) -> dict:
    """documentSymbol after an edit alone (issue 28 item 4), beside BENCH_SPEED_BASELINE's
    server when set (two runs each, alternating; samples pooled)."""
    baseline = os.environ.get("BENCH_SPEED_BASELINE")
    with tempfile.TemporaryDirectory() as tmp:
        servers: dict[str, Path | None] = {"this": None}
        if baseline:
            servers = {baseline: source_tree(baseline, Path(tmp)), "this": None}
        pooled: dict[tuple[str, str], list[float]] = {}
        for _ in range(2 if baseline else 1):
            for name, code in servers.items():
                for when, times in (await typing_once(root, code)).items():
                    pooled.setdefault((when, name), []).extend(times)
    figures = {}
    for (when, name), times in pooled.items():
        if when == "CPU":
            figure = f"  server CPU per edit and documentSymbol (idle), {name}, ms (each run)"
            figures[figure] = " / ".join(f"{t * 1000:.1f}" for t in times)
            continue
        figure = f"documentSymbol after an edit ({BIG_FILE_LINES:,} lines) {when}, {name}, p50 / p99 ms"
        figures[figure] = (
            f"{statistics.median(times) * 1000:.1f} / {p99(times) * 1000:.1f} ({len(times)} edits)"
        )
    return figures


def cli_figures(root: Path, cache: str, how: str = "alone") -> dict:
    """One-shot commands with the index the server saved, against ripgrep: `alone`, or
    asking the server running for the same roots."""
    rg = find_rg()
    assert rg is not None
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(lsp_agent.__file__).parent)], check=True
    )
    env = {**os.environ, "LSP_AGENT_CACHE_DIR": cache} | (
        {"LSP_AGENT_NO_SERVER": "1"} if how == "alone" else {}
    )
    figures = {}
    if how == "alone":
        for start in (["-c", "pass"], ["-S", "-c", "pass"]):
            a, b, ratio = alternating(
                lambda start=start: wall([sys.executable, *start], root),
                lambda: wall([rg, "-n", NAME, "."], root),
            )
            figures[f"floor: python {' '.join(start)} / rg -n {NAME}, ms"] = f"{a * 1000:.0f} / {b * 1000:.0f} = {ratio:.2f}×"  # fmt: skip
    for name, ours, theirs in [
        ("search", [*CLI, "search", NAME], [rg, "-n", NAME, "."]),
        ("search", [*CLI, "search", "self\\.assert"], [rg, "-n", "self\\.assert", "."]),
        ("find-symbol", [*CLI, "find-symbol", NAME], [rg, "-nw", NAME, "."]),
    ]:
        a, b, ratio = alternating(
            lambda ours=ours: wall(ours, root, env), lambda theirs=theirs: wall(theirs, root)
        )
        figures[f"CLI {name} {ours[-1]!r} ({how}) / {' '.join(theirs[1:3])}, ms"] = f"{a * 1000:.0f} / {b * 1000:.0f} = {ratio:.2f}×"  # fmt: skip
    return figures


def descendants_peak_mib(pid: int) -> float:
    """The largest peak resident memory (VmHWM) among a process's descendants: the worker
    process overview runs in (the server's own figure leaves it out)."""
    peak, stack = 0.0, [pid]
    while stack:
        parent = stack.pop()
        try:
            children = [
                c
                for task in Path(f"/proc/{parent}/task").iterdir()
                for c in (task / "children").read_text().split()
            ]
        except OSError:
            continue
        for child in map(int, children):
            stack.append(child)
            try:
                status = Path(f"/proc/{child}/status").read_text()
            except OSError:
                continue
            peak = max(peak, next((int(line.split()[1]) / 1024 for line in status.splitlines() if line.startswith("VmHWM:")), 0.0))  # fmt: skip
    return peak


async def overview_figures(root: Path, cache: str) -> dict:
    """overview alone (issue 28 item 1): over a server warm-started from the index a cold
    build saved, its first call beside ctags -R right after, then again (nothing changed)
    alternating with ctags, and the peak memory of the server and of overview's worker.
    With BENCH_SPEED_BEFORE=<commit>, first calls of that commit's tree and of this one
    besides, in turn, each over a fresh warm server (BENCH_SPEED_ROUNDS rounds)."""
    figures: dict[str, str] = {}
    client = await Client.start(root, cache)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    await client.stop()
    client = await Client.start(root, cache)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    with tempfile.TemporaryDirectory() as tmp:
        tags = ctags_command(root, f"{tmp}/tags")
        wall(tags, root)  # ctags' files in the page cache, as the server's are
        first = await client.timed("lspAgent/overview", {})
        first_tags = wall(tags, root)
        ours, theirs, ratio = await alternating_lsp(
            client, "lspAgent/overview", {}, lambda: wall(tags, root), runs=3
        )
        paged = await client.timed("lspAgent/overview", {"offset": 350})
    figures["overview, first call (warm server) / ctags -R right after, s"] = f"{first:.2f} / {first_tags:.2f} = {first / first_tags:.2f}×"  # fmt: skip
    figures["overview again, nothing changed (remembered ranking) / ctags -R, s"] = f"{ours:.2f} / {theirs:.2f} = {ratio:.2f}×"  # fmt: skip
    figures["overview offset=350 (remembered), s"] = f"{paged:.2f}"
    figures["  server peak memory after overview, MiB"] = f"{memory_mib(client):.0f}"
    figures["  overview worker's peak memory, MiB"] = f"{descendants_peak_mib(client.process.pid):.0f}"
    await client.stop()
    if before := os.environ.get("BENCH_SPEED_BEFORE"):
        figures |= await overview_before_after(root, cache, before)
    return figures


async def first_overview(root: Path, cache: str, tags: list[str], code: Path | None) -> tuple[float, float, float, float]:  # fmt: skip
    """Over a fresh warm server (from `code`'s tree, else this one): the first overview, ctags
    -R right after, the server's and the worker's peak memory."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    first = await client.timed("lspAgent/overview", {})
    tags_time = wall(tags, root)
    peaks = memory_mib(client), descendants_peak_mib(client.process.pid)
    await client.stop()
    return first, tags_time, *peaks


async def overview_before_after(root: Path, cache: str, commit: str) -> dict:
    """The first overview of `commit`'s tree and of this one, in turn, each beside ctags -R
    right after it: medians of the times and of each run's ratio to its ctags, peak memory."""
    rounds = int(os.environ.get("BENCH_SPEED_ROUNDS", "3"))
    runs: dict[str, list[tuple[float, float, float, float]]] = {commit: [], "this tree": []}
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "tree").mkdir()
        code = source_tree(commit, Path(tmp) / "tree")
        tags = ctags_command(root, f"{tmp}/tags")
        wall(tags, root)
        for _ in range(rounds):
            for label, tree in ((commit, code), ("this tree", None)):
                runs[label].append(await first_overview(root, cache, tags, tree))
    figures = {}
    for label, found in runs.items():
        first, tags_time = statistics.median(r[0] for r in found), statistics.median(r[1] for r in found)
        ratio = statistics.median(r[0] / r[1] for r in found)
        figures[f"overview first call, {label} / ctags -R (median of {rounds}), s"] = f"{first:.2f} / {tags_time:.2f} = {ratio:.2f}×"  # fmt: skip
        figures[f"  {label}: server / worker peak memory, MiB"] = f"{max(r[2] for r in found):.0f} / {max(r[3] for r in found):.0f}"  # fmt: skip
    return figures


COMMON = "filter"  # a common name: 5,122 uses in Django (every copy's in the monorepo)


async def references_figures(root: Path, cache: str, code: Path | None = None, label: str = "") -> dict:
    """references on a common name by name only (precision=syntax: no type server) over a
    server warm-started from the index a cold build saved: its first ask (nothing cached but
    the index) beside `rg -nw` right after, then asked again alternating with rg, the uses
    found and the server's memory."""
    rg = find_rg()
    assert rg is not None
    params = {"name": COMMON, "precision": "syntax"}
    anchor = [rg, "-nw", COMMON, "."]
    for _ in range(2):  # a cold build (and its use tables), then a warm start from what it saved
        client = await Client.start(root, cache, code)
        started = time.perf_counter()
        await asyncio.wait_for(client.indexed.wait(), 3600)
        indexed = time.perf_counter() - started
        if code is None:  # an earlier commit may make none
            await asyncio.wait_for(client.tabled.wait(), 3600)
        tabled = time.perf_counter() - started
        if _ == 0:
            await client.stop()
            saved = sum(f.stat().st_size for f in Path(cache).glob("index/*.symbols")) / 2**20
            built = f"{indexed:.0f} s, use tables after {tabled:.0f} s; saved index {saved:.1f} MiB"
    wall(anchor, root)  # rg's files in the page cache, as the server's are
    started = time.perf_counter()
    answer = await client.request("lspAgent/references", params)
    first = time.perf_counter() - started
    first_rg = wall(anchor, root)
    ours, theirs, ratio = await alternating_lsp(
        client, "lspAgent/references", params, lambda: wall(anchor, root)
    )
    uses = answer.get("total") if isinstance(answer, dict) else "?"
    figures = {
        f"references {COMMON!r}{label}, first ask (warm server) / rg -nw right after, s": f"{first:.2f} / {first_rg:.2f} = {first / first_rg:.2f}× ({uses:,} uses)",
        f"references {COMMON!r}{label} asked again / rg -nw, s": f"{ours:.2f} / {theirs:.2f} = {ratio:.2f}×",
        f"  server memory{label} after those, MiB (peak)": f"{memory_mib(client, 'VmRSS'):.0f} ({memory_mib(client):.0f})",
        f"  cold build{label}: index ready after": built,
    }  # fmt: skip
    await client.stop()
    return figures


# The load part samples 200 times, one every 50 ms after the last answered: over the heavy
# calls' first 10-20 s rather than their first second.
LOAD_SAMPLING: dict[str, Any] = {"samples": 200, "pace": 0.05, "cancel_rest": True}


async def load_figures(root: Path, cache: str, code: Path | None = None) -> dict:
    """The read and the documentSymbol after an edit while 8 heavy calls run (issue 28
    item 4), over a server warm-started from `cache` (built there first when empty), run
    from the source tree `code` when given; the server's and its workers' peak memory. The
    heavy calls still running after the samples are cancelled (at monorepo scale they run
    for minutes)."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    read = {"path": "big_module.py", "start": 4000, "max_chars": 2000}
    idle = [await client.timed("lspAgent/read", read) for _ in range(20)]
    busy = await under_load(client, lambda: client.timed("lspAgent/read", read), **LOAD_SAMPLING)
    reads = f"{statistics.median(busy) * 1000:.0f} / {p99(busy) * 1000:.0f} (idle p50 {statistics.median(idle) * 1000:.0f}; {len(busy)} reads)"  # fmt: skip
    typing = await typing_under_load(client, root, **LOAD_SAMPLING)
    peaks = f"{memory_mib(client):.0f} / {descendants_peak_mib(client.process.pid):.0f}"
    figures = {
        "read 2,000 chars while 8 heavy calls run, p50 / p99 ms": reads,
        f"documentSymbol after an edit ({BIG_FILE_LINES:,} lines) while 8 heavy calls run, p50 / p99 ms": typing,
        "  server / workers' peak memory, MiB": peaks,
    }
    await client.stop()
    return figures


async def cold_reads(root: Path, code: Path | None = None) -> dict:
    """The read of load_figures while a server builds its index from an empty cache (a
    sample every LOAD_SAMPLING pace after the last answered), then while it makes the use
    tables after, until they are made (or 30 minutes)."""
    read = {"path": "big_module.py", "start": 4000, "max_chars": 2000}
    with tempfile.TemporaryDirectory() as cache:
        client = await Client.start(root, cache, code)
        building: list[float] = []
        tabling: list[float] = []
        deadline = time.monotonic() + 1800
        while not client.tabled.is_set() and time.monotonic() < deadline:
            indexed = client.indexed.is_set()
            took = await client.timed("lspAgent/read", read)
            (tabling if indexed else building).append(took)
            await asyncio.sleep(LOAD_SAMPLING["pace"])
        peaks = f"{memory_mib(client):.0f} / {descendants_peak_mib(client.process.pid):.0f}"
        await client.stop()

    def shown(times: list[float]) -> str:
        if not times:
            return "(none)"
        return f"{statistics.median(times) * 1000:.0f} / {p99(times) * 1000:.0f} / {max(times) * 1000:.0f} ({len(times)} reads)"  # fmt: skip

    return {
        "read 2,000 chars while a cold index builds, p50 / p99 / max ms": shown(building),
        "read 2,000 chars while the use tables are made after, p50 / p99 / max ms": shown(tabling),
        "  cold build: server / workers' peak memory, MiB": peaks,
    }


async def references_part(root: Path, cache: str) -> dict:
    """references_figures of this package, and of BENCH_SPEED_BEFORE's when set (each with
    its own index: their formats may differ), load noted before each."""
    figures = {"load before (this package)": load()}
    figures |= await references_figures(root, cache)
    if before := os.environ.get("BENCH_SPEED_BEFORE"):
        with tempfile.TemporaryDirectory() as code, tempfile.TemporaryDirectory() as other:
            figures[f"load before ({before})"] = load()
            tree = source_tree(before, Path(code))
            figures |= await references_figures(root, other, tree, f" ({before})")
    return figures


async def build_only(root: Path, cache: str) -> None:
    client = await Client.start(root, cache)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    await client.stop()


def load_rounds(root: Path, cache: str) -> dict:
    """load_figures `rounds` times, alternating with the same from BENCH_SPEED_BEFORE's
    package when set (before, after, before, after…): one row per run."""
    before, after = os.environ.get("BENCH_SPEED_BEFORE"), os.environ.get("BENCH_SPEED_AFTER")
    rounds = int(os.environ.get("BENCH_SPEED_ROUNDS", "2"))
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        trees: dict[str, Path | None] = {}
        for commit in (before, after):
            if commit:
                (Path(tmp) / commit).mkdir()
                trees[f"at {commit}"] = source_tree(commit, Path(tmp) / commit)
        if not after:
            trees["this tree"] = None
        asyncio.run(build_only(root, cache))  # the cold build, which the runs start from
        for n in range(1, rounds + 1):
            for who, tree in trees.items():
                for figure, value in asyncio.run(load_figures(root, cache, tree)).items():
                    figures[f"{figure} [{who}, run {n}]"] = f"{value} (load {load()})"
                for figure, value in asyncio.run(cold_reads(root, tree)).items():
                    figures[f"{figure} [{who}, run {n}]"] = f"{value} (load {load()})"
    return figures


def method_use(root: Path) -> dict:
    """The position of METHOD_USE in the workspace's first Django copy (the monorepo's
    django1/, or Django itself)."""
    rel, line, text = METHOD_USE
    path = next(p for p in (root / "django1" / rel, root / rel) if p.exists())
    column = path.read_text(encoding="utf-8").splitlines()[line - 1].index(text) + text.index(METHOD) + 1
    return {"path": str(path.relative_to(root)), "line": line, "column": column}


async def cold_build(root: Path, cache: str, code: Path | None) -> tuple[float, float]:
    """A cold build into `cache`: the server's memory once indexed, the saved index's MiB
    once its use tables are made too (a warm start then has nothing left to make)."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    cold = memory_mib(client, "VmRSS")
    await asyncio.wait_for(client.tabled.wait(), 3600)
    await client.stop()
    return cold, sum(f.stat().st_size for f in Path(cache).glob("index/*.symbols")) / 2**20


async def warm_definitions(root: Path, cache: str, code: Path | None) -> dict[str, float]:
    """Over a server warm-started from `cache`: its memory, then definition by name (a name
    in every Django copy, a common method name) and from an untyped use of the method, each
    asked first (right after the index is ready) then 7 times again (seconds; the median)."""
    client = await Client.start(root, cache, code)
    started = time.perf_counter()
    await asyncio.wait_for(client.indexed.wait(), 1800)
    found = {"ready": time.perf_counter() - started, "warm": memory_mib(client, "VmRSS")}
    asked = {NAME: {"name": NAME}, METHOD: {"name": METHOD}, f"{METHOD} from a use": method_use(root)}
    for label, params in asked.items():
        found[f"{label} first"] = await client.timed("lspAgent/definition", params)
        again = [await client.timed("lspAgent/definition", params) for _ in range(7)]
        found[f"{label} again"] = statistics.median(again)
    found["after"] = memory_mib(client, "VmRSS")
    await client.stop()
    return found


async def definition_figures(root: Path, cache: str) -> dict:
    """definition alone (issue 28 item 5) and the warm start's memory: a cold build (its
    memory and the index it saved), then BENCH_SPEED_ROUNDS warm starts from it (default 2),
    each asking warm_definitions; with BENCH_SPEED_BEFORE=<commit> the same from that
    commit's package (its own index), the warm runs in turn; then the CLI one-shot."""
    before = os.environ.get("BENCH_SPEED_BEFORE")
    rounds = int(os.environ.get("BENCH_SPEED_ROUNDS", "2"))
    figures: dict[str, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        trees: dict[str, tuple[Path | None, str]] = {"this tree": (None, cache)}
        if before:
            (Path(tmp) / "tree").mkdir()
            trees = {before: (source_tree(before, Path(tmp) / "tree"), f"{tmp}/cache"), **trees}
        built = {who: await cold_build(root, folder, code) for who, (code, folder) in trees.items()}
        runs: dict[str, list[dict[str, float]]] = {who: [] for who in trees}
        for _ in range(rounds):
            for who, (code, folder) in trees.items():
                runs[who].append(await warm_definitions(root, folder, code))
    for who, found in runs.items():
        (cold, saved), warm = built[who], max(r["warm"] for r in found)
        ready, after = statistics.median(r["ready"] for r in found), max(r["after"] for r in found)
        figures[f"warm start / cold build, server memory MiB [{who}]"] = f"{warm:.0f} / {cold:.0f} ({warm / cold:.2f}×; ready in {ready:.1f} s; saved index {saved:.1f} MiB)"  # fmt: skip
        figures[f"  server memory after the definitions, MiB [{who}]"] = f"{after:.0f}"
        for label in (NAME, METHOD, f"{METHOD} from a use"):
            first = [r[f"{label} first"] * 1000 for r in found]
            again = [r[f"{label} again"] * 1000 for r in found]
            figures[f"definition {label!r} (warm server), first call / again, median ms [{who}]"] = (
                f"{statistics.median(first):.0f} / {statistics.median(again):.0f} (each run: "
                + ", ".join(f"{f:.0f}/{a:.0f}" for f, a in zip(first, again, strict=True))
                + ")"
            )
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(lsp_agent.__file__).parent)], check=True
    )
    env = {**os.environ, "LSP_AGENT_CACHE_DIR": cache, "LSP_AGENT_NO_SERVER": "1"}
    for name in (NAME, METHOD):
        one_shot = [wall([*CLI, "definition", name], root, env) for _ in range(3)]
        figures[f"CLI definition {name!r} (alone), median s"] = f"{statistics.median(one_shot):.2f}"
    return figures


GOALS = {  # the first key a figure holds names its goal
    "CLI search": "≤ 2× (Django)",
    "CLI find-symbol": "≤ 2× (Django)",
    "peak memory after overview": "≤ 300 (monorepo)",
    "worker's peak memory": "≤ 300 (monorepo)",
    "server / worker peak memory": "≤ 300 (monorepo)",
    "overview": "≤ 2× (monorepo)",
    "search ": "≤ 1.5×",
    "references": "≤ 3× (every scale)",
    "CLI definition": "",
    "definition": "≤ 50 (monorepo)",
    "read 2,000": "p99 ≤ 50",
    "documentSymbol": "p99 ≤ 100",
    "warm start": "≤ 1×",
}


def main() -> None:
    chosen = os.environ.get("BENCH_SPEED_SCALES", ",".join(SCALES)).split(",")
    report = Report(
        "speed", "Fast where agents wait: each figure beside its anchor", ["figure", *chosen, "goal"]
    )
    figures: dict[str, dict[str, str]] = {}
    started = the_run()
    for scale in chosen:
        root = workspace(scale)
        big_file(root)
        with tempfile.TemporaryDirectory() as temporary:
            # BENCH_SPEED_CACHE: a folder keeping each scale's index between runs (the first
            # server's build is then a warm start; overview's figures need only a saved index)
            kept = os.environ.get("BENCH_SPEED_CACHE")
            cache = str(Path(kept) / scale) if kept else temporary
            before = load()
            if os.environ.get("BENCH_SPEED_PARTS") == "overview":  # overview's figures alone
                figures[scale] = asyncio.run(overview_figures(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "cli":  # the CLI one-shots alone
                figures[scale] = asyncio.run(cli_part(root, cache)) | cli_figures(root, cache)
            elif os.environ.get("BENCH_SPEED_PARTS") == "references":
                figures[scale] = asyncio.run(references_part(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "load":  # reads and typing under load alone
                figures[scale] = load_rounds(root, cache)
            elif os.environ.get("BENCH_SPEED_PARTS") == "definition":  # and the warm start's memory
                figures[scale] = asyncio.run(definition_figures(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "typing":  # documentSymbol's alone
                figures[scale] = asyncio.run(typing_figures(root))
            else:
                figures[scale] = asyncio.run(server_figures(root, cache))
                figures[scale] |= cli_figures(root, cache)
            figures[scale]["load (1, 5, 15 min) before / after"] = f"{before} / {load()}"
        print(f"{scale}: {figures[scale]}", flush=True)
    for figure in figures[chosen[0]]:
        goal = next((g for key, g in GOALS.items() if key in figure), "")
        report.add(figure, *(figures[s].get(figure, "") for s in chosen), goal)
    report.note(f"Machine: {os.cpu_count()} cores, shared; Python {sys.version.split()[0]}.")
    report.note(f"Run: from {started} to {the_run()}.")
    report.write()


if __name__ == "__main__":
    main()
