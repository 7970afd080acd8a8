"""What issue 28 made fast answers as before: the ranked map from integer ids against the
plain PageRank over file-to-file edges, overview and definition from the symbol index
against the same without it, and one-shot commands with the index a server saved."""

from __future__ import annotations

import math
import multiprocessing
import os
import shutil
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent import lanes
from lsp_agent.cli import main
from lsp_agent.errors import Cancelled
from lsp_agent.syntax import ranking
from lsp_agent.syntax.index import SymbolIndex, saved_index
from lsp_agent.syntax.outline import outline
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures" / "navigation"


def reference_ranks(files: list[tuple[Path, str]]) -> dict[tuple[str, str, int], float]:
    """PageRank as first written: an edge from each user of a name to each other file
    defining it (its weight split between all of them), dicts keyed by path; (path, name
    path, line) -> rank."""
    defined: dict[tuple, set[Path]] = defaultdict(set)
    symbols: dict[tuple[Path, str], list] = defaultdict(list)
    uses = {}
    for path, content in files:
        text = Workspace([path.parent]).text(path)
        for s in ranking.definitions(outline(path, text)):
            if len(s.name) >= ranking.MIN_NAME and s.name not in ranking.BUILTINS:
                defined[(ranking.family(path), s.name, "/" in s.name_path)].add(path)
                symbols[(path, s.name)].append(s)
        uses[path] = (Counter(ranking.IDENTIFIER.findall(content)), Counter(ranking.MEMBER.findall(content)))
    edges: dict[Path, dict[Path, float]] = defaultdict(lambda: defaultdict(float))
    carried = defaultdict(list)
    for path, (bare, dotted) in uses.items():
        for name, n in bare.items():
            for member in (False, True):
                definers = defined.get((ranking.family(path), name, member))
                if not definers or (member and not dotted[name]):
                    continue
                # issue 23: split between every file defining the name, top level or member
                every = sum(len(defined.get((ranking.family(path), name, m), ())) for m in (False, True))
                w = ranking.weight(name, every) * math.sqrt(dotted[name] if member else n) / every
                for target in definers - {path}:
                    edges[path][target] += w
                    carried[path].append((target, name, w))
    nodes = [path for path, _ in files]
    rank = dict.fromkeys(nodes, 1 / len(nodes))
    out = {u: sum(t.values()) for u, t in edges.items()}
    for _ in range(ranking.ITERATIONS):
        before = rank
        dangling = sum(rank[u] for u in nodes if not out.get(u))
        new = dict.fromkeys(
            nodes, (1 - ranking.DAMPING) / len(nodes) + ranking.DAMPING * dangling / len(nodes)
        )
        for u, targets in edges.items():
            for v, w in targets.items():
                new[v] += ranking.DAMPING * rank[u] / out[u] * w
        rank = new
        if sum(abs(rank[u] - before[u]) for u in nodes) < ranking.TOLERANCE:
            break
    score: dict[tuple[Path, str], float] = defaultdict(float)
    for source, flows in carried.items():
        for target, name, w in flows:
            score[(target, name)] += rank[source] * w / out[source]
    return {
        (str(path), s.name_path, s.start_line): value
        for (path, name), value in score.items()
        for s in ranking.overloads(symbols[(path, name)])
    }


