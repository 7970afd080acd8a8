"""Monorepo scale: the symbol index against Universal Ctags, raw tree-sitter parsing and
ripgrep, on three workspaces built from the registries' packages (issue 16).

- django: Django 5.2.8's sdist (PyPI);
- mid: 3 copies of Django, rxjs 7.8.2 and jQuery 3.7.1 (npm);
- monorepo: 8 copies of Django, rxjs, jQuery and this interpreter's standard library.

Copies are hard links under renamed folders (benchmarks/.cache/scale, never committed), the
Django scale's too: the 9,000-line module typed into is written into each workspace, never
into the sdist that the other benchmarks search.
Each figure that holds memory or a cold cache runs in a fresh process. Over LSP stdio the
server is `python -m lsp_agent serve`, driven by the JSON-RPC client of benchmarks/common.py.

`python -m benchmarks scale` runs every scale; `BENCH_SCALES=django,mid` picks some.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks.common import CACHE, Client, Report, django_tree, npm_package, stdlib, the_run
from lsp_agent.search import find_rg

SCALES = {"django": (1, False), "mid": (3, False), "monorepo": (8, True)}  # Django copies, the stdlib
CTAGS_LANGUAGES = "Python,JavaScript,TypeScript,Go,Rust,Java,C,C++,C#,Ruby,PHP,Sh"
NAME = "get_response"  # a name defined in every Django copy, asked for with find_symbol
BROAD = "get"  # a workspace/symbol query that matches a large part of the index
BIG_FILE_LINES = 9_000


def workspace(scale: str) -> Path:
    copies, with_stdlib = SCALES[scale]
    root = CACHE / "scale" / scale
    if root.is_dir():
        return root
    building = root.with_name(root.name + ".partial")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir(parents=True)
    if scale == "django":  # a copy too: the big file typed into must not land in the sdist others search
        shutil.copytree(django_tree(), building, copy_function=os.link, dirs_exist_ok=True)
    else:
        for n in range(1, copies + 1):
            shutil.copytree(django_tree(), building / f"django{n}", copy_function=os.link)
        shutil.copytree(npm_package("rxjs", "7.8.2"), building / "rxjs", copy_function=os.link)
        shutil.copytree(npm_package("jquery", "3.7.1"), building / "jquery", copy_function=os.link)
    if with_stdlib:
        shutil.copytree(
            stdlib(), building / "stdlib", ignore=shutil.ignore_patterns("site-packages", "__pycache__")
        )
    building.rename(root)
    return root


def big_file(root: Path) -> Path:
    """A 9,000-line Python module made of Django's, inside the workspace (as typed into)."""
    target = root / "big_module.py"
    if not target.exists():
        lines: list[str] = []
        for module in sorted((django_tree() / "django" / "db" / "models").rglob("*.py")):
            lines += module.read_text(encoding="utf-8").splitlines()
            if len(lines) >= BIG_FILE_LINES:
                break
        target.write_text("\n".join(lines[:BIG_FILE_LINES]) + "\n", encoding="utf-8")
    return target


# --- measurements in a fresh process (python -m benchmarks.bench_scale MEASURE ROOT …) -------


def rss_mib() -> float:
    with open("/proc/self/status") as status:
        kib = next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))
    return kib / 1024


def cpu_seconds() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_index(root: Path, cache: str) -> dict:
    """Build the index (cold when the cache folder is empty, else warm): time, CPU, memory,
    then find_symbol and workspace/symbol in process."""
    import gc

    from lsp_agent.syntax import files as files_module
    from lsp_agent.syntax.index import SymbolIndex
    from lsp_agent.tools import Context, call
    from lsp_agent.workspace import Workspace

    ws = Workspace([root])
    all_files = sum(1 for _ in files_module.source_files(ws, root, wanted=lambda p: True))
    gc.collect()
    before = rss_mib()
    index = SymbolIndex(ws, cache=Path(cache))
    reports: list[str] = []
    cpu, started = cpu_seconds(), time.perf_counter()
    indexed = index.build(lambda message, percentage: reports.append(message))
    wall, cpu = time.perf_counter() - started, cpu_seconds() - cpu
    gc.collect()
    memory = rss_mib() - before
    symbols = sum(len(r.kinds) for r in index.files.values())
    ctx = Context(ws, index=index)
    find = best_of(lambda: call(ctx, "find_symbol", {"name_path": NAME}))
    exact = best_of(lambda: index.query(NAME))
    broad = best_of(lambda: index.query(BROAD), repeat=3)
    return {
        "files": all_files, "source": indexed, "symbols": symbols, "wall": wall, "cpu": cpu, "memory": memory,
        "reports": len(reports), "find": find, "query": exact, "broad": broad,
    }  # fmt: skip


