"""Ranking's arithmetic, made faster (numpy arrays, a batch of files at a time), gives the
ranks bit for bit as the plain computation it replaced: the same float operations in the
same order (a prefix sum over every use in key order, then one over the pairs in file
order; each file's sums left to right), so the map's order is unchanged. The
plain computation is written here as loops, against the graph's ids made one by one."""

from __future__ import annotations

import math
from array import array
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import ranking
from lsp_agent.syntax.outline import Symbol
from lsp_agent.syntax.uses import rankable

# short, builtin, private, long and distinctive, common: every weight and filter applies
NAMES = ["ab", "list", "_hidden", "get", "run", "value", "lookup_table", "RequestHandler", "save"]
definition = st.tuples(st.sampled_from(NAMES), st.booleans())  # (name, a member?)
use = st.tuples(st.sampled_from(NAMES), st.integers(1, 40), st.integers(0, 40))  # (name, uses, as .name)
file_spec = st.tuples(
    st.sampled_from(["py", "py", "js", "ts"]),
    st.lists(definition, max_size=6),
    st.lists(use, max_size=8),
)


def source(n: int, suffix: str, defined: list[tuple[str, bool]], used: list[tuple[str, int, int]], kin: int) -> ranking.Source:  # fmt: skip
    symbols = []
    for row, (name, member) in enumerate(defined):
        at = (row, 0, row, 1)
        symbols.append(
            Symbol("function", name, f"Holder/{name}" if member else name, row + 1, row + 1, at, at)
        )
    counts: dict[str, tuple[int, int]] = {}
    for name, bare, dotted in used:
        counts.setdefault(name, (bare, min(bare, dotted)))
    packed = array("H", [c for pair in counts.values() for c in pair])
    return ranking.Source(Path(f"/w/m{n}.{suffix}"), kin, None, symbols, ("\n".join(counts), packed))


def plain_ids(sources: list[ranking.Source]) -> dict[str, list[int]]:
    """The graph's ids as first written: one definition at a time."""
    words: dict[str, int] = {}
    keys: dict[int, int] = {}
    ids: dict[str, list[int]] = {
        a: [] for a in ("key_word", "pair_key", "partner", "row_file", "row_row", "row_pair")
    }
    bounds = [0]
    for f, s in enumerate(sources):
        own: dict[int, int] = {}
        first = len(ids["pair_key"])
        for row, symbol in enumerate(s.symbols or []):
            if not rankable(symbol.name):
                continue
            word = words.setdefault(symbol.name, len(words))
            code = (word << ranking.FAMILY_BITS | s.family) << 1 | ("/" in symbol.name_path)
            if code not in keys:
                keys[code] = len(ids["key_word"])
                ids["key_word"].append(word)
            if code not in own:
                own[code] = len(ids["pair_key"])
                ids["pair_key"].append(keys[code])
            ids["row_file"].append(f)
            ids["row_row"].append(row)
            ids["row_pair"].append(own[code])
        ids["partner"] += [-1] * (len(ids["pair_key"]) - first)
        for code, pair in own.items():
            if code ^ 1 in own:
                ids["partner"][pair] = own[code ^ 1]
        bounds.append(len(ids["pair_key"]))
    ids["file_pairs"] = bounds
    return ids


def plain_inflow(uses: list[tuple[int, int, float]], keys: int, share: list[float]) -> list[float]:
    """Per key, a difference of prefix sums over every use in key order (stable)."""
    ordered = sorted(range(len(uses)), key=lambda i: uses[i][1])
    prefix, start = [0.0], [0] * (keys + 1)
    for i in ordered:
        file, key, weight = uses[i]
        prefix.append(prefix[-1] + share[file] * weight)
        start[key + 1] = len(prefix) - 1
    for k in range(keys):  # a key without uses starts and ends where the last one ended
        start[k + 1] = max(start[k + 1], start[k])
    return [prefix[start[k + 1]] - prefix[start[k]] for k in range(keys)]


def plain_ranks(flows: ranking.Flows, graph: ranking.Graph) -> tuple[list[float], list[float], list[bool]]:
    uses = list(zip(flows.file, flows.key, flows.weight, strict=True))
    n, pair_key, bounds = flows.files, list(graph.pair_key), list(graph.file_pairs)
    out = [o or math.inf for o in flows.out]
    rank = [1.0 / n] * n
    for _ in range(ranking.ITERATIONS):
        before = rank
        dangling = sum(rank[f] for f in range(n) if not flows.out[f])
        base = (1 - ranking.DAMPING) / n + ranking.DAMPING * dangling / n
        share = [ranking.DAMPING * r / o for r, o in zip(rank, out, strict=True)]
        inflow = plain_inflow(uses, flows.keys, share)
        prefix = [0.0]
        for key in pair_key:
            prefix.append(prefix[-1] + inflow[key])
        rank = [
            base + (prefix[bounds[f + 1]] - prefix[bounds[f]]) - share[f] * flows.mine[f] for f in range(n)
        ]
        if sum(abs(a - b) for a, b in zip(rank, before, strict=True)) < ranking.TOLERANCE:
            break
    share = [r / o for r, o in zip(rank, out, strict=True)]
    inflow = plain_inflow(uses, flows.keys, share)
    users = [0] * flows.keys
    for _, key, _ in uses:
        users[key] += 1
    scores = [inflow[k] for k in pair_key]
    used = [users[k] > 0 for k in pair_key]
    for f in range(n):
        for pair in range(bounds[f], bounds[f + 1]):
            if flows.own[pair] >= 0:
                used[pair] = users[pair_key[pair]] > 1
                scores[pair] = inflow[pair_key[pair]] - share[f] * flows.own[pair]
    return rank, scores, used


def bits(values: list[float]) -> list[str]:
    return [v.hex() for v in values]


@settings(max_examples=300, deadline=None)
@given(st.lists(file_spec, min_size=1, max_size=12), st.sampled_from([1, 3, 10, ranking.BATCH_USES]))
def test_ranks_are_those_of_the_plain_computation_to_the_bit(specs, batch):
    """`batch`: the names taken into arrays at once (a monorepo's are many batches)."""
    graph = ranking.Graph()
    for n, (suffix, defined, used) in enumerate(specs):
        graph.add(source(n, suffix, defined, used, graph.family_of(Path(f"m.{suffix}"))))
    ids = plain_ids(graph.sources)
    assert {a: list(getattr(graph, a)) for a in ids} == ids
    default, ranking.BATCH_USES = ranking.BATCH_USES, batch
    try:
        flows = graph.flows()
    finally:
        ranking.BATCH_USES = default
    rank, scores, used = plain_ranks(flows, graph)
    flows.arrange(graph)
    fast_rank = flows.pagerank()
    fast_scores, fast_used = flows.pair_scores(fast_rank)
    assert bits(fast_rank) == bits(rank)
    assert bits(fast_scores) == bits(scores)
    assert fast_used == used