NAMES = ["get", "run_all", "RequestHandler", "_private", "value", "lookup_table"]
file_specs = st.lists(
    st.tuples(
        st.lists(st.sampled_from(NAMES), max_size=3, unique=True),  # top-level functions
        st.lists(st.sampled_from(NAMES), max_size=2, unique=True),  # methods of a class
        st.lists(st.tuples(st.sampled_from(NAMES), st.booleans()), max_size=8),  # uses (as .name?)
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=file_specs)
def test_the_ranking_is_pagerank_over_file_edges(tmp_path_factory, specs):
    root = tmp_path_factory.mktemp("rank")
    files = []
    for n, (functions, methods, used) in enumerate(specs):
        lines = [f"def {name}():\n    return 1\n" for name in functions]
        if methods:
            lines.append(
                f"class Holder{n}:\n" + "".join(f"    def {m}(self):\n        return 2\n" for m in methods)
            )
        lines.append(
            "def main():\n"
            + "".join(f"    x = {'obj.' if dot else ''}{u}\n" for u, dot in used)
            + "    return x\n"
        )
        path = root / f"m{n}.py"
        path.write_text("\n".join(lines))
        files.append((path, path.read_text()))
    ws = Workspace([root])
    graph, read = ranking.ranked_graph(ws, [(p, None) for p, _ in files])
    ranked = ranking.rank_definitions(graph)
    expected = reference_ranks(files)
    assert read == len(files)
    assert {(str(r.path), r.symbol.name_path, r.symbol.start_line) for r in ranked} == set(expected)
    for r in ranked:
        assert r.rank == pytest.approx(
            expected[(str(r.path), r.symbol.name_path, r.symbol.start_line)], rel=1e-9
        )
    keys = [(-float(f"{r.rank:.12g}"), str(r.path), r.symbol.start_line) for r in ranked]
    assert keys == sorted(keys)  # best first, ties by path and line


@pytest.fixture
def project(tmp_path):
    shutil.copytree(FIXTURES, tmp_path, dirs_exist_ok=True)
    index = SymbolIndex(Workspace([tmp_path]))
    index.build()
    return tmp_path, index


def test_overview_from_the_index_answers_as_from_the_files(project):
    root, index = project
    plain, indexed = Context(Workspace([root])), Context(index.workspace, index=index)
    for arguments in [
        {},
        {"path": "py"},
        {"max_chars": 600},
        {"max_chars": 600, "offset": 5},
        {"path": "ts"},
    ]:
        assert call(indexed, "overview", arguments) == call(plain, "overview", arguments)
    # a file changed since it was indexed: its record is not used, its text is
    models = root / "py" / "shop" / "db" / "models.py"
    models.write_text(models.read_text() + "\n\ndef brand_new_helper():\n    return get_object_or_404\n")
    fresh = Context(Workspace([root]))
    assert call(indexed, "overview", {"path": "py"}) == call(fresh, "overview", {"path": "py"})


def test_definition_from_the_index_answers_as_the_search_did(project):
    root, index = project
    plain, indexed = Context(Workspace([root])), Context(index.workspace, index=index)
    names = ["get_object_or_404", "Model/save", "Order.total", "save", "Shape", "area", "nothing_named_so"]
    for name in names:
        assert call(indexed, "definition", {"name": name}) == call(plain, "definition", {"name": name})
    # a definition added after the build: its record is stale, made again
    (root / "py" / "late.py").write_text("def get_object_or_404():\n    return None\n")
    index.update(root / "py" / "late.py")
    (root / "py" / "shop" / "shortcuts.py").write_text("def renamed_helper():\n    return 1\n")
    answer = call(indexed, "definition", {"name": "get_object_or_404"})
    assert answer == call(Context(Workspace([root])), "definition", {"name": "get_object_or_404"})
    assert [d["path"] for d in answer["definitions"]] == ["py/late.py"]


def written_long_ago(path: Path, text: str) -> None:
    """A file whose stat vouches for its record (one written in the last 2 s does not)."""
    path.write_text(text)
    os.utime(path, (time.time() - 60, time.time() - 60))


def test_commands_use_the_index_a_server_saved(tmp_path, index_cache, capsys, monkeypatch):
    written_long_ago(tmp_path / "a.py", "class A:\n    def run(self):\n        return 1\n")
    ws = Workspace([tmp_path])
    assert saved_index(ws) is None  # nothing saved: commands look in the files
    SymbolIndex(ws, cache=index_cache).build()
    loaded = saved_index(Workspace([tmp_path]))
    assert loaded is not None and set(loaded.files) == {tmp_path / "a.py"}
    written_long_ago(tmp_path / "b.py", "def run():\n    return 2\n")  # added since the save
    root = ["--root", str(tmp_path)]
    assert main(["find-symbol", "run", *root]) == 0
    with_index = capsys.readouterr().out
    assert "a.py" in with_index and "b.py" in with_index
    # find-symbol takes the records it needs and saves nothing; definition brings it up to date
    assert set(saved_index(Workspace([tmp_path])).files) == {tmp_path / "a.py"}
    assert main(["definition", "run", *root]) == 0
    defined = capsys.readouterr().out
    assert "2 candidates" in defined
    assert set(saved_index(Workspace([tmp_path])).files) == {
        tmp_path / "a.py",
        tmp_path / "b.py",
    }  # saved again
    monkeypatch.setenv("LSP_AGENT_CACHE_DIR", str(tmp_path / "no-cache"))
    assert main(["find-symbol", "run", *root]) == 0
    assert capsys.readouterr().out == with_index
    assert main(["definition", "run", *root]) == 0
    assert capsys.readouterr().out == defined


def test_overview_runs_in_a_worker_process_with_the_open_buffers(project):
    root, index = project
    processes = lanes.ToolProcesses(workers=1)
    try:
        ctx = Context(Workspace([root]), index=index)
        on_disk = call(ctx, "overview", {"path": "py"})
        assert "get_object_or_404" in on_disk["text"]
        ctx.workspace.open_document(
            root / "py" / "shop" / "shortcuts.py", "def fetch_or_404(klass):\n    return klass\n"
        )
        answer = processes.run(ctx, "overview", {"path": "py"})
        assert answer == call(ctx, "overview", {"path": "py"})
        assert "get_object_or_404" not in answer["text"]  # the unsaved buffer's text, not the disk's
        assert processes.pool is not None and len(multiprocessing.active_children()) >= 1
        cancelled = Context(ctx.workspace, index=index)
        cancelled.cancel_event.set()
        with pytest.raises(Cancelled):
            processes.run(cancelled, "overview", {})
        # told to stop, the worker's tool stops at its next checkpoint: the worker runs on
        assert processes.run(ctx, "overview", {"max_chars": 700}) == call(ctx, "overview", {"max_chars": 700})
    finally:
        processes.stop()


def test_paging_on_reuses_the_ranking_while_no_file_changed(tmp_path, monkeypatch):
    shutil.copytree(FIXTURES / "py", tmp_path, dirs_exist_ok=True)
    ctx = Context(Workspace([tmp_path]))
    files = [(path, None) for path in sorted(tmp_path.rglob("*.py"))]
    assert ranking.stamp_of(ctx.workspace, files) is None  # just written: no stat vouches yet
    # as if the files were older than the racy window (their ctime is the copy's, now)
    monkeypatch.setattr(ranking, "is_racy", lambda info, read_at: False)
    first = call(ctx, "overview", {"max_chars": 250})
    rankings = []
    real = ranking.rank_definitions
    monkeypatch.setattr(ranking, "rank_definitions", lambda graph: rankings.append(graph) or real(graph))
    assert call(ctx, "overview", {"max_chars": 250}) == first  # remembered: not ranked again
    assert call(ctx, "overview", {"max_chars": 250, **first["next"]})["shown"]
    assert rankings == []
    shortcuts = tmp_path / "shop" / "shortcuts.py"
    shortcuts.write_text(shortcuts.read_text().replace("get_object_or_404", "fetch_or_404"))
    changed = call(ctx, "overview", {"max_chars": 250})
    assert len(rankings) == 1 and changed != first  # a file changed: ranked again
    assert "get_object_or_404" not in call(ctx, "overview", {"max_chars": 10**6})["text"]
