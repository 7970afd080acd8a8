"""SCIP: navigation from indexes by scip-python (Django 5.2.8's `django/` package: its tests are
too much for scip-python) and scip-typescript (rxjs 7.8.2), and a monorepo-sized tree of COPIES
copies of rxjs and DJANGO_COPIES of Django, each package with its own indexes.

Per tree: the indexer's time (`lsp-agent index scip`, once: the indexes are kept in the
benchmark cache), the cold load (building the on-disk table) and warm open (the table there)
each in a fresh process, the memory an opened index holds per 10,000 documents, the table's
size; then for SAMPLE occurrences of global symbols drawn from the index (decoded again by
the protobuf runtime): references and definition latency from the index beside the
language's server (LIVE=0 leaves it out) and the syntax source, and precision and recall of
the index's answers against the indexer's occurrences.

Memory, measured: a fresh process imports lsp_agent, reads its anonymous resident memory
(RssAnon in /proc/self/status: the heap, Python's and sqlite's, not the shared libraries or
the table's file pages, which the kernel shares between processes and may drop), opens every
index of the tree (its table already built), checks every document's file once (the
verdicts an answer keeps) and answers references at LOAD_QUERIES documents, then reads
RssAnon again: the difference is what the opened indexes hold. The cold build's peak
(VmHWM above the start) is shown beside it; the table's size is what the page cache holds
at most.

Goals (issue 25): references <= 50 ms at monorepo scale; <= 50 MiB per 10,000 documents;
precision and recall 1.0.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL, Semantic
from lsp_agent.semantic.scip_indexers import run as index_folder
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.scip_protobuf import expected, occurrences_of, sharing
from tests.support.scip_protobuf import truth as truth_of

from .bench_precision import settings as live_settings
from .common import CACHE, Report, django_tree, median, rxjs_tree

SERVERS = Path(os.environ.get("SERVERS", Path.home() / ".cache/lsp-agent-ci/servers"))
SAMPLE = int(os.environ.get("SAMPLE", "40"))
COPIES = int(os.environ.get("COPIES", "40"))  # of rxjs (251 documents each): 40 are 10,040
DJANGO_COPIES = int(os.environ.get("DJANGO_COPIES", "2"))
LIVE = os.environ.get("LIVE", "1") == "1"
TOOL_SAMPLE = int(os.environ.get("TOOL_SAMPLE", "10"))  # of the SAMPLE, also asked through whole tool calls

LOAD = """
import json, sys, time
from pathlib import Path
def status(key):
    for line in open("/proc/self/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
from lsp_agent.semantic import scip
from lsp_agent.workspace import Workspace
ws = Workspace([Path(sys.argv[1])])
before, total = status("RssAnon"), status("VmRSS")
started = time.perf_counter()
indexes = scip.STORE.every(ws, [], lambda m: None)
took = time.perf_counter() - started
peak = status("VmHWM") - total  # the high-water mark above the start (a cold load builds)
documents = occurrences = 0
for index in indexes:
    paths = [row[0] for row in index.query("SELECT path FROM documents")]
    documents += len(paths)
    occurrences += index.query("SELECT count(*) FROM occurrences")[0][0]
    for relative in paths:
        index.current(ws, index.root / relative)
    for relative in paths[: int(sys.argv[2])]:
        rows = index.query("SELECT o.line, o.col FROM occurrences o JOIN documents d ON d.id = o.document "
                           "WHERE d.path=? LIMIT 1", relative)
        if rows:
            lines = (index.root / relative).read_text(errors="replace").split("\\n")  # not the workspace's cache
            line = lines[rows[0][0]] if rows[0][0] < len(lines) else ""
            try:
                scip.lookup(ws, [], "references", index.root / relative, rows[0][0], line, rows[0][1],
                            lambda m: None)
            except (scip.Stale, scip.Refused):
                pass
print(json.dumps({"seconds": took, "held": status("RssAnon") - before, "peak": max(0, peak),
    "indexes": len(indexes), "documents": documents, "occurrences": occurrences}))
"""
LOAD_QUERIES = 20  # per index, in the memory figure


def indexed(root: Path, language: str, only: str | None = None) -> Path:
    index = root / (only or ".") / f"index.{language}.scip"
    if not index.exists():
        started = time.perf_counter()
        index_folder(root, [str(SERVERS / "scip" / "node_modules" / ".bin")], print, only)
        (root / f".index.{language}.seconds").write_text(f"{time.perf_counter() - started:.0f}")
    return index


def monorepo(django: Path | None, rxjs: Path) -> Path:
    """COPIES copies of rxjs and DJANGO_COPIES of Django (when indexed), each package with
    its index, under one root."""
    root = CACHE / f"scip-monorepo-{COPIES}-{DJANGO_COPIES if django else 0}"
    packages = [("rxjs", rxjs, n) for n in range(COPIES)]
    packages += [("django", django, n) for n in range(DJANGO_COPIES)] if django else []
    for name, tree, n in packages:
        target = root / f"{name}-{n}"
        if not target.exists():
            shutil.copytree(tree, target, ignore=shutil.ignore_patterns(".index.*"))
    return root


def load(root: Path, cache: str) -> dict:
    env = {**os.environ, "XDG_CACHE_HOME": cache}
    out = subprocess.run(
        [sys.executable, "-c", LOAD, str(root), str(LOAD_QUERIES)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def sample(index: Path) -> list[tuple[str, int, int, set]]:
    """SAMPLE occurrences of global symbols: (document, line, column, the keys of every symbol
    occurring at that range)."""
    together = sharing(index)
    found = [
        (d, r[0], r[1], together[(d, r)])
        for d, r, s, _ in occurrences_of(index)
        if not s.startswith("local ")
    ]
    return random.Random(25).sample(found, min(SAMPLE, len(found)))


def score(ours: set, right: set) -> tuple[int, int, int]:
    return len(ours & right), len(ours), len(right)


def queries(root: Path, index: Path, report: Report, tree: str, live: bool, truth: list[Path]) -> None:
    """Latency and scores at SAMPLE occurrences of `index`; the truth is the occurrences in
    the `truth` indexes (in a monorepo, every package that uses the symbol). Each question
    gets its own Semantic, as each tool call does."""
    uses, definitions = truth_sets(truth)
    ws = Workspace([root])
    ctx = Context(ws, Settings())
    times: dict[str, list[float]] = {k: [] for k in ("first", "refs", "defs", "tool", "syn_refs", "syn_defs")}
    hits = [0, 0, 0, 0, 0, 0]
    points = sample(index)
    for n, (document, line, column, keys) in enumerate(points):
        all_uses, all_definitions = truth_of(uses, definitions, keys)
        path = index.parent / document
        started = time.perf_counter()  # its files checked for the first time in this process
        Semantic(ws, Settings()).locations("references", path, line + 1, column + 1)
        times["first"].append(time.perf_counter() - started)
        for method, key, right, at in (
            ("references", "refs", all_uses, 0),
            ("definition", "defs", all_definitions, 3),
        ):
            started = time.perf_counter()
            answer = Semantic(ws, Settings()).locations(method, path, line + 1, column + 1)
            times[key].append(time.perf_counter() - started)
            for i, n in enumerate(score(set(answer.locations), right)):
                hits[at + i] += n
        if n >= TOOL_SAMPLE:
            continue
        arguments = {"path": str(path), "line": line + 1, "column": column + 1}
        for tool, key, extra in (("references", "tool", {}), ("references", "syn_refs", {"precision": "syntax"}),
                                 ("definition", "syn_defs", {"precision": "syntax"})):  # fmt: skip
            started = time.perf_counter()
            call(ctx, tool, {**arguments, **extra})
            times[key].append(time.perf_counter() - started)
    live_refs, live_defs = live_times(root, index, points) if live else ([], [])
    ms = {k: median(v) * 1000 for k, v in times.items()}
    ms |= {"live_refs": median(live_refs) * 1000 if live_refs else None}
    ms |= {"live_defs": median(live_defs) * 1000 if live_defs else None}
    report.add(
        tree, len(points), ms["first"], ms["refs"], ms["live_refs"], ms["syn_refs"], ms["defs"], ms["live_defs"],
        ms["syn_defs"], ms["tool"],
        ratio(hits[0], hits[1]), ratio(hits[0], hits[2]), ratio(hits[3], hits[4]), ratio(hits[3], hits[5]),
    )  # fmt: skip
    print("  ".join(str(c) for c in report.rows[-1]), flush=True)  # a row as soon as it is measured


def truth_sets(truth: list[Path]) -> tuple[dict, dict]:
    uses: dict = {}
    definitions: dict = {}
    for other in truth:
        more_uses, more_definitions = expected(other)
        for key, found in more_uses.items():
            uses.setdefault(key, set()).update(found)
        for key, found in more_definitions.items():
            definitions.setdefault(key, set()).update(found)
    return uses, definitions


def live_times(root: Path, index: Path, points: list) -> tuple[list[float], list[float]]:
    """references and definition from the language's server at the same positions, once it
    is warm (asked directly: the index in the tree would answer `locations` first)."""
    source = Semantic(Workspace([root]), live_settings())
    first = index.parent / points[0][0], points[0][1] + 1, points[0][2] + 1
    last = -1
    while True:  # until the server no longer says it may be incomplete and a count holds
        answer = source.server_locations("references", *first)
        if answer.partial is None and len(answer.locations) == last:
            break
        last = len(answer.locations)
        time.sleep(2)
    refs, defs = [], []
    for document, line, column, _ in points[:10]:
        for method, times in (("references", refs), ("definition", defs)):
            started = time.perf_counter()
            source.server_locations(method, index.parent / document, line + 1, column + 1)
            times.append(time.perf_counter() - started)
    POOL.stop_all()
    return refs, defs


def ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def main() -> None:
    django, rxjs = django_tree(), rxjs_tree()
    trees = {"rxjs": (rxjs, indexed(rxjs, "typescript"))}
    if os.environ.get("DJANGO", "1") == "1":
        trees["Django"] = (django, indexed(django, "python", only="django"))
    mono = monorepo(django if "Django" in trees else None, rxjs)
    label = f"monorepo ({COPIES}x rxjs" + (f", {DJANGO_COPIES}x Django)" if "Django" in trees else ")")
    loads = Report("scip_load", "SCIP: loading indexes (a fresh process each)", [
        "tree", "indexes", "documents", "occurrences", "indexer s", "cold load s", "warm open s",
        "build peak MiB", "held MiB", "held MiB per 10k docs", "table MiB",
    ])  # fmt: skip
    for name, root in [(n, trees[n][0]) for n in trees] + [(label, mono)]:
        with tempfile.TemporaryDirectory() as cache:
            cold, warm = load(root, cache), load(root, cache)
            table = sum(f.stat().st_size for f in Path(cache).rglob("*.sqlite")) / 2**20
        seconds = root / f".index.{'python' if name == 'Django' else 'typescript'}.seconds"
        indexer = seconds.read_text().strip() if seconds.exists() else "-"  # the monorepo's are copies
        per = warm["held"] / 2**20 / warm["documents"] * 10_000 if warm["documents"] else 0.0
        loads.add(
            name, warm["indexes"], warm["documents"], warm["occurrences"], indexer, cold["seconds"],
            warm["seconds"], cold["peak"] / 2**20, warm["held"] / 2**20, per, table,
        )  # fmt: skip
    loads.note(
        "held: anonymous resident memory (RssAnon) a fresh process gains by opening every index of the "
        f"tree (tables built), checking every document's file once and answering references at "
        f"{LOAD_QUERIES} documents per index; build peak: VmHWM above the start while the tables are "
        "built (the cold load); the table lives on disk and in the page cache, shared by every process."
    )
    loads.write()
    report = Report("scip", "SCIP: references and definition (median ms per query)", [
        "tree", "queries", "refs index first", "refs index", "refs live", "refs syntax", "def index", "def live",
        "def syntax", "references tool", "refs precision", "refs recall", "def precision", "def recall",
    ])  # fmt: skip
    for name, (root, index) in trees.items():
        queries(root, index, report, name, LIVE, [index])
    for language, package in (("typescript", "rxjs"), ("python", "django")):
        copies = sorted(mono.glob(f"{package}-*/**/index.{language}.scip"))
        if copies:  # the truth: every index of the language (Django's JavaScript shares symbols with rxjs)
            truth = sorted(mono.glob(f"*/**/index.{language}.scip"))
            queries(mono, copies[0], report, f"{label}, {package} part", False, truth)
    report.note(
        "index: Semantic.locations answered by the index (a new one per question, as per tool call), "
        "asked twice: first (each file of the answer checked for the first time in this process, by its "
        "stat against the table's; the table's pages read from disk or the kernel's cache), then again "
        "(the verdicts kept: what a running server answers); "
        "live: textDocument/references or /definition from basedpyright or typescript-language-server, "
        "warm, 10 queries (not run on the monorepo); syntax: the references or definition tool with "
        f"precision=syntax, at the first {TOOL_SAMPLE} positions; references tool: the whole call (the index's answer merged with by-name "
        "matching). Precision and recall: (path, line, column) of each location against the indexer's "
        "occurrences (decoded by the protobuf runtime). In the monorepo the copies share their symbols, "
        "so each answer holds the locations of every copy, and so does its truth."
    )
    report.write()
