"""overview's confirmed ranking (tools/confirmed_ranking.py) on Django 5.2.8's `django/`
package: the time of one default page ranked by name (precision=syntax) beside the same page
re-ranked by the references basedpyright confirms, and beside a SCIP index's where one was
built (SCIP_ROOT: a folder holding a copy of `django/` and the index.python.scip that
`lsp-agent index scip` wrote for it).

The by-name ranking and the confirmed one are made afresh for every run (both caches
emptied), alternating, RUNS of each; the first confirmed run also starts the server (shown
apart, as the cold cost). The workspace root is the tree holding `django/` (so that the
server resolves `from django.… import`), overview maps `django/`. Also shown: how many of the candidates were confirmed, and
how many of the by-name top 10 stay in the confirmed top 10.

LIVE=0 leaves the server out. Servers: SERVERS (default ~/.cache/lsp-agent-ci/servers, what `make test-servers` installs).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL, Semantic, scip
from lsp_agent.syntax import ranking
from lsp_agent.tools import Context, call, confirmed_ranking
from lsp_agent.workspace import Workspace

from .bench_precision import warm
from .common import CACHE, Report, django_tree, median

SERVERS = Path(os.environ.get("SERVERS", Path.home() / ".cache/lsp-agent-ci/servers"))
RUNS = int(os.environ.get("RUNS", "3"))
SCIP_ROOT = Path(os.environ.get("SCIP_ROOT", CACHE / "confirmed-ranking"))


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(ctx: Context, **arguments) -> tuple[float, dict]:
    """One overview, ranked afresh (neither the by-name ranking nor a re-ranking kept)."""
    ranking.REMEMBERED.put(None, ([], 0))
    confirmed_ranking.KEPT.value = None
    started = time.perf_counter()
    answer = call(ctx, "overview", arguments)
    return time.perf_counter() - started, answer


def top(answer: dict, n: int = 10) -> list[tuple[str, str]]:
    return [(s["path"], s["name_path"]) for s in answer["shown"][:n]]


def compare(report: Report, label: str, ctx: Context) -> None:
    """RUNS of overview by name and confirmed, alternating (after one cold confirmed run and,
    for a server, until its answers hold)."""
    cold, first = timed(ctx, path="django")
    report.note(f"{label}: the first confirmed overview (cold: the source started or loaded) took {cold:.1f} s ({load()}); its ranking: {first['ranking']}")  # fmt: skip
    if label != "scip-python index":
        started = time.perf_counter()
        exceptions = ctx.workspace.roots[0] / "django" / "core" / "exceptions.py"
        warm(
            Semantic(ctx.workspace, ctx.settings.replace(semantic_timeout=120.0)), exceptions, 119, 7
        )  # ImproperlyConfigured
        report.note(f"{label}: warm (answers no longer partial, a count holding) {time.perf_counter() - started:.0f} s later")  # fmt: skip
    names, confirmed, answer, by_name = [], [], first, first
    by_name_ctx = Context(ctx.workspace, ctx.settings.replace(precision="syntax"))
    for _ in range(RUNS):
        seconds, by_name = timed(by_name_ctx, path="django")
        names.append(seconds)
        seconds, answer = timed(ctx, path="django")
        confirmed.append(seconds)
    ranking_field = answer["ranking"]
    kept = len(set(top(by_name)) & set(top(answer)))
    report.add(
        label, median(names), median(confirmed), median(confirmed) / median(names),
        f"{ranking_field.get('confirmed', 0)}/{ranking_field.get('candidates', 0)}",
        ranking_field.get("partial") or ranking_field.get("unconfirmed") or ranking_field.get("unavailable") or "",
        kept, load(),
    )  # fmt: skip
    report.note(f"{label}: {answer['text'].splitlines()[0]}")
    report.note(f"{label}: confirmed top 10: {top(answer)}")


def main() -> None:
    columns = ["source", "by name s", "confirmed s", "ratio", "confirmed/candidates", "said", "top-10 kept", "load"]  # fmt: skip
    report = Report(
        "overview-confirmed", "overview of Django's django/: by name vs confirmed references", columns
    )
    root = django_tree()
    servers = {"python": [str(SERVERS / "py/bin/basedpyright-langserver"), "--stdio"]}
    if os.environ.get("LIVE", "1") != "0":
        ctx = Context(Workspace([root]), Settings().replace(semantic_servers=servers))
        compare(report, "basedpyright", ctx)
        POOL.stop_all()
    if (SCIP_ROOT / "index.python.scip").is_file():
        scip.STORE.found.clear()
        ctx = Context(Workspace([SCIP_ROOT]), Settings().replace(semantic_servers={"python": False}))
        compare(report, "scip-python index", ctx)
    else:
        report.note(f"no SCIP index at {SCIP_ROOT}: the SCIP row is left out")
    report.note(
        f"candidates: the top {confirmed_ranking.SERVER_CANDIDATES} asked of a server, "
        f"{confirmed_ranking.SCIP_CANDIDATES} of a SCIP index, {confirmed_ranking.PARALLEL} at once, "
        f"within {confirmed_ranking.CONFIRM_SECONDS:g} s; RUNS={RUNS} each, alternating, medians"
    )
    report.write()
