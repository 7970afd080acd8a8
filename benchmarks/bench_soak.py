"""Soak: 20,000 mixed requests over stdio and 2,000 over MCP, 32 in flight, about one in ten
cancelled at a random moment; then reads timed one at a time while 32 heavy calls are in
flight. Every answer is checked against the generated corpus (what the files hold, which
symbols they define, how many times a marker occurs), not against another run.

Prints lost / wrong / cancelled counts, p50 and p99 per kind, the server's memory (RSS) at
the start, after the first 1,000 requests and at the end. SOAK_REQUESTS and
SOAK_MCP_REQUESTS scale the run down (a quick look: SOAK_REQUESTS=2000 SOAK_MCP_REQUESTS=200).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.raw_rpc import RawClient

from .common import Report

STDIO_REQUESTS = int(os.environ.get("SOAK_REQUESTS", "20000"))
MCP_REQUESTS = int(os.environ.get("SOAK_MCP_REQUESTS", "2000"))
IN_FLIGHT = 32
CANCEL_RATE = 0.1
LOST_AFTER = 120.0  # seconds without an answer: the request is lost
LOADED_READS = 400  # reads timed one at a time under 32 heavy calls
REQUEST_CANCELLED = -32800

LIGHT = ("read", "documentSymbol", "workspace/symbol", "decode_calls")
HEAVY = ("search", "symbols (folder)", "find_symbol")
# The mix: mostly the light calls an agent makes all the time, a steady share of heavy ones.
MIX = {
    "read": 40,
    "documentSymbol": 10,
    "workspace/symbol": 10,
    "decode_calls": 10,
    "search": 15,
    "symbols (folder)": 8,
    "find_symbol": 7,
}


# --- the corpus and what is true of it -----------------------------------------------------


@dataclass
class Module:
    rel: str
    lines: list[str]
    classes: list[str]


@dataclass
class Corpus:
    root: Path
    modules: list[Module] = field(default_factory=list)
    markers: dict[str, int] = field(default_factory=dict)  # marker -> occurrences
    packages: dict[str, list[str]] = field(default_factory=dict)  # package -> class names


def make_corpus(root: Path, packages: int = 8, modules: int = 30, seed: int = 7) -> Corpus:
    rng = random.Random(seed)
    corpus = Corpus(root)
    for p in range(packages):
        package = f"pkg{p}"
        (root / package).mkdir()
        corpus.packages[package] = []
        for m in range(modules):
            lines, classes = [f'"""Module {m} of {package}."""', ""], []
            for c in range(rng.randint(3, 8)):
                name = f"Widget_{p}_{m}_{c}"
                classes.append(name)
                lines += [f"class {name}:", f'    """A widget, number {c}."""', ""]
                for k in range(rng.randint(2, 6)):
                    marker = f"marker_{rng.randint(0, 49)}"
                    corpus.markers[marker] = corpus.markers.get(marker, 0) + 1
                    lines += [
                        f"    def method_{k}(self, value):",
                        f"        total = value * {rng.randint(1, 999)}  # {marker}",
                        "        return total",
                        "",
                    ]
            rel = f"{package}/mod{m}.py"
            (root / rel).write_text("\n".join(lines) + "\n")
            corpus.modules.append(Module(rel, lines, classes))
            corpus.packages[package] += classes
    return corpus


@dataclass
class Call:
    kind: str
    method: str  # the LSP method
    params: Any
    tool: str | None  # the agent tool (MCP), None for LSP-only features
    arguments: dict
    check: Callable[[Any], bool]  # the answer is right


def make_call(kind: str, corpus: Corpus, rng: random.Random) -> Call:
    module = rng.choice(corpus.modules)
    uri = (corpus.root / module.rel).as_uri()
    if kind == "read":
        start = rng.randint(1, len(module.lines))
        args = {"path": module.rel, "start": start, "max_chars": 2000}
        line = module.lines[start - 1]
        # Every line is numbered, an empty one `N:` too (docs/answers.md).
        expected = f"\n{start}:{line}\n"
        return tool_call(
            kind,
            "read",
            args,
            lambda a: "error" not in a and a["start"] == start and expected in a["text"] + "\n",
        )
    if kind == "decode_calls":
        name = rng.choice(["read", "search", "symbols"])
        reply = f'Let me look. <tool_call>{{"name": "{name}", "arguments": {{"path": "x"}}}}</tool_call>'
        return tool_call(
            kind, "decode_calls", {"reply": reply}, lambda a: [c["name"] for c in a["calls"]] == [name]
        )
    if kind == "search":
        marker = rng.choice(sorted(corpus.markers))
        args = {"pattern": marker + r"\b", "max_chars": 4000}
        count = corpus.markers[marker]
        return tool_call(kind, "search", args, lambda a: a.get("total_matches") == count)
    if kind == "symbols (folder)":
        package = rng.choice(sorted(corpus.packages))
        classes = corpus.packages[package]
        args = {"path": package, "max_chars": 4000}
        return tool_call(kind, "symbols", args, lambda a: "error" not in a and a["symbols"] >= len(classes))
    if kind == "find_symbol":
        cls = rng.choice(module.classes)
        args = {"name_path": f"{cls}/method_0"}
        return tool_call(
            kind, "find_symbol", args, lambda a: [m["path"] for m in a.get("matches", [])] == [module.rel]
        )
    if kind == "documentSymbol":
        params = {"textDocument": {"uri": uri}}

        def names(a: Any) -> bool:
            return isinstance(a, list) and [s["name"] for s in a] == module.classes

        return Call(kind, "textDocument/documentSymbol", params, None, {}, names)
    if kind == "workspace/symbol":
        cls = rng.choice(module.classes)

        def found(a: Any) -> bool:
            return isinstance(a, list) and any(s["name"] == cls and s["location"]["uri"] == uri for s in a)

        return Call(kind, "workspace/symbol", {"query": cls}, None, {}, found)
    raise ValueError(kind)


def tool_call(kind: str, tool: str, arguments: dict, check: Callable[[dict], bool]) -> Call:
    return Call(kind, f"lspAgent/{tool}", arguments, tool, arguments, check)


def kinds(rng: random.Random, n: int, mix: dict[str, int]) -> list[str]:
    return rng.choices(list(mix), weights=list(mix.values()), k=n)


# --- measuring ------------------------------------------------------------------------------


@dataclass
class Tally:
    sent: int = 0
    answered: int = 0
    lost: int = 0
    wrong: int = 0
    cancelled: int = 0  # answered RequestCancelled after a cancel
    times: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    wrong_examples: list[str] = field(default_factory=list)
    memory: dict[str, float] = field(default_factory=dict)  # MB at start, after 1,000, end
    exit_code: int | None = None  # of the server after shutdown and exit (stdio)

    def answered_one(self, pid: int, first: int = 1000) -> None:
        self.answered += 1
        if self.answered == first:
            self.memory["after 1,000"] = rss_mb(pid)

    def lose(self, call: Call, why: Exception) -> None:
        self.lost += 1
        if len(self.wrong_examples) < 5:
            self.wrong_examples.append(f"lost {call.kind} {call.params}: {why!r}")

    def judge(self, call: Call, right: bool, shown: str, started: float) -> None:
        if right:
            self.times[call.kind].append(time.perf_counter() - started)
            return
        self.wrong += 1
        if len(self.wrong_examples) < 5:
            self.wrong_examples.append(f"{call.kind} {call.params}: {shown[:300]}")


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def percentile(times: list[float], q: float) -> float:
    if not times:
        return float("nan")
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def wait_for_index(client: RawClient, corpus: Corpus) -> None:
    """The background index is built: every module's first class is found. (The last
    module's alone is not enough: the walk lists files in the order ripgrep's threads
    race, so it may be indexed before others, and workspace/symbol answers from what is
    indexed so far.)"""
    deadline = asyncio.get_running_loop().time() + 60
    for module in corpus.modules:
        while not (await client.call("workspace/symbol", {"query": module.classes[0]})).get("result"):
            if asyncio.get_running_loop().time() > deadline:
                raise RuntimeError("the symbol index was not built in 60 s")
            await asyncio.sleep(0.1)


async def soak_stdio(corpus: Corpus, n: int, seed: int = 1) -> Tally:
    rng = random.Random(seed)
    tally = Tally()
    client = await RawClient.start()
    pid = client.process.pid
    await client.initialize(corpus.root)
    await wait_for_index(client, corpus)
    tally.memory["start"] = rss_mb(pid)
    slots = asyncio.Semaphore(IN_FLIGHT)

    async def one(call: Call, cancel_after: float | None) -> None:
        started = time.perf_counter()
        msg_id, future = client.request(call.method, call.params)
        if cancel_after is not None:
            asyncio.get_running_loop().call_later(cancel_after, client.cancel, msg_id)
        try:
            message = await asyncio.wait_for(future, LOST_AFTER)
        except (asyncio.TimeoutError, ConnectionError) as exc:
            tally.lose(call, exc)
            return
        finally:
            slots.release()
        tally.answered_one(pid, min(1000, n // 2))
        error = message.get("error")
        if error is not None and error.get("code") == REQUEST_CANCELLED and cancel_after is not None:
            tally.cancelled += 1
            return
        tally.judge(call, error is None and call.check(message.get("result")), str(message), started)

    tasks = []
    for kind in kinds(rng, n, MIX):
        await slots.acquire()
        call = make_call(kind, corpus, rng)
        cancel_after = rng.uniform(0, 0.02) if rng.random() < CANCEL_RATE else None
        tally.sent += 1
        tasks.append(asyncio.ensure_future(one(call, cancel_after)))
    await asyncio.gather(*tasks)
    tally.memory["end"] = rss_mb(pid)
    tally.exit_code = await client.finish()
    return tally


async def reads_under_heavy_load(corpus: Corpus, seed: int = 2) -> tuple[list[float], list[float], int]:
    """Read latencies with nothing else running, then with 32 heavy calls always in flight;
    and how many heavy calls completed meanwhile."""
    rng = random.Random(seed)
    client = await RawClient.start()
    await client.initialize(corpus.root)
    await wait_for_index(client, corpus)

    async def timed_reads(count: int) -> list[float]:
        times = []
        for _ in range(count):
            call = make_call("read", corpus, rng)
            started = time.perf_counter()
            answer = await client.call(call.method, call.params, timeout=LOST_AFTER)
            times.append(time.perf_counter() - started)
            if not call.check(answer.get("result")):
                raise RuntimeError(f"wrong read under load: {answer}")
        return times

    alone = await timed_reads(LOADED_READS // 4)
    stop = asyncio.Event()
    completed = 0

    async def keep_heavy_in_flight() -> None:
        nonlocal completed
        while not stop.is_set():
            call = make_call(rng.choice(HEAVY), corpus, rng)
            await client.call(call.method, call.params, timeout=LOST_AFTER)
            completed += 1

    heavy = [asyncio.ensure_future(keep_heavy_in_flight()) for _ in range(IN_FLIGHT)]
    await asyncio.sleep(1.0)  # the heavy lane is full and queued
    loaded = await timed_reads(LOADED_READS)
    stop.set()
    await asyncio.gather(*heavy)
    await client.finish()
    return alone, loaded, completed


def mcp_pid() -> int:
    """The MCP server subprocess this process started."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            status = (entry / "status").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"PPid:\t{os.getpid()}\n" in status and b"lsp_agent\x00mcp" in cmdline:
            return int(entry.name)
    raise RuntimeError("no MCP server process found")


