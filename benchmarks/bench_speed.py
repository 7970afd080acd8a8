"""Fast where agents wait (issue 28): each figure beside its anchor in one run, on Django
5.2.8 (PyPI sdist) and the monorepo of bench_scale (8 Django copies, rxjs, jQuery and this
interpreter's standard library).

- overview over a warm server against `ctags -R` (Debian's universal-ctags): its first call
  (ranking every file) beside one ctags run, then asked again (the ranking remembered, each
  file's stat checked) alternating with ctags; the server's peak memory;
- CLI one-shots (after a server saved its index, whose records `search` and `find-symbol`
  take): `search` against `rg -n`, `find-symbol` against `rg -nw`, runs alternating (medians of
  each, and of the ratio pair by pair; wall and CPU time); alone (no server running), and asking
  the server that is running for the same roots (local.py); the interpreter's own start beside
  them. In the cli part the command is `lsp-agent` as users get it, installed from a wheel of
  this tree (and of BENCH_SPEED_BEFORE's commit): no editable install's finder at each start;
  `python -m lsp_agent` of the editable install beside them, its modules compiled to bytecode
  first, as a wheel has them (with PYTHONDONTWRITEBYTECODE set, an editable install would
  compile every module at each start);
- search over a warm server against `rg -n` in a subprocess, per pattern class;
- a read and a documentSymbol after an edit while 8 heavy calls run, against the same idle;
- definition by name over a warm server;
- the server's memory after a warm start against after a cold build.

The load (`uptime`) is noted beside each workspace's figures: the cores are shared.
`python -m benchmarks speed` runs both; `BENCH_SPEED_SCALES=django` picks one;
`BENCH_SPEED_PARTS=overview` measures overview alone (its calls, the server's and its
worker's peak memory; with `BENCH_SPEED_BEFORE=<commit>` beside that commit's first call);
`BENCH_SPEED_PARTS=cli` the CLI one-shots alone (a server's cold build
saves the index; asked while it runs, then alone after it stopped; with
`BENCH_SPEED_BEFORE=<commit>` that commit's wheel beside this tree's); `BENCH_SPEED_PARTS=references`, references on a common name alone
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
`BENCH_SPEED_PARTS=search` search over a warm server alone, each pattern class against `rg -n`
twice in turn: its output written to /dev/null (rg's least cost), and read through a pipe to
the end, as an agent's shell gets it (with `BENCH_SPEED_BEFORE=<commit>` beside that commit's
server);
`BENCH_SPEED_PARTS=typing` documentSymbol after an edit alone (while a
cold index builds, idle, and under the 8 heavy calls), with `BENCH_SPEED_BASELINE=<commit>`
beside that commit's server, runs alternating.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import os
import resource
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

import lsp_agent
from benchmarks.bench_scale import BIG_FILE_LINES, CTAGS_LANGUAGES, big_file, p99, workspace
from benchmarks.common import HERE, Client, Report, source_tree, the_run
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


def read_out(command: list[str], cwd: Path) -> float:
    """A command's wall time with its output read through a pipe to the end, as an agent's
    shell reads what it prints (written to /dev/null instead, as `wall` does, it costs rg
    less: nothing is copied to a reader)."""
    started = time.perf_counter()
    with subprocess.Popen(command, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as proc:
        assert proc.stdout is not None
        while proc.stdout.read(1 << 16):
            pass
    return time.perf_counter() - started


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

    async def run() -> tuple[float, float, float]:
        ours, [(theirs, ratio)] = await against_anchors(client, method, params, [anchor], runs)
        return ours, theirs, ratio

    return run()


async def against_anchors(client: Client, method: str, params: dict, anchors: list, runs: int = RUNS):
    """A request over the server and each subprocess anchor in turn (ours, a1, a2, ours, …,
    after one warm-up each): our median, and each anchor's median and the median of the
    ratio pair by pair."""
    loop = asyncio.get_running_loop()
    await client.request(method, params)
    for anchor in anchors:
        await loop.run_in_executor(None, anchor)
    rounds = []
    for _ in range(runs):
        x = await client.timed(method, params)
        rounds.append((x, [await loop.run_in_executor(None, anchor) for anchor in anchors]))
    return statistics.median(x for x, _ in rounds), [
        (statistics.median(ys[i] for _, ys in rounds), statistics.median(x / ys[i] for x, ys in rounds))
        for i in range(len(anchors))
    ]


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
    await asyncio.wait_for(client.tabled.wait(), 3600)  # what a warm start holds from its start
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
    """The CLI one-shots alone: asking a server that built and saved the index (and made its
    use tables: the server at rest, as an agent finds it between calls), then with none; each
    install of cli_installs beside rg. With BENCH_SPEED_BEFORE, that commit's one-shots read
    an index its own server saved (another version's index is another format: they would
    parse instead)."""
    with tempfile.TemporaryDirectory() as folder:
        installs = cli_installs(Path(folder))
        caches = dict.fromkeys(installs, cache)
        if before := os.environ.get("BENCH_SPEED_BEFORE"):
            caches[before] = f"{folder}/before-cache"
            (Path(folder) / "before-source").mkdir()
            code = source_tree(before, Path(folder) / "before-source")
            await (await settled(root, caches[before], code)).stop()
        client = await settled(root, cache)
        figures = {"load before (asking the server)": load()}
        figures |= await asyncio.get_running_loop().run_in_executor(
            None, cli_figures, root, caches, "asking the server", installs
        )
        await client.stop()
        figures["load before (alone)"] = load()
        return figures | cli_figures(root, caches, "alone", installs)


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


def installed_cli(tree: Path, into: Path) -> list[str]:
    """`lsp-agent` as `pip install` of `tree`'s wheel lays it out (no editable install's
    finder at each start; the modules compiled): a virtual environment of its own, the other
    packages this interpreter's (a .pth line, written after the install), rg beside its Python
    as the ripgrep wheel puts it."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(into)], check=True)
    wheels = into / "wheels"
    pip = [sys.executable, "-m", "pip", "--quiet", "--disable-pip-version-check"]
    subprocess.run(
        [*pip, "wheel", "--no-deps", "-w", str(wheels), str(tree)], check=True, capture_output=True
    )
    wheel = next(wheels.glob("lsp_agent-*.whl"))
    subprocess.run(
        [*pip, "--python", str(into / "bin" / "python"), "install", "--no-deps", str(wheel)], check=True
    )
    site = next((into / "lib").glob("python*/site-packages"))
    (site / "dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    rg = find_rg()
    assert rg is not None
    (into / "bin" / "rg").symlink_to(rg)
    return [str(into / "bin" / "lsp-agent")]


def cli_installs(folder: Path) -> dict[str, list[str]]:
    """The commands compared: this tree's and, with BENCH_SPEED_BEFORE, that commit's, each
    installed from its wheel (installed_cli), and this tree's `python -m lsp_agent` from the
    editable install (its modules compiled, as a wheel has them)."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(Path(lsp_agent.__file__).parent)], check=True
    )
    installs = {"this tree": installed_cli(HERE.parent, folder / "this")}
    if before := os.environ.get("BENCH_SPEED_BEFORE"):
        tree = folder / "tree"
        tree.mkdir()
        archive = subprocess.run(["git", "archive", before], cwd=HERE.parent, capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        installs[before] = installed_cli(tree, folder / "before")
    installs["this tree, python -m lsp_agent (editable)"] = CLI
    return installs


def cli_figures(
    root: Path, cache: str | dict[str, str], how: str = "alone", installs: dict[str, list[str]] | None = None
) -> dict:
    """One-shot commands with the index the server saved (`cache`, or per install), against
    ripgrep: `alone`, or asking the server running for the same roots; each install's command
    and rg in turn (medians of each, and of each one's ratio to the rg run beside it), and
    their CPU time (user and system, of the process and its children: what a busy machine
    makes slower)."""
    rg = find_rg()
    assert rg is not None
    installs = installs or {"this tree": CLI}
    caches = cache if isinstance(cache, dict) else dict.fromkeys(installs, cache)
    envs = {label: environment(caches[label], how) for label in installs}
    env = envs[next(iter(installs))]
    figures = {}
    if how == "alone":
        pythons = {label: str(Path(command[0]).with_name("python")) if command is not CLI else sys.executable for label, command in installs.items()}  # fmt: skip
        for start in (["-c", "pass"], ["-S", "-c", "pass"]):
            runs = [lambda python=python, start=start: wall_and_cpu([python, *start], root, env) for python in pythons.values()]  # fmt: skip
            for label, found in zip(pythons, side_by_side(runs, lambda: wall_and_cpu([rg, "-n", NAME, "."], root)), strict=True):  # fmt: skip
                figures[f"floor: python {' '.join(start)} ({label}) / rg -n {NAME}, ms"] = found
    for name, argv, theirs in [
        ("search", ["search", NAME], [rg, "-n", NAME, "."]),
        ("search", ["search", "self\\.assert"], [rg, "-n", "self\\.assert", "."]),
        ("find-symbol", ["find-symbol", NAME], [rg, "-nw", NAME, "."]),
    ]:
        runs = [lambda command=command, argv=argv, label=label: wall_and_cpu([*command, *argv], root, envs[label]) for label, command in installs.items()]  # fmt: skip
        for label, found in zip(installs, side_by_side(runs, lambda theirs=theirs: wall_and_cpu(theirs, root)), strict=True):  # fmt: skip
            figures[f"CLI {name} {argv[-1]!r} ({how}; {label}) / {' '.join(theirs[1:3])}, ms"] = found
    return figures


def environment(cache: str, how: str) -> dict[str, str]:
    """A one-shot's environment: the index in `cache`; `alone`: no server for the roots, as a
    user without one runs it (the command looks for a server's socket and finds none: an empty
    folder of its own as $XDG_RUNTIME_DIR, not LSP_AGENT_NO_SERVER, which skips the look)."""
    env = {**os.environ, "LSP_AGENT_CACHE_DIR": cache}
    if how == "alone":
        env["XDG_RUNTIME_DIR"] = no_server_folder()
    env.pop("PYTHONPATH", None)
    return env


@functools.cache
def no_server_folder() -> str:
    folder = tempfile.mkdtemp(prefix="lsp-agent-no-server-")
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


def wall_and_cpu(command: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float]:
    """A command's wall time and CPU time (user and system, its children's included; getrusage
    counts microseconds where os.times counts clock ticks)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    took = wall(command, cwd, env)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return took, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def side_by_side(runs: list, anchor, rounds: int = RUNS) -> list[str]:
    """For each of `runs` (each giving wall and CPU seconds): the medians of its wall times,
    of the anchor's run just after it and of the ratio pair by pair, then the same of CPU
    times; all in turn (r1 a r2 a … r1 a …) after one warm-up each."""
    for run in runs:
        run(), anchor()
    pairs: list[list[tuple[tuple[float, float], tuple[float, float]]]] = [[] for _ in runs]
    for _ in range(rounds):
        for run, found in zip(runs, pairs, strict=True):
            found.append((run(), anchor()))
    rows = []
    for found in pairs:
        shown = []
        for k, what in ((0, "wall"), (1, "CPU")):
            a = statistics.median(x[k] for x, _ in found)
            b = statistics.median(y[k] for _, y in found)
            ratio = statistics.median(x[k] / max(y[k], 1e-6) for x, y in found)
            shown.append(f"{what} {a * 1000:.0f} / {b * 1000:.0f} = {ratio:.2f}×")
        rows.append("; ".join(shown))
    return rows


def descendants(pid: int) -> list[int]:
    """The process ids of a process's descendants alive now."""
    found, stack = [], [pid]
    while stack:
        parent = stack.pop()
        try:
            children = [int(c) for task in Path(f"/proc/{parent}/task").iterdir() for c in (task / "children").read_text().split()]  # fmt: skip
        except OSError:
            continue
        found += children
        stack += children
    return found


def cpu_of(pids: list[int]) -> float:
    """CPU seconds (user and system) the processes have used so far, from /proc."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += int(fields[11]) + int(fields[12])
    return total / os.sysconf("SC_CLK_TCK")


async def at_rest(client: Client, quiet: float = 0.02, within: float = 60.0) -> float:
    """Wait until the server and its workers use no more than `quiet` of a core over a
    quarter second (after a start its workers load the saved index: work no call waits
    for, which a call made meanwhile shares the cores with); the seconds waited."""
    started = time.perf_counter()
    while time.perf_counter() - started < within:
        pids = [client.process.pid, *descendants(client.process.pid)]
        before = cpu_of(pids)
        await asyncio.sleep(0.25)
        if cpu_of(pids) - before <= quiet * 0.25:
            break
    return time.perf_counter() - started


def children_cpu() -> float:
    """CPU seconds this process's reaped children (ctags) have used so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def timed_cpu(client: Client, method: str, params: dict) -> tuple[float, float]:
    """A request's wall time and the CPU the server and its workers spent on it: on a
    shared machine the CPU says what the work costs when the wall time says how long the
    cores were someone else's."""
    pids = [client.process.pid, *descendants(client.process.pid)]
    before = cpu_of(pids)
    took = await client.timed(method, params)
    return took, cpu_of(pids) - before


def wall_cpu(command: list[str], cwd: Path) -> tuple[float, float]:
    before = children_cpu()
    took = wall(command, cwd)
    return took, children_cpu() - before


def descendants_peak_mib(pid: int) -> float:
    """The largest peak resident memory (VmHWM) among a process's descendants: the worker
    process overview runs in (the server's own figure leaves it out)."""
    peak = 0.0
    for child in descendants(pid):
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
    client = await settled(root, cache)  # the cold build: the index saved with its use tables
    await client.stop()
    client = await settled(root, cache)
    with tempfile.TemporaryDirectory() as tmp:
        tags = ctags_command(root, f"{tmp}/tags")
        wall(tags, root)  # ctags' files in the page cache, as the server's are
        first, cpu = await timed_cpu(client, "lspAgent/overview", {})
        first_tags, tags_cpu = wall_cpu(tags, root)
        ours, theirs, ratio = await alternating_lsp(
            client, "lspAgent/overview", {}, lambda: wall(tags, root), runs=3
        )
        paged = await client.timed("lspAgent/overview", {"offset": 350})
    figures["overview, first call (warm server) / ctags -R right after, s"] = f"{first:.2f} / {first_tags:.2f} = {first / first_tags:.2f}×"  # fmt: skip
    figures["  CPU of the first call (server and workers) / of ctags -R, s"] = f"{cpu:.2f} / {tags_cpu:.2f} = {cpu / tags_cpu:.2f}×"  # fmt: skip
    figures["overview again, nothing changed (remembered ranking) / ctags -R, s"] = f"{ours:.2f} / {theirs:.2f} = {ratio:.2f}×"  # fmt: skip
    figures["overview offset=350 (remembered), s"] = f"{paged:.2f}"
    figures["  server peak memory after overview, MiB"] = f"{memory_mib(client):.0f}"
    figures["  overview worker's peak memory, MiB"] = f"{descendants_peak_mib(client.process.pid):.0f}"
    await client.stop()
    if before := os.environ.get("BENCH_SPEED_BEFORE"):
        figures |= await overview_before_after(root, cache, before)
    return figures


async def settled(root: Path, cache: str, code: Path | None = None) -> Client:
    """A server whose start is over: its index ready and its use tables made (saved with the
    index, which its tool worker loads: without them a warm start makes them again, at the
    lowest priority, beside the call measured, then saves and the worker loads it again). An
    earlier commit's (`code`) is given TABLES_WAIT: one from before use tables makes none."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    if code is None:
        await asyncio.wait_for(client.tabled.wait(), 3600)
    else:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(client.tabled.wait(), TABLES_WAIT)
    return client


async def first_overview(root: Path, cache: str, tags: list[str], code: Path | None) -> tuple[float, ...]:  # fmt: skip
    """Over a fresh warm server (from `code`'s tree, else this one): the first overview, ctags
    -R right after, the server's and the worker's peak memory, the CPU of both calls."""
    client = await settled(root, cache, code)
    first, cpu = await timed_cpu(client, "lspAgent/overview", {})
    tags_time, tags_cpu = wall_cpu(tags, root)
    peaks = memory_mib(client), descendants_peak_mib(client.process.pid)
    await client.stop()
    return first, tags_time, *peaks, cpu, tags_cpu


async def overview_before_after(root: Path, cache: str, commit: str) -> dict:
    """The first overview of `commit`'s tree and of this one, in turn, each beside ctags -R
    right after it: medians of the times and of each run's ratio to its ctags, peak memory."""
    rounds = int(os.environ.get("BENCH_SPEED_ROUNDS", "3"))
    runs: dict[str, list[tuple[float, ...]]] = {commit: [], "this tree": []}
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
        cpu, tags_cpu = statistics.median(r[4] for r in found), statistics.median(r[5] for r in found)
        figures[f"  {label}: CPU of the first call (server and workers) / of ctags -R, s"] = f"{cpu:.2f} / {tags_cpu:.2f} = {statistics.median(r[4] / r[5] for r in found):.2f}×"  # fmt: skip
    return figures


TABLES_WAIT = 300  # seconds an earlier commit's server is given to make its use tables
COMMON = "filter"  # a common name: 5,122 uses in Django (every copy's in the monorepo)
MEMBER = "QuerySet/filter"  # the same asked by owner: each use's receiver judged


async def references_figures(root: Path, cache: str, code: Path | None = None, label: str = "") -> dict:
    """references on a common name by name only (precision=syntax: no type server) over a
    server warm-started from the index a cold build saved: its first ask once it is at rest
    (nothing cached but the index; its workers have loaded it, an earlier commit has made its
    tables) beside `rg -nw` right after, then asked again alternating with rg, the uses found
    and the server's memory."""
    rg = find_rg()
    assert rg is not None
    params = {"name": COMMON, "precision": "syntax"}
    anchor = [rg, "-nw", COMMON, "."]
    for _ in range(2):  # a cold build (and its use tables), then a warm start from what it saved
        client = await Client.start(root, cache, code)
        started = time.perf_counter()
        await asyncio.wait_for(client.indexed.wait(), 3600)
        indexed = time.perf_counter() - started
        if code is None:
            await asyncio.wait_for(client.tabled.wait(), 3600)
        else:  # an earlier commit may make none: its first ask then reads every file, as it would
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(client.tabled.wait(), TABLES_WAIT)
        tabled = time.perf_counter() - started
        if _ == 0:
            await client.stop()
            saved = sum(f.stat().st_size for f in Path(cache).glob("index/*.symbols")) / 2**20
            made = f"use tables after {tabled:.0f} s" if client.tabled.is_set() else "no use tables made"
            built = f"{indexed:.0f} s, {made}; saved index {saved:.1f} MiB"
    rested = await at_rest(client)
    wall(anchor, root)  # rg's files in the page cache, as the server's are
    started = time.perf_counter()
    answer = await client.request("lspAgent/references", params)
    first = time.perf_counter() - started
    first_rg = wall(anchor, root)
    ours, theirs, ratio = await alternating_lsp(
        client, "lspAgent/references", params, lambda: wall(anchor, root)
    )
    uses = answer.get("total") if isinstance(answer, dict) else "?"
    member = {"name": MEMBER, "precision": "syntax"}  # judged by receivers: from the tables too
    started = time.perf_counter()
    await client.request("lspAgent/references", member)
    by_owner, by_owner_rg = time.perf_counter() - started, wall(anchor, root)
    figures = {
        f"references {COMMON!r}{label}, first ask (warm server at rest) / rg -nw right after, s": f"{first:.2f} / {first_rg:.2f} = {first / first_rg:.2f}× ({uses:,} uses; at rest after {rested:.1f} s)",
        f"references {COMMON!r}{label} asked again / rg -nw, s": f"{ours:.2f} / {theirs:.2f} = {ratio:.2f}×",
        f"  references {MEMBER!r}{label}, first ask / rg -nw {COMMON}, s": f"{by_owner:.2f} / {by_owner_rg:.2f} = {by_owner / by_owner_rg:.2f}×",
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


async def search_figures(root: Path, cache: str, code: Path | None = None, label: str = "") -> dict:
    """search over a server warm-started from the index a cold build saved (from `code`'s
    tree when given), each pattern class alternating with `rg -n` (medians, RUNS rounds) and
    with `rg --count`, what a careful agent runs where lines would flood it (our answer to a
    very common pattern is its counts)."""
    rg = find_rg()
    assert rg is not None
    for n in range(2):  # a cold build (and its use tables), then a warm start from what it saved
        client = await settled(root, cache, code)
        if n == 0:
            await client.stop()
    figures = {}
    for kind, pattern in PATTERNS.items():
        command, counting = [rg, "-n", pattern, "."], [rg, "--count", pattern, "."]
        ours, [(quiet, ratio), (read, read_ratio), (counted, count_ratio)] = await against_anchors(
            client,
            "lspAgent/search",
            {"pattern": pattern},
            [
                lambda command=command: wall(command, root),
                lambda command=command: read_out(command, root),
                lambda counting=counting: read_out(counting, root),
            ],
        )
        figures[f"search {kind} {pattern!r} (server{label}) / rg -n > /dev/null, ms"] = f"{ours * 1000:.0f} / {quiet * 1000:.0f} = {ratio:.2f}×"  # fmt: skip
        figures[f"search {kind} {pattern!r} (server{label}) / rg -n, its output read, ms"] = f"{ours * 1000:.0f} / {read * 1000:.0f} = {read_ratio:.2f}×"  # fmt: skip
        figures[f"search {kind} {pattern!r} (server{label}) / rg --count, its output read, ms"] = f"{ours * 1000:.0f} / {counted * 1000:.0f} = {count_ratio:.2f}×"  # fmt: skip
    await client.stop()
    return figures


async def search_part(root: Path, cache: str) -> dict:
    """search_figures of this package and, with BENCH_SPEED_BEFORE, of that commit's (its
    own index), load noted before each."""
    figures = {"load before (this package)": load()}
    figures |= await search_figures(root, cache)
    if before := os.environ.get("BENCH_SPEED_BEFORE"):
        with tempfile.TemporaryDirectory() as code, tempfile.TemporaryDirectory() as other:
            figures[f"load before ({before})"] = load()
            figures |= await search_figures(root, other, source_tree(before, Path(code)), f", {before}")
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
    """A cold build into `cache`: the server's memory once its use tables are made too (what
    a warm start holds from the start: like for like) and the saved index's MiB."""
    client = await Client.start(root, cache, code)
    await asyncio.wait_for(client.indexed.wait(), 1800)
    await asyncio.wait_for(client.tabled.wait(), 3600)
    cold = memory_mib(client, "VmRSS")
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
    "server memory after the definitions": "",
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
                figures[scale] = asyncio.run(cli_part(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "references":
                figures[scale] = asyncio.run(references_part(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "load":  # reads and typing under load alone
                figures[scale] = load_rounds(root, cache)
            elif os.environ.get("BENCH_SPEED_PARTS") == "definition":  # and the warm start's memory
                figures[scale] = asyncio.run(definition_figures(root, cache))
            elif os.environ.get("BENCH_SPEED_PARTS") == "typing":  # documentSymbol's alone
                figures[scale] = asyncio.run(typing_figures(root))
            elif os.environ.get("BENCH_SPEED_PARTS") == "search":  # search over the server alone
                figures[scale] = asyncio.run(search_part(root, cache))
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
