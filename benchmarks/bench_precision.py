"""Precision: references and definition against the type server's own answers, on Django
(basedpyright) and rxjs (typescript-language-server with TypeScript 5).

Per category of name (unique names, common method names, classes, module functions), a
sample of definitions: the server's references at the definition are the truth; ours are
scored by (file, line) — the semantic section (uses marked with the server as source), the
whole answer, and the syntax source alone (precision=syntax): its stated section (what the
syntax confirms) and its whole answer (with the by-name candidates). Definition: at call sites the
server resolves into the workspace, whether our first definition is the server's. Time per
query beside the server's own (the same warm session), and of that time the rendering of the
budgeted page alone (references' `page_of`: the stage that fits and the next page's size), so
that the goal "at most 1.5x the server's time plus the rendering" is measured as it reads.

Then references as an agent gets it, over a running server (stdio), beside the server asked
alone (precision-served): there the tool runs in the server's worker process, which asks the
language server session of the serving process over a pipe (or, beside a server whose last
answer was quick, in the serving process itself), and the transport counts. The served session
is left to settle once every file asked about is open (`settled`), as the bench's own had long
before it was timed. Beside it, the same question answered bare by the same served process
(benchmarks/bare_references.py: the server's locations alone, no roles, enclosing symbols,
candidates or page): what the way through the server costs before the answer says anything of
its own, so that the goal's "plus the rendering" can be read off beside the strict ratio.

The tools are asked as the serving process asks them: with the workspace's symbol index built,
its use tables made, before the first question (an agent's server has built them by then; a bench
without them would parse every candidate file on each query, which no agent waits for), and with
its switch interval (lanes.SWITCH_INTERVAL: the serving process and its workers hand the
interpreter between threads every 1 ms, where Python's default is 5).

Servers: SERVERS (default ~/.cache/lsp-agent-ci/servers, what `make test-servers` installs).
SAMPLE (default 10) names per category; CORPORA (default "Django,rxjs") which corpora to run.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.lanes import SWITCH_INTERVAL
from lsp_agent.semantic import POOL, Semantic
from lsp_agent.semantic.session import tree_pids
from lsp_agent.syntax import outline, walk
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.tools import Context, call
from lsp_agent.tools import definition as definition_tool
from lsp_agent.tools import precise as precise_tool
from lsp_agent.tools import references as references_tool
from lsp_agent.workspace import Workspace

from .common import Client, Report, django_tree, median, rxjs_tree

SERVERS = Path(os.environ.get("SERVERS", Path.home() / ".cache/lsp-agent-ci/servers"))
SAMPLE = int(os.environ.get("SAMPLE", "10"))
CORPORA = os.environ.get("CORPORA", "Django,rxjs").split(",")
CATEGORIES = ("unique names", "common method names", "classes", "module functions")


def settings() -> Settings:
    return Settings().replace(
        semantic_servers={
            "python": [str(SERVERS / "py/bin/basedpyright-langserver"), "--stdio"],
            "typescript": [str(SERVERS / "node/node_modules/.bin/typescript-language-server"), "--stdio"],
        },
        semantic_timeout=120.0,
    )


def definitions(ws: Workspace, files: list[Path]) -> dict[str, list]:
    """Category -> [(path, symbol)], sampled."""
    found = [(p, s) for p in files for s in walk(outline(p, ws.text(p)))]
    names = Counter(s.name for _, s in found)
    chosen: dict[str, list] = {c: [] for c in CATEGORIES}
    for p, s in found:
        if len(s.name) < 3 or s.name.startswith("__"):
            continue
        if s.kind == "method" and names[s.name] >= 5:
            chosen["common method names"].append((p, s))
        elif names[s.name] == 1 and s.kind in ("function", "method"):
            chosen["unique names"].append((p, s))
        if s.kind == "class" and "/" not in s.name_path:
            chosen["classes"].append((p, s))
        if s.kind == "function" and "/" not in s.name_path:
            chosen["module functions"].append((p, s))
    rng = random.Random(23)
    return {c: rng.sample(v, min(SAMPLE, len(v))) for c, v in chosen.items()}


def position(ws: Workspace, path: Path, symbol) -> tuple[int, int]:
    row, byte = symbol.selection[0], symbol.selection[1]
    line = ws.text(path).line(row + 1)
    return row + 1, len(line.encode()[:byte].decode("utf-8", "replace")) + 1


def score(ours: set, truth: set) -> tuple[float, float]:
    hit = len(ours & truth)
    return (hit / len(ours) if ours else 1.0), (hit / len(truth) if truth else 1.0)


def warm(source: Semantic, path: Path, line: int, column: int) -> None:
    """Until the server no longer says it may be incomplete and a query's count holds."""
    last = -1
    while True:
        answer = source.locations("references", path, line, column)
        if answer.partial is None and len(answer.locations) == last:
            return
        last = len(answer.locations)
        time.sleep(2)