def measure_floor(root: Path) -> dict:
    """Raw tree-sitter: every source file the index takes, parsed once on one core."""
    from lsp_agent.syntax.files import source_files
    from lsp_agent.syntax.index import INDEX_MAX_BYTES
    from lsp_agent.syntax.languages import language_for
    from lsp_agent.syntax.parsing import PARSES
    from lsp_agent.workspace import Workspace

    ws = Workspace([root])
    paths = [p for p in source_files(ws, root) if p.stat().st_size <= INDEX_MAX_BYTES]
    cpu, started = cpu_seconds(), time.perf_counter()
    for path in paths:
        language = language_for(path)
        assert language is not None
        PARSES.parser(language).parse(path.read_bytes())
    return {"wall": time.perf_counter() - started, "cpu": cpu_seconds() - cpu, "files": len(paths)}


def best_of(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def in_fresh_process(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_scale", *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def ctags(root: Path) -> dict:
    if shutil.which("ctags") is None:
        subprocess.run(["apt-get", "install", "-y", "-q", "universal-ctags"], check=True)
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(
            ["ctags", "-R", f"--languages={CTAGS_LANGUAGES}", "-f", f"{tmp}/tags", str(root)],
            check=True,
            stderr=subprocess.DEVNULL,
        )
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        with open(f"{tmp}/tags", "rb") as lines:
            tags = sum(1 for line in lines if not line.startswith(b"!_"))
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "rss": after.ru_maxrss / 1024, "tags": tags}


def ripgrep(root: Path, pattern: str) -> float:
    rg = find_rg()
    assert rg is not None
    started = time.perf_counter()
    subprocess.run([rg, "--count", "--fixed-strings", pattern, str(root)], stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


# --- over LSP stdio --------------------------------------------------------------------------


def p99(times: list[float]) -> float:
    return sorted(times)[min(len(times) - 1, int(len(times) * 0.99))]


async def over_lsp(root: Path, cache: str) -> dict:
    """With a warm index on disk: find_symbol against workspace/symbol for one name, and a
    read sent behind a broad workspace/symbol and behind a cold search."""
    client = await Client.start(root, cache)
    started = time.perf_counter()
    await asyncio.wait_for(client.indexed.wait(), 600)
    ready = time.perf_counter() - started
    find = [await client.timed("lspAgent/find_symbol", {"name_path": NAME}) for _ in range(7)]
    query = [await client.timed("workspace/symbol", {"query": NAME}) for _ in range(7)]
    read = {"path": "big_module.py", "start": 4000, "max_chars": 2000}
    behind_symbol, behind_search = [], []
    for _ in range(10):
        heavy = asyncio.ensure_future(client.request("workspace/symbol", {"query": BROAD}))
        await asyncio.sleep(0.005)
        behind_symbol.append(await client.timed("lspAgent/read", read))
        await heavy
        heavy = asyncio.ensure_future(
            client.request("lspAgent/search", {"pattern": "self", "max_chars": 4000})
        )
        await asyncio.sleep(0.005)
        behind_search.append(await client.timed("lspAgent/read", read))
        await heavy
    await client.stop()
    return {
        "ready": ready, "find": statistics.median(find), "query": statistics.median(query),
        "behind_symbol": p99(behind_symbol), "behind_search": p99(behind_search),
    }  # fmt: skip


async def typing(root: Path, cache: str, edits: int = 40, *, index_ready: bool = False) -> dict:
    """documentSymbol after each keystroke in the 9,000-line file while a cold index builds
    (an empty cache), or once the index is ready (index_ready)."""
    path = big_file(root)
    client = await Client.start(root, cache)
    if index_ready:
        await asyncio.wait_for(client.indexed.wait(), 600)
    uri = path.as_uri()
    lines = path.read_text(encoding="utf-8").split("\n")
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": "\n".join(lines)}})  # fmt: skip
    await client.request("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
    row = next(n for n in range(BIG_FILE_LINES // 2, BIG_FILE_LINES) if lines[n].startswith("        return"))
    times, during = [], 0
    for n in range(edits):
        change = {"range": {"start": {"line": row, "character": 8}, "end": {"line": row, "character": 8}}, "text": "x" if n % 2 == 0 else ""}  # fmt: skip
        if n % 2:
            change["range"]["end"]["character"] = 9
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n + 2}, "contentChanges": [change]})  # fmt: skip
        times.append(await client.timed("textDocument/documentSymbol", {"textDocument": {"uri": uri}}))
        during += not client.indexed.is_set()
        await asyncio.sleep(0.05)
    await client.stop()
    return {"p50": statistics.median(times), "p99": p99(times), "during": during, "edits": edits}


def leading_number(cell: str) -> float | None:
    token = cell.split(" ")[0].rstrip("×").replace(",", "")
    try:
        return float(token)
    except ValueError:
        return None


def grown(before: list[str], cell: str) -> str:
    """A cell with its growth from the previous scale's: `12.3 (×2.1)`."""
    if not before:
        return cell
    old, new = leading_number(before[-1]), leading_number(cell)
    if old is None or new is None or old == 0 or cell.endswith("×"):
        return cell
    return f"{cell} [×{new / old:.1f}]"


# --- the report --------------------------------------------------------------------------------


def main() -> None:
    chosen = os.environ.get("BENCH_SCALES", ",".join(SCALES)).split(",")
    report = Report(
        "scale",
        "Monorepo scale: the symbol index against ctags, tree-sitter and ripgrep",
        ["figure", *chosen, "goal"],
    )
    figures: dict[str, dict[str, object]] = {}
    started = the_run()
    for scale in chosen:
        root = workspace(scale)
        big_file(root)
        with tempfile.TemporaryDirectory() as cold_cache:
            # the floor and ctags right beside the cold index: the shared cores' load varies
            floor = in_fresh_process("floor", str(root))
            cold = in_fresh_process("index", str(root), cold_cache)
            tags = ctags(root)
            warm = in_fresh_process("index", str(root), cold_cache)
            lsp = asyncio.run(over_lsp(root, cold_cache))
            ready = asyncio.run(typing(root, cold_cache, index_ready=True))
        with tempfile.TemporaryDirectory() as empty:
            typed = asyncio.run(typing(root, empty))
        figures[scale] = {
            "files (with a grammar)": f"{cold['files']:,} ({cold['source']:,})",
            "symbols indexed / ctags tags": f"{cold['symbols']:,} / {tags['tags']:,}",
            "cold index, wall s (CPU s)": f"{cold['wall']:.1f} ({cold['cpu']:.1f})",
            "tree-sitter parse alone, 1 core, wall s (CPU s)": f"{floor['wall']:.1f} ({floor['cpu']:.1f})",
            "  cold index / parse floor, wall (CPU)": f"{cold['wall'] / floor['wall']:.2f}× ({cold['cpu'] / floor['cpu']:.2f}×)",
            "ctags -R, 1 core, wall s (CPU s)": f"{tags['wall']:.1f} ({tags['cpu']:.1f})",
            "  cold index / ctags, wall (CPU)": f"{cold['wall'] / tags['wall']:.2f}× ({cold['cpu'] / tags['cpu']:.2f}×)",
            "ripgrep count 'self', s": f"{ripgrep(root, 'self'):.2f}",
            "progress reports (cold)": f"{cold['reports']}",
            "warm start from disk, s": f"{warm['wall']:.2f}",
            "index memory, MiB per 10,000 source files": f"{cold['memory'] * 10_000 / max(cold['source'], 1):.1f}",
            "ctags peak memory, MiB": f"{tags['rss']:.0f}",
            "find_symbol (in process), ms": f"{cold['find'] * 1000:.1f}",
            "workspace/symbol same name (in process), ms": f"{cold['query'] * 1000:.1f}",
            f"workspace/symbol {BROAD!r} (in process), ms": f"{cold['broad'] * 1000:.0f}",
            "find_symbol over LSP, ms": f"{lsp['find'] * 1000:.1f}",
            "workspace/symbol same name over LSP, ms": f"{lsp['query'] * 1000:.1f}",
            "  find_symbol / workspace/symbol (LSP)": f"{lsp['find'] / lsp['query']:.2f}×",
            "read behind a broad workspace/symbol, p99 ms": f"{lsp['behind_symbol'] * 1000:.0f}",
            "read behind a cold search, p99 ms": f"{lsp['behind_search'] * 1000:.0f}",
            f"documentSymbol after an edit, {BIG_FILE_LINES:,} lines, p99 ms": f"{typed['p99'] * 1000:.0f} (p50 {typed['p50'] * 1000:.0f}; {typed['during']}/{typed['edits']} while indexing)",
            "  the same once the index is ready, p99 ms": f"{ready['p99'] * 1000:.0f} (p50 {ready['p50'] * 1000:.0f})",
        }  # fmt: skip
        print(f"{scale}: {json.dumps(figures[scale], ensure_ascii=False)}", flush=True)
    goals = {
        "cold index / parse floor": "wall ≤ 1× (both cores)",
        "warm start from disk, s": "≤ 3 s",
        "index memory, MiB per 10,000 source files": "≤ 40",
        "find_symbol / workspace/symbol (LSP)": "≤ 2×",
        "read behind a broad workspace/symbol, p99 ms": "≤ 50",
        "read behind a cold search, p99 ms": "≤ 50",
        "documentSymbol after an edit": "≤ 100 (p99)",
        "progress reports (cold)": "a few per second",
    }
    for figure in figures[chosen[0]]:
        goal = next((g for key, g in goals.items() if key in figure), "")
        cells = [str(figures[s][figure]) for s in chosen]
        report.add(figure, *(grown(cells[:n], cell) for n, cell in enumerate(cells)), goal)
    report.note(f"Machine: {os.cpu_count()} cores, shared; Python {sys.version.split()[0]}.")
    report.note(f"Run: from {started} to {the_run()}.")
    report.write()


if __name__ == "__main__":
    what, root, *rest = sys.argv[1:]
    result = measure_index(Path(root), rest[0]) if what == "index" else measure_floor(Path(root))
    print(json.dumps(result))
