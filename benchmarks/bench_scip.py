"""SCIP: navigation from indexes by scip-python (Django 5.2.8) and scip-typescript (rxjs 7.8.2),
and a monorepo-sized tree of COPIES copies of both, each package with its own index.

Per tree: the indexer's time (`lsp-agent index scip`, once: the indexes are kept in the
benchmark cache), the cold load (building the on-disk table) and warm open (the table there)
in a fresh process, the resident memory the load adds (after, and at its peak) per 10,000
documents, the table's size; then for SAMPLE occurrences of global symbols drawn from the
index (decoded again by the protobuf runtime): references and definition latency from the
index beside the language's server (LIVE=0 leaves it out) and the syntax source, and
precision and recall of the index's answers against the indexer's occurrences.

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
from .bench_precision import warm
from .common import CACHE, Report, django_tree, median, rxjs_tree

SERVERS = Path(os.environ.get("SERVERS", Path.home() / ".cache/lsp-agent-ci/servers"))
SAMPLE = int(os.environ.get("SAMPLE", "40"))
COPIES = int(os.environ.get("COPIES", "40"))  # of rxjs (251 documents each): 40 are 10,040
DJANGO_COPIES = int(os.environ.get("DJANGO_COPIES", "2"))
LIVE = os.environ.get("LIVE", "1") == "1"

LOAD = """
import json, os, resource, sys, time
from pathlib import Path
def rss():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
from lsp_agent.semantic import scip
from lsp_agent.workspace import Workspace
ws = Workspace([Path(sys.argv[1])])
before, peak_before = rss(), resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
started = time.perf_counter()
indexes = scip.STORE.every(ws, [], lambda m: None)
took = time.perf_counter() - started
documents = sum(i.query("SELECT count(*) FROM documents")[0][0] for i in indexes)
occurrences = sum(i.query("SELECT count(*) FROM occurrences")[0][0] for i in indexes)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": took, "added": rss() - before, "peak": max(0, peak - peak_before),
    "indexes": len(indexes), "documents": documents, "occurrences": occurrences}))
"""


def indexed(root: Path, language: str) -> Path:
    index = root / f"index.{language}.scip"
    if not index.exists():
        started = time.perf_counter()
        index_folder(root, [str(SERVERS / "scip" / "node_modules" / ".bin")], print)
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
        [sys.executable, "-c", LOAD, str(root)], env=env, capture_output=True, text=True, check=True
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
    the `truth` indexes (in a monorepo, every package that uses the symbol)."""
    uses: dict = {}
    definitions: dict = {}
    for other in truth:
        more_uses, more_definitions = expected(other)
        for key, found in more_uses.items():
            uses.setdefault(key, set()).update(found)
        for key, found in more_definitions.items():
            definitions.setdefault(key, set()).update(found)
    ws = Workspace([root])
    source = Semantic(ws, Settings())
    ctx = Context(ws, Settings())
    times: dict[str, list[float]] = {k: [] for k in ("refs", "defs", "tool", "syntax", "live")}
    hits = [0, 0, 0, 0, 0, 0]
    points = sample(index)
    for document, line, column, keys in points:
        all_uses, all_definitions = truth_of(uses, definitions, keys)
        path = index.parent / document
        started = time.perf_counter()
        answer = source.locations("references", path, line + 1, column + 1)
        times["refs"].append(time.perf_counter() - started)
        for i, n in enumerate(score(set(answer.locations), all_uses)):
            hits[i] += n
        started = time.perf_counter()
        answer = source.locations("definition", path, line + 1, column + 1)
        times["defs"].append(time.perf_counter() - started)
        for i, n in enumerate(score(set(answer.locations), all_definitions)):
            hits[3 + i] += n
        arguments = {"path": str(path), "line": line + 1, "column": column + 1}
        started = time.perf_counter()
        call(ctx, "references", arguments)
        times["tool"].append(time.perf_counter() - started)
        started = time.perf_counter()
        call(ctx, "references", {**arguments, "precision": "syntax"})
        times["syntax"].append(time.perf_counter() - started)
    if live:
        times["live"] = live_times(root, index, points)
    ms = {k: median(v) * 1000 if v else None for k, v in times.items()}
    report.add(
        tree, len(points), ms["refs"], ms["defs"], ms["tool"], ms["syntax"], ms["live"],
        ratio(hits[0], hits[1]), ratio(hits[0], hits[2]), ratio(hits[3], hits[4]), ratio(hits[3], hits[5]),
    )  # fmt: skip