def stated(answer: dict) -> set:
    """What a syntax-only answer states as uses: its first section, the definitions asked for and
    the uses the syntax confirms (`match` other than "name"); the rest are labelled candidates."""
    return {(r["path"], r["line"]) for r in answer["references"] if r["match"] != "name"}


FIGURES = ("sem", "all", "syn", "stated", "t_ours", "t_server", "t_syntax", "t_page", "t_asked")


class Timers:
    """Times, within the calls made while on, references' page rendering (`page_of`) and its
    question to the server (`confirmed`, in whichever thread asks it: the same server run as
    the answer's, so that a loaded machine's slow or fast server moment counts on both sides)."""

    PATCHED = (("page", references_tool, "page_of"), ("asked", references_tool, "confirmed"),
               ("asked", precise_tool, "confirmed"))  # fmt: skip

    def __enter__(self) -> Timers:
        self.spent = {"page": 0.0, "asked": 0.0}
        self.originals = [(module, name, getattr(module, name)) for _, module, name in self.PATCHED]
        for (key, module, name), (_, _, original) in zip(self.PATCHED, self.originals, strict=True):
            setattr(module, name, self.timed(key, original))
        return self

    def timed(self, key: str, original):
        def run(*arguments, **keywords):
            started = time.perf_counter()
            try:
                return original(*arguments, **keywords)
            finally:
                self.spent[key] += time.perf_counter() - started

        return run

    def __exit__(self, *exc) -> None:
        for module, name, original in self.originals:
            setattr(module, name, original)


class DefinitionTimers(Timers):
    """Times, within the calls made while on, definition's budgeted rendering (its listing
    or its body, with the signatures read for it): the goal's "plus the rendering", as
    references' page is timed apart."""

    PATCHED = (("page", definition_tool, "listing_stages"), ("page", definition_tool, "body_stage"))


def references_rows(ctx: Context, source: Semantic, sample: dict, totals: dict, label: str) -> list[list]:
    ws = ctx.workspace
    rows = []
    for category, chosen in sample.items():
        figures: dict[str, list] = {k: [] for k in FIGURES}
        for path, symbol in chosen:
            line, column = position(ws, path, symbol)
            shown = ws.display(path)
            asked = {"path": shown, "line": line, "column": column}
            source.locations("references", path, line, column)  # both timed runs find it warm
            started = time.perf_counter()
            truth_answer = source.locations("references", path, line, column)
            figures["t_server"].append(time.perf_counter() - started)
            truth = {(ws.display(loc.path), loc.line) for loc in truth_answer.locations}
            with Timers() as timers:
                started = time.perf_counter()
                call(ctx, "references", asked)  # the answer an agent gets: one budgeted page
                figures["t_ours"].append(time.perf_counter() - started)
            figures["t_page"].append(timers.spent["page"])
            figures["t_asked"].append(timers.spent["asked"])
            started = time.perf_counter()
            call(ctx, "references", {**asked, "precision": "syntax"})
            figures["t_syntax"].append(time.perf_counter() - started)
            # scored on every use (the structured answer lists them all with a large limit)
            ours = call(ctx, "references", {**asked, "limit": 100000})
            syn = call(ctx, "references", {**asked, "precision": "syntax", "limit": 100000})
            every = {(r["path"], r["line"]) for r in ours["references"]}
            semantic = {(r["path"], r["line"]) for r in ours["references"] if r["source"] != "name"}
            figures["sem"].append(score(semantic, truth))
            figures["all"].append(score(every, truth))
            figures["syn"].append(score({(r["path"], r["line"]) for r in syn["references"]}, truth))
            figures["stated"].append(score(stated(syn), truth))
            totals.setdefault("sites", []).extend(
                (loc.path, loc.line, loc.column) for loc in truth_answer.locations if loc.line != line
            )
        mean = lambda pairs, i: sum(p[i] for p in pairs) / max(len(pairs), 1)  # noqa: E731
        rows.append([
            label, category, len(chosen),
            mean(figures["sem"], 0), mean(figures["sem"], 1), mean(figures["all"], 0), mean(figures["all"], 1),
            mean(figures["stated"], 0), mean(figures["stated"], 1), mean(figures["syn"], 0), mean(figures["syn"], 1),
            *times(figures["t_ours"], figures["t_server"]), median(figures["t_syntax"]) * 1000 if chosen else 0,
            *beyond_page(figures["t_ours"], figures["t_page"], figures["t_server"]),
            *within_call(figures["t_ours"], figures["t_page"], figures["t_asked"]),
        ])  # fmt: skip
    return rows