async def soak_mcp(corpus: Corpus, n: int, seed: int = 3) -> Tally:
    from mcp import Client, StdioServerParameters

    from lsp_agent.mcp import ANSWER_META

    rng = random.Random(seed)
    tally = Tally()
    # MCP serves the agent tools only: no LSP features, no runtime tools such as decode_calls.
    mix = {k: v for k, v in MIX.items() if k not in ("documentSymbol", "workspace/symbol", "decode_calls")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lsp_agent", "mcp", "--root", str(corpus.root)]
    )
    async with Client(params, read_timeout_seconds=LOST_AFTER) as mcp:
        pid = mcp_pid()
        tally.memory["start"] = rss_mb(pid)
        slots = asyncio.Semaphore(IN_FLIGHT)

        async def one(call: Call) -> None:
            started = time.perf_counter()
            try:
                result = await mcp.call_tool(call.tool, call.arguments)
            except asyncio.CancelledError:
                tally.cancelled += 1
                return
            except Exception as exc:
                tally.lose(call, exc)
                return
            finally:
                slots.release()
            tally.answered_one(pid, min(1000, n // 2))
            tally.judge(call, call.check(result.meta[ANSWER_META]), result.content[0].text, started)

        tasks = []
        for kind in kinds(rng, n, mix):
            await slots.acquire()
            call = make_call(kind, corpus, rng)
            tally.sent += 1
            task = asyncio.ensure_future(one(call))
            if rng.random() < CANCEL_RATE:
                asyncio.get_running_loop().call_later(rng.uniform(0, 0.02), task.cancel)
            tasks.append(task)
        await asyncio.gather(*tasks, return_exceptions=True)
        tally.memory["end"] = rss_mb(pid)
    return tally


# --- the report -----------------------------------------------------------------------------


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f}"


def growth(memory: dict[str, float]) -> str:
    base = memory.get("after 1,000")
    if not base:
        return "n/a"
    return f"{(memory['end'] - base) / base * 100:+.1f}%"


def report_tally(report: Report, door: str, tally: Tally) -> None:
    for kind in MIX:
        times = tally.times.get(kind)
        if times:
            report.add(door, kind, len(times), ms(statistics.median(times)), ms(percentile(times, 0.99)))
    report.note(
        f"{door}: {tally.sent:,} sent, {tally.answered:,} answered, lost {tally.lost}, wrong {tally.wrong}, "
        f"cancelled {tally.cancelled}; memory (RSS, MB) start {tally.memory.get('start', 0):.0f}, "
        f"after 1,000 {tally.memory.get('after 1,000', 0):.0f}, end {tally.memory.get('end', 0):.0f} "
        f"({growth(tally.memory)} since the first 1,000)"
        + ("" if tally.exit_code is None else f"; exit code after shutdown and exit: {tally.exit_code}")
    )
    for example in tally.wrong_examples:
        report.note(f"{door} example: {example}")


def main() -> None:
    with tempfile.TemporaryDirectory(prefix="soak-") as folder:
        corpus = make_corpus(Path(folder))
        report = Report(
            "soak",
            "Soak: mixed requests, 32 in flight, random cancels",
            ["door", "kind", "n", "p50 ms", "p99 ms"],
        )
        started = time.perf_counter()
        stdio = asyncio.run(soak_stdio(corpus, STDIO_REQUESTS))
        report_tally(report, "stdio", stdio)
        mcp = asyncio.run(soak_mcp(corpus, MCP_REQUESTS))
        report_tally(report, "mcp", mcp)
        alone, loaded, heavy_done = asyncio.run(reads_under_heavy_load(corpus))
        for label, times in (("read, idle server", alone), ("read, 32 heavy in flight", loaded)):
            report.add("stdio", label, len(times), ms(statistics.median(times)), ms(percentile(times, 0.99)))
        report.note(f"{heavy_done:,} heavy calls completed while the {len(loaded)} loaded reads ran")
        report.note(f"{len(corpus.modules)} files; the whole soak took {time.perf_counter() - started:.0f} s")
        report.write()