def live_times(root: Path, index: Path, points: list) -> list[float]:
    """references from the language's server (warm) at the same positions."""
    source = Semantic(Workspace([root]), live_settings())
    first = points[0]
    warm(source, index.parent / first[0], first[1] + 1, first[2] + 1)
    times = []
    for document, line, column, _ in points[:10]:
        started = time.perf_counter()
        source.server_locations("references", index.parent / document, line + 1, column + 1)
        times.append(time.perf_counter() - started)
    POOL.stop_all()
    return times


def ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


def main() -> None:
    django, rxjs = django_tree(), rxjs_tree()
    trees = {"rxjs": (rxjs, indexed(rxjs, "typescript"))}
    if os.environ.get("DJANGO", "1") == "1":
        trees["Django"] = (django, indexed(django, "python"))
    mono = monorepo(django if "Django" in trees else None, rxjs)
    label = f"monorepo ({COPIES}x rxjs" + (f", {DJANGO_COPIES}x Django)" if "Django" in trees else ")")
    loads = Report("scip_load", "SCIP: loading indexes (a fresh process each)", [
        "tree", "indexes", "documents", "occurrences", "indexer s", "cold load s", "warm open s",
        "MiB added", "MiB peak", "MiB per 10k docs", "table MiB",
    ])  # fmt: skip
    for name, root in [(n, trees[n][0]) for n in trees] + [(label, mono)]:
        with tempfile.TemporaryDirectory() as cache:
            cold, again = load(root, cache), load(root, cache)
            table = sum(f.stat().st_size for f in Path(cache).rglob("*.sqlite")) / 2**20
        seconds = root / f".index.{'python' if name == 'Django' else 'typescript'}.seconds"
        indexer = seconds.read_text().strip() if seconds.exists() else "-"  # the monorepo's are copies
        per = cold["added"] / 2**20 / cold["documents"] * 10_000 if cold["documents"] else 0.0
        loads.add(
            name, cold["indexes"], cold["documents"], cold["occurrences"], indexer,
            cold["seconds"], again["seconds"], cold["added"] / 2**20, cold["peak"] / 2**20, per, table,
        )  # fmt: skip
    loads.write()
    report = Report("scip", "SCIP: references and definition (median ms per query)", [
        "tree", "queries", "refs (index)", "definition (index)", "references tool", "syntax tool",
        "live server refs", "refs precision", "refs recall", "def precision", "def recall",
    ])  # fmt: skip
    for name, (root, index) in trees.items():
        queries(root, index, report, name, LIVE, [index])
    for language, package in (("typescript", "rxjs"), ("python", "django")):
        copies = sorted(mono.glob(f"{package}-*/index.{language}.scip"))
        if copies:
            queries(mono, copies[0], report, f"{label}, {package} part", False, copies)
    report.note(
        "Index columns: Semantic.locations answered by the index; references tool: the whole tool call "
        "(by-name matching merged in); syntax tool: the same call with precision=syntax; live server: "
        "textDocument/references from basedpyright or typescript-language-server, warm, 10 queries. "
        "Precision and recall: (path, line, column) of each location against the indexer's occurrences "
        "(decoded by the protobuf runtime). In the monorepo the copies share their symbols, so each answer "
        "holds the locations of every copy, and so does its truth."
    )
    report.write()