def times(ours: list[float], server: list[float]) -> list[float]:
    """Median ms of ours and of the server's own, and their ratio."""
    if not ours or not server:
        return [0.0, 0.0, 0.0]
    a, b = median(ours) * 1000, median(server) * 1000
    return [a, b, a / b if b else 0.0]


def beyond_page(ours: list[float], page: list[float], server: list[float]) -> list[float]:
    """Median ms of the page's rendering, and the ratio to the server's median of our median
    time without it (the goal: at most 1.5)."""
    if not ours or not server:
        return [0.0, 0.0]
    rest = median([a - b for a, b in zip(ours, page, strict=True)])
    return [median(page) * 1000, rest / median(server) if median(server) else 0.0]


def within_call(ours: list[float], page: list[float], asked: list[float]) -> list[float]:
    """Median ms of the call's own question to the server, and the median over queries of
    the call less its page over that question's time (the goal: at most 1.5)."""
    pairs = [(o - p) / a for o, p, a in zip(ours, page, asked, strict=True) if a > 0]
    return [median(asked) * 1000, median(pairs)] if pairs else [0.0, 0.0]


def lands(answer: dict, target: tuple[str, int]) -> bool:
    """Whether the answer's first definition is the one at the server's location (its name's line)."""
    found = answer["definitions"]
    return bool(found) and (found[0]["path"], found[0]["name_line"]) == target


def definition_row(ctx: Context, source: Semantic, sites: list, label: str) -> list:
    ws = ctx.workspace
    rng = random.Random(5)
    sites = rng.sample(sites, min(len(sites), SAMPLE * 4))
    exact = syn_exact = asked = 0
    t_ours: list[float] = []
    t_server: list[float] = []
    t_page: list[float] = []
    for path, line, column in sites:
        source.locations("definition", path, line, column)  # both timed runs find it warm
        started = time.perf_counter()
        truth = source.locations("definition", path, line, column)
        t_server.append(time.perf_counter() - started)
        if not truth.locations:
            continue
        asked += 1
        target = (ws.display(truth.locations[0].path), truth.locations[0].line)
        args = {"path": ws.display(path), "line": line, "column": column, "body": False}
        with DefinitionTimers() as timers:
            started = time.perf_counter()
            ours = call(ctx, "definition", args)
            t_ours.append(time.perf_counter() - started)
        t_page.append(timers.spent["page"])
        syn = call(ctx, "definition", {**args, "precision": "syntax"})
        exact += lands(ours, target)
        syn_exact += lands(syn, target)
    return [label, "definition (call sites)", asked, exact / max(asked, 1), syn_exact / max(asked, 1),
            *times(t_ours, t_server), *beyond_page(t_ours, t_page, t_server)]  # fmt: skip


async def warm_served(client: Client, asked: dict, within: float = 600) -> None:
    """As `warm`, over the server: until its session no longer says it may be incomplete and
    its count of uses by type holds (its language server's own start-up, as the bench's
    session had); a session that does not within `within` seconds fails the bench."""
    last, deadline = -1, time.monotonic() + within
    while True:
        answer = await client.request("lspAgent/references", {**asked, "limit": 100000})
        assert isinstance(answer, dict)
        semantic = answer.get("semantic", {})
        typed = sum(r["source"] != "name" for r in answer["references"])
        if not semantic.get("partial") and "unavailable" not in semantic and typed == last:
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"the served session did not settle within {within:.0f} s: {semantic}")
        last = typed
        await asyncio.sleep(2)


