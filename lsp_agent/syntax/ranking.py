"""A ranked map of a code base, in the spirit of aider's repo map: files are nodes of a graph
whose edges go from a file that uses a name to the files that define it; PageRank over that
graph ranks files, and each file's rank flows along its edges to the definitions it uses.

Definitions come from the outlines (top-level symbols and their members); uses are the
identifiers of a file's text (comments and strings included: a cheap, parse-free reading,
enough to rank). Matching is by name, as everywhere here. A name defined in many files (a
method every class has) or private (`_x`) weighs less, a long distinctive name more.
"""

from __future__ import annotations

import builtins
import keyword
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..workspace import Text
from .languages import language_for
from .outline import Symbol, outline

IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")
MEMBER = re.compile(r"(?:\.|->)\s*([A-Za-z_$][\w$]*)")
# Names every program uses without defining them (list, type, super, …): not evidence.
# Keywords are words of the text too (`import { x } from './y'` is no use of a function `from`).
BUILTINS = (
    frozenset(dir(builtins))
    | frozenset(keyword.kwlist)
    | frozenset(
        [
            "from",
            "import",
            "export",
            "function",
            "const",
            "let",
            "var",
            "return",
            "new",
            "class",
            "extends",
            "implements",
            "interface",
            "type",
            "this",
            "typeof",
            "instanceof",
            "void",
            "null",
            "undefined",
            "true",
            "false",
            "default",
            "async",
            "await",
            "yield",
            "static",
            "public",
            "private",
            "protected",
            "readonly",
            "package",
            "func",
            "struct",
            "impl",
            "trait",
            "use",
            "mod",
            "pub",
            "self",
            "super",
            "enum",
            "namespace",
            "using",
            "include",
            "define",
        ]
    )
)
FAMILIES = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
DAMPING = 0.85
ITERATIONS = 40
MEMBER_DEPTH = 2  # definitions ranked: top level and one level in (a class's methods)
MIN_NAME = 3  # shorter names (`a`, `s`, `id`) say nothing about where they come from
# Minified or generated files (one long line of a bundle) are left out of the map.
MAX_LINE_MEAN = 200


@dataclass(frozen=True)
class Ranked:
    path: Path
    symbol: Symbol
    rank: float


def definitions(symbols: list[Symbol], depth: int = MEMBER_DEPTH) -> Iterable[Symbol]:
    for s in symbols:
        yield s
        if depth > 1:
            yield from definitions(s.children, depth - 1)


def weight(name: str, definers: int) -> float:
    """How much a use of `name` says about the files that define it."""
    w = 1.0
    if len(name) >= 8 and ("_" in name.strip("_") or (name != name.lower() and name != name.upper())):
        w *= 10  # a long, distinctive name
    if name.startswith("_"):
        w *= 0.1
    if definers > 5:
        w *= 0.1  # defined everywhere: a use says little about which
    return w


def overloads(found: list[Symbol]) -> list[Symbol]:
    """One symbol per name path: of overloads (a TypeScript function declared several times,
    a property's getter and setter), the longest, which holds the body."""
    widest: dict[str, Symbol] = {}
    for s in found:
        old = widest.get(s.name_path)
        if old is None or s.end_line - s.start_line > old.end_line - old.start_line:
            widest[s.name_path] = s
    return list(widest.values())


def family(path: Path) -> str | None:
    """Files of one family use each other's names: JavaScript and TypeScript, C and C++."""
    language = language_for(path)
    return FAMILIES.get(language, language) if language else None


def generated(path: Path, text: Text) -> bool:
    """A minified bundle or generated file: `x.min.js`, or lines far longer than code's."""
    return ".min." in path.name or len(text.content) / max(text.line_count, 1) > MAX_LINE_MEAN


def pagerank(nodes: list[Path], edges: dict[Path, dict[Path, float]]) -> dict[Path, float]:
    """Weighted PageRank; a file without outgoing edges spreads its rank evenly."""
    n = len(nodes)
    rank = dict.fromkeys(nodes, 1.0 / n)
    out = {u: sum(targets.values()) for u, targets in edges.items()}
    for _ in range(ITERATIONS):
        dangling = sum(rank[u] for u in nodes if not out.get(u))
        new = dict.fromkeys(nodes, (1 - DAMPING) / n + DAMPING * dangling / n)
        for u, targets in edges.items():
            if not out[u]:
                continue
            share = DAMPING * rank[u] / out[u]
            for v, w in targets.items():
                new[v] += share * w
        rank = new
    return rank


def rank_definitions(files: list[tuple[Path, Text]]) -> tuple[list[Ranked], dict[Path, float]]:
    """Every ranked definition, best first, and each file's rank (generated files left out).
    A member (a method, a field) is used as `.name`, a top-level definition by its bare name
    too; a name's weight is split between the files that define it."""
    files = [(path, text) for path, text in files if not generated(path, text)]
    defined: dict[tuple[str | None, str, bool], set[Path]] = defaultdict(
        set
    )  # (family, name, member) -> files
    symbols: dict[tuple[Path, str], list[Symbol]] = defaultdict(list)
    uses: dict[Path, tuple[Counter, Counter]] = {}
    for path, text in files:
        for s in definitions(outline(path, text)):
            if len(s.name) < MIN_NAME or s.name in BUILTINS:
                continue
            defined[(family(path), s.name, "/" in s.name_path)].add(path)
            symbols[(path, s.name)].append(s)
        uses[path] = (Counter(IDENTIFIER.findall(text.content)), Counter(MEMBER.findall(text.content)))

    edges: dict[Path, dict[Path, float]] = defaultdict(lambda: defaultdict(float))
    carried: dict[Path, list[tuple[Path, str, float]]] = defaultdict(list)
    for path, (bare, dotted) in uses.items():
        kin = family(path)
        for name, n in bare.items():
            for member in (False, True):
                definers = defined.get((kin, name, member))
                if not definers or (member and not dotted[name]):
                    continue
                w = weight(name, len(definers)) * math.sqrt(dotted[name] if member else n) / len(definers)
                for target in definers:
                    if target != path:
                        edges[path][target] += w
                        carried[path].append((target, name, w))
    nodes = [path for path, _ in files]
    rank = pagerank(nodes, edges)

    score: dict[tuple[Path, str], float] = defaultdict(float)
    for source, flows in carried.items():
        total = sum(edges[source].values())
        for target, name, w in flows:
            score[(target, name)] += rank[source] * w / total
    ranked = [
        Ranked(path, s, value)
        for (path, name), value in score.items()
        for s in overloads(symbols[(path, name)])
    ]
    ranked.sort(key=lambda r: (-r.rank, str(r.path), r.symbol.start_line))
    return ranked, rank