def tree_cpu(pid: int) -> float:
    """CPU seconds used so far by a process and every process under it (Linux /proc)."""
    total = 0.0
    for current in tree_pids(pid) or []:
        try:
            with open(f"/proc/{current}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def settled(pid: int, within: float = 120, busy: float = 0.05) -> None:
    """Until the process tree under `pid` (a server, its worker and language servers) uses
    less than `busy` of a core over a second: a language server checks each file opened,
    after the answer, as the bench's own session had done long before it was timed."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        before = tree_cpu(pid)
        await asyncio.sleep(1.0)
        if tree_cpu(pid) - before < busy:
            return


async def over_the_server(root: Path, source: Semantic, sample: dict, label: str) -> list[list]:
    """references as an agent asks it: over a running server (stdio, its tools in a worker
    process that asks the server's language server session over a pipe, or in the serving
    process beside a quick server: references.stays), its index built
    and use tables made first. Each query alternates with the bench's own session asked
    alone, both warm: the medians, and the median of the ratio query by query (the page's
    rendering included: under 0.5 ms at the default budget but Django's common names), and
    the same question answered bare (benchmarks/bare_references.py: always in the serving
    process, where references runs beside a quick server). The server's session is warmed
    first as the bench's own was (`warm_served`)."""
    ws = source.ws
    options = {"semantic_servers": settings().semantic_servers, "semantic_timeout": 120}
    with tempfile.TemporaryDirectory() as cache:
        client = await Client.start(root, cache, options=options, module="benchmarks.bare_references")
        await asyncio.wait_for(client.indexed.wait(), 1800)
        await asyncio.wait_for(client.tabled.wait(), 1800)
        loop = asyncio.get_running_loop()
        first_path, first_symbol = next(iter(v for v in sample.values() if v))[0]
        line, column = position(ws, first_path, first_symbol)
        await warm_served(client, {"path": ws.display(first_path), "line": line, "column": column})
        # every file asked about opened by its session before any is timed, as the bench's own
        # session had them (a server checks a file it has just opened, beside the answers)
        for path, symbol in (pair for chosen in sample.values() for pair in chosen):
            line, column = position(ws, path, symbol)
            await client.request(
                "lspAgent/references", {"path": ws.display(path), "line": line, "column": column}
            )
        await settled(client.process.pid)
        rows = []
        for category, chosen in sample.items():
            ours, server, floor, bare, bare_server, cut = [], [], [], [], [], 0
            for path, symbol in chosen:
                line, column = position(ws, path, symbol)
                asked = {"path": ws.display(path), "line": line, "column": column}
                alone = functools.partial(source.locations, "references", path, line, column)
                one_line = {"path": ws.display(path), "start": line, "max_chars": 200}
                await client.request("lspAgent/references", asked)
                await client.request("lspAgent/bare_references", asked)
                await loop.run_in_executor(None, alone)
                for _ in range(2):
                    started = time.perf_counter()
                    answer = await client.request("lspAgent/references", asked)
                    ours.append(time.perf_counter() - started)
                    assert isinstance(answer, dict)
                    cut += "left out: the by-name candidates" in answer["text"]
                    started = time.perf_counter()
                    await loop.run_in_executor(None, alone)
                    server.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await client.request("lspAgent/read", one_line)
                    floor.append(time.perf_counter() - started)
                    started = time.perf_counter()
                    await client.request("lspAgent/bare_references", asked)
                    bare.append(time.perf_counter() - started)
                    # the server alone again, so that each side's server last answered one
                    # question ago, as before: ours, alone; bare, alone (not bare, then ours)
                    started = time.perf_counter()
                    await loop.run_in_executor(None, alone)
                    bare_server.append(time.perf_counter() - started)
            ratios = [a / b for a, b in zip(ours, server, strict=True) if b > 0]
            beyond = [(a - f) / b for a, f, b in zip(ours, floor, server, strict=True) if b > 0]
            bare_ratios = [a / b for a, b in zip(bare, bare_server, strict=True) if b > 0]
            rows.append([label, category, len(chosen), median(ours) * 1000, median(server) * 1000,
                         median(ratios) if ratios else 0.0, median(floor) * 1000,
                         median(beyond) if beyond else 0.0, median(bare) * 1000,
                         median(bare_ratios) if bare_ratios else 0.0, f"{cut} of {len(ours)}"])  # fmt: skip
        await client.stop()
    return rows


def corpus(
    label: str, root: Path, files: list[Path], report: Report, def_report: Report, served: Report
) -> None:
    # the workspace holds resolved paths (benchmarks/.cache may be a link to a shared cache)
    root = root.resolve()
    files = [f.resolve() for f in files]
    ws = Workspace([root])
    started = time.perf_counter()
    index = SymbolIndex(ws)
    index.build()
    index.make_tables()
    report.note(f"{label}: symbol index and use tables made in {time.perf_counter() - started:.0f} s")
    ctx = Context(ws, settings(), index=index)
    source = Semantic(ws, ctx.settings)
    sample = definitions(ws, files)
    first_path, first_symbol = next(iter(v for v in sample.values() if v))[0]
    started = time.perf_counter()
    warm(source, first_path, *position(ws, first_path, first_symbol))
    report.note(
        f"{label}: server warm (answers no longer partial, counts holding) after {time.perf_counter() - started:.0f} s"
    )
    totals: dict = {}
    for row in references_rows(ctx, source, sample, totals, label):
        report.add(*row)
    def_report.add(*definition_row(ctx, source, totals.get("sites", []), label))
    for row in asyncio.run(over_the_server(root, source, sample, label)):
        served.add(*row)
    POOL.stop_all()


def main() -> None:
    sys.setswitchinterval(SWITCH_INTERVAL)
    columns = ["corpus", "category", "queries", "semantic P", "semantic R", "whole P", "whole R",
               "syntax stated P", "syntax stated R", "syntax whole P", "syntax whole R",
               "ours ms", "server ms", "ours/server", "syntax alone ms", "page ms", "(ours-page)/server",
               "asked ms", "(ours-page)/asked"]  # fmt: skip
    report = Report(
        "precision", "references against the type server's own answers (by file and line)", columns
    )
    defs = Report("precision-definition", "definition at call sites the server resolves in the workspace",
                  ["corpus", "what", "sites", "exact (auto)", "exact (syntax)", "ours ms", "server ms", "ours/server",
                  "page ms", "(ours-page)/server"])  # fmt: skip
    served = Report("precision-served", "references over a running server (stdio) against the server asked alone",
                    ["corpus", "category", "queries", "ours ms", "server ms", "ours/server",
                     "a call's floor ms", "(ours-floor)/server", "bare ms", "bare/server",
                     "candidates left out"])  # fmt: skip
    if "Django" in CORPORA:
        django = django_tree()
        corpus("Django", django, sorted((django / "django").rglob("*.py")), report, defs, served)
    if "rxjs" in CORPORA:
        rx = rxjs_tree()
        corpus("rxjs", rx, sorted(rx.rglob("*.ts")), report, defs, served)
    report.note(
        "syntax stated: the first section of a precision=syntax answer (the definitions asked for and the uses "
        "the syntax confirms); syntax whole: with the by-name candidates. Times: one default (budgeted) page."
    )
    report.note(
        "page ms: of ours, the budgeted page's rendering alone (references.page_of: its stage and the next "
        "page's size; the uses' roles and enclosing symbols are not in it, they count as ours). "
        "(ours-page)/server: the median of ours less its page, over the server's median. asked ms: within "
        "ours, its own question to the server (precise.confirmed: the request and its locations read); "
        "(ours-page)/asked: ours less its page over that, the same server run on both sides."
    )
    report.note(
        "goals: semantic P >= 0.95, R >= 0.98; definition exact >= 97%; time <= 1.5x the server's plus the "
        "page's rendering ((ours-page)/server <= 1.5); "
        "syntax stated P >= 0.5 on common method names with the syntax whole R unchanged"
    )
    defs.note(
        "ours: definition from the call site (body=false), in process; server: the same question to the bench's "
        "own session, asked again (its answer cached); page ms: of ours, the budgeted rendering (the listing and "
        "the signatures read for it); (ours-page)/server: the median of ours less it, over the server's median "
        "(the goal: at most 1.5)"
    )
    served.note(
        "ours: lspAgent/references at the definition over a running lsp-agent server (stdio; the tool runs in its "
        "worker process, which asks the server's language server session over a pipe, or beside a server whose "
        "last answer came within 20 ms in the serving process); server: the bench's own "
        "session of the same language server asked alone; two of each per query, in turn, both warm; ours/server: "
        "the median of the ratio, the page's rendering and the transport included (the goal's 1.5x is without "
        "the page); a call's floor: a read of one line of the same file over the same server, after each "
        "question (what any call costs over stdio: the framing both ways, the hops between threads); "
        "(ours-floor)/server: the median over questions of ours less that read, over the server's time; "
        "bare: the same question to the same server as lspAgent/bare_references (benchmarks/bare_references.py, "
        "registered in the served process for the bench alone), which goes the way references goes beside a quick "
        "server (in the serving process: rxjs; Django's go to a worker), sends the same "
        "question first and reads the server's locations the same way, but answers them bare: no roles, enclosing "
        "symbols, by-name candidates or page; bare/server: the median of its ratio to the server alone asked right "
        "after it (each side's server last asked one question before, as ours and the server alone are), what any answer through the "
        "server costs before it says anything of its own; "
        "candidates left out: answers whose by-name candidates were not matched in time (or not "
        "searched, as they would not have been), which each such answer says."
    )
    report.write()
    defs.write()
    served.write()
