"""A ranked map of a code base, in the spirit of aider's repo map: files are nodes of a graph
whose edges go from a file that uses a name to the files that define it; PageRank over that
graph ranks files, and each file's rank flows along its edges to the definitions it uses.

Definitions come from the symbol index where it holds a file's text, else from its outline
(top-level symbols and their members); uses are the identifiers of a file's text (comments
and strings included: a cheap, parse-free reading, enough to rank). Matching is by name, as
everywhere here. A name defined in many files (a method every class has) or private (`_x`)
weighs less, a long distinctive name more. Files and names are integer ids in flat lists, so
that ranking takes time linear in the uses and definitions and memory for names only (the
texts are read one at a time).
"""

from __future__ import annotations

import builtins
import keyword
import math
import os
import re
import threading
import time
from array import array
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, compress, islice, repeat
from operator import mul, sub, truediv
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..budget import plural, size
from ..errors import Refusal
from ..workspace import Text, Workspace, file_identity, is_racy
from .languages import language_for
from .outline import Symbol, outline
from .records import FileRecord
from .references import signature

if TYPE_CHECKING:
    from .index import SymbolIndex

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


class Definition(Protocol):
    """What ranking needs of a definition: an outline's Symbol or an index's Entry."""

    @property
    def name(self) -> str: ...
    @property
    def name_path(self) -> str: ...
    @property
    def start_line(self) -> int: ...
    @property
    def end_line(self) -> int: ...


@dataclass(frozen=True)
class Ranked:
    path: Path
    symbol: Definition
    rank: float


def definitions(symbols: list[Symbol], depth: int = MEMBER_DEPTH) -> Iterable[Symbol]:
    for s in symbols:
        yield s
        if depth > 1:
            yield from definitions(s.children, depth - 1)


# A file's definitions for ranking: (name, whether a member, the definition); from an index
# record, the definition is its row, made an Entry only if ranked (most never are).
Rows = list[tuple[str, bool, "Definition | int"]]


def file_definitions(path: Path, text: Text, index: SymbolIndex | None) -> tuple[FileRecord | None, Rows]:
    """The definitions ranked in a file, and the record they are rows of: from the index when
    it holds this very text (no parse), else from the outline (no record)."""
    record = index.record_of(path, text) if index is not None else None
    if record is None:
        return None, [(s.name, "/" in s.name_path, s) for s in definitions(outline(path, text))]
    if not record.kinds:
        return record, []
    containers = record.containers.split("\n")
    return record, [
        (name, bool(container), i)
        for i, (name, container) in enumerate(zip(record.names.split("\n"), containers, strict=True))
        if container.count("/") < MEMBER_DEPTH - 1
    ]


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


def overloads(found: list[Definition]) -> list[Definition]:
    """One symbol per name path: of overloads (a TypeScript function declared several times,
    a property's getter and setter), the longest, which holds the body."""
    widest: dict[str, Definition] = {}
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


def segment_sums(values: array, bounds: list[int]) -> list[float]:
    """The sum of each run values[bounds[i]:bounds[i + 1]], each summed in order."""
    return [sum(values[a:b]) for a, b in zip(bounds, islice(bounds, 1, None), strict=False)]


def runs(keys: array, count: int) -> tuple[list[int], list[int]]:
    """The positions that sort `keys` (stable) and where each key's run starts in that order
    (count + 1 bounds: key k's run is bounds[k]:bounds[k + 1])."""
    order = sorted(range(len(keys)), key=keys.__getitem__)
    sizes = [0] * count
    for k in keys:
        sizes[k] += 1
    return order, list(accumulate(sizes, initial=0))


class Graph:
    """Files and the names they define and use, as integer ids and flat lists: file f uses
    key k (a family, a name and whether as a member) with weight w; a key's definers are the
    files defining it. A use's weight flows evenly to the key's definers but the user itself,
    so the work of a PageRank step is linear in the uses and definitions, where edges from
    each user to each definer would grow as their product (`get`: thousands of each)."""

    def __init__(self) -> None:
        self.paths: list[Path] = []
        self.vocabulary: defaultdict[str, int] = defaultdict()  # every name, to its id
        self.vocabulary.default_factory = self.vocabulary.__len__  # a new name: the next id
        self.families: dict[str | None, int] = {}
        # per file: its family, and the ids and counts of its words, then of those after . or ->
        self.uses: list[tuple[int, array, array, array, array]] = []
        self.keys: dict[tuple[int, int, bool], int] = {}
        self.definers: list[list[int]] = []  # per key
        self.own: list[set[int]] = []  # per file: the keys it defines
        self.records: list[FileRecord | None] = []  # per file: the record its rows are of
        self.lines: dict[int, tuple[list[str], list[str]]] = {}  # records' names split, when ranked
        self.defined: dict[tuple[int, int], list[Definition | int]] = {}  # (file, name) -> its definitions

    def add(self, path: Path, content: str, found: tuple[FileRecord | None, Rows]) -> None:
        # every word, short and builtin ones too: no definition has their names, and a
        # filter would cost a Python step per word where the ids cost none (map in C)
        bare = Counter(IDENTIFIER.findall(content))
        dotted = Counter(MEMBER.findall(content))  # each of them a word of `bare` too
        ids, dotted_ids = (array("i", map(self.vocabulary.__getitem__, words)) for words in (bare, dotted))
        kin = self.families.setdefault(family(path), len(self.families))
        self.uses.append((kin, ids, array("i", bare.values()), dotted_ids, array("i", dotted.values())))
        self.paths.append(path)
        self.own.append(set())
        self.records.append(found[0])
        self.define(len(self.paths) - 1, kin, found[1])

    def define(self, file: int, kin: int, rows: Rows) -> None:
        for name, member, definition in rows:
            if len(name) < MIN_NAME or name in BUILTINS:
                continue
            word = self.vocabulary[name]
            key = self.keys.setdefault((kin, word, member), len(self.keys))
            if key == len(self.definers):
                self.definers.append([])
            if key not in self.own[file]:
                self.own[file].add(key)
                self.definers[key].append(file)
            self.defined.setdefault((file, word), []).append(definition)

    def definitions(self, file: int, name: int) -> list[Definition]:
        """The definitions of a name in a file, as entries (rows of its record made so)."""
        found = self.defined[(file, name)]
        record = self.records[file]
        if record is None:
            return found  # type: ignore[return-value]  # outline symbols
        if (lines := self.lines.get(file)) is None:
            lines = self.lines[file] = record.names.split("\n"), record.containers.split("\n")
        return [record.entry(i, *lines) for i in found]  # type: ignore[arg-type]

    def flows(self) -> Flows:
        """Each use of a defined key by a file: (file, key, weight, whether the file defines
        it too), in the order of the files, then of their names' first uses, bare names
        before members."""
        flows = Flows(len(self.paths), len(self.keys))
        names = list(self.vocabulary)
        weights = [weight(names[name], len(self.definers[k])) for (_, name, _), k in self.keys.items()]
        keys, definers = self.keys, self.definers
        defined = {name for _, name, _ in keys}
        for file, (kin, bare, counts, dotted, dotted_counts) in enumerate(self.uses):
            for member, ids, numbers in ((False, bare, counts), (True, dotted, dotted_counts)):
                # most words of a file (locals, parameters, words of comments) are defined nowhere
                for name, uses in compress(zip(ids, numbers, strict=True), map(defined.__contains__, ids)):
                    key = keys.get((kin, name, member))
                    if key is None:
                        continue
                    own, m = key in self.own[file], len(definers[key])
                    if m > own:
                        flows.add(file, key, weights[key] * math.sqrt(uses) / m, own)
        return flows


class Flows:
    """The uses of defined keys, as flat arrays (a monorepo has millions of uses: Python
    lists of int and float objects would take several times the memory); `out` is each
    file's total weight sent (a use's weight times the definers it reaches)."""

    def __init__(self, files: int, keys: int):
        self.files, self.keys = files, keys
        self.file = array("i")
        self.key = array("i")
        self.weight = array("d")
        self.own: dict[int, int] = {}  # key * files + file -> the file's use of a key it defines
        self.out = [0.0] * files

    def add(self, file: int, key: int, weight: float, own: bool) -> None:
        if own:
            self.own[key * self.files + file] = len(self.key)
        self.file.append(file)
        self.key.append(key)
        self.weight.append(weight)

    def arrange(self, definers: list[list[int]]) -> None:
        """Once all uses are added: the uses in key order and each (definer, key) pair, in
        definer order, with its definer's own use of the key (a use's weight flows to each
        definer but its user)."""
        own, n = self.own, self.files
        for file, key, w in zip(self.file, self.key, self.weight, strict=True):
            self.out[file] += w * (len(definers[key]) - (key * n + file in own))
        self.used = list(dict.fromkeys(self.key))  # the keys used, numbered densely
        dense = {k: i for i, k in enumerate(self.used)}
        by_key, self.key_bounds = runs(array("i", map(dense.__getitem__, self.key)), len(self.used))
        self.file_of = array("i", map(self.file.__getitem__, by_key))
        self.weight_of = array("d", map(self.weight.__getitem__, by_key))
        slot = array("i", bytes(4 * len(by_key)))  # a use's place in key order
        for place, use in enumerate(by_key):
            slot[use] = place
        del by_key
        pairs = sorted(((t, i) for i, k in enumerate(self.used) for t in definers[k]), key=lambda p: p[0])
        self.pairs = pairs
        self.pair_key = array("i", (i for _, i in pairs))
        # the slot of the definer's own use, or one past the last (where a 0.0 is appended)
        none = len(slot)
        self.pair_own = array("i", (slot[u] if (u := own.get(self.used[i] * n + t)) is not None else none for t, i in pairs))  # fmt: skip
        _, self.node_bounds = runs(array("i", (t for t, _ in pairs)), self.files)

    def pagerank(self) -> list[float]:
        """Weighted PageRank over the files, a use of key k by file f being an edge from f to
        each other definer of k; a file without outgoing edges spreads its rank evenly. Each
        step is a few passes over flat lists in C (map, sums over runs)."""
        n = self.files
        dangling_files = [f for f in range(n) if not self.out[f]]
        out = [o or math.inf for o in self.out]  # a dangling file sends nothing along edges
        rank = [1.0 / n] * n
        for _ in range(ITERATIONS):
            dangling = sum(map(rank.__getitem__, dangling_files))
            base = (1 - DAMPING) / n + DAMPING * dangling / n
            share = list(map(truediv, map(mul, repeat(DAMPING), rank), out))
            sent = array("d", map(mul, map(share.__getitem__, self.file_of), self.weight_of))
            inflow = segment_sums(sent, self.key_bounds)
            sent.append(0.0)
            received = array("d", map(sub, map(inflow.__getitem__, self.pair_key), map(sent.__getitem__, self.pair_own)))  # fmt: skip
            rank = [base + r for r in segment_sums(received, self.node_bounds)]
        return rank

    def scores(self, rank: list[float]) -> Iterator[tuple[int, int, float]]:
        """(definer, key, score) of each pair some other file uses: the rank the users send
        along the use, summed."""
        out = [o or math.inf for o in self.out]
        sent = array("d", (rank[f] * w / out[f] for f, w in zip(self.file_of, self.weight_of, strict=True)))
        inflow = segment_sums(sent, self.key_bounds)
        sent.append(0.0)
        bounds, none = self.key_bounds, len(sent) - 1
        for (t, i), own in zip(self.pairs, self.pair_own, strict=True):
            if bounds[i + 1] - bounds[i] > (own != none):  # a user besides the definer
                yield t, self.used[i], inflow[i] - sent[own]


def rank_definitions(graph: Graph) -> list[Ranked]:
    """Every ranked definition, best first. A member (a method, a field) is used as `.name`,
    a top-level definition by its bare name too; a name's weight is split between the files
    that define it."""
    if not graph.paths:
        return []
    flows = graph.flows()
    flows.arrange(graph.definers)
    rank = flows.pagerank()
    key_names = [name for _, name, _ in graph.keys]  # by key id: keys were numbered in order
    score: dict[tuple[int, int], float] = defaultdict(float)
    for file, key, value in flows.scores(rank):
        score[(file, key_names[key])] += value
    shown = [str(path) for path in graph.paths]
    # Sorted by rank to 12 digits: ranks equal but for rounding (two files used alike) are
    # ordered by path and line, not by the order in which floating-point sums were taken
    ranked = [
        (-float(f"{value:.12g}"), shown[file], s.start_line, Ranked(graph.paths[file], s, value))
        for (file, name), value in score.items()
        for s in overloads(graph.definitions(file, name))
    ]
    ranked.sort(key=lambda r: r[:3])
    return [r[3] for r in ranked]


def ranked_graph(
    workspace: Workspace,
    files: Iterable[tuple[Path, Text | None]],
    index: SymbolIndex | None = None,
    check: Callable[[Path], None] = lambda path: None,
) -> tuple[Graph, int]:
    """The graph of `files` (a text None: read it now, and let it go) and how many were
    read; generated files are left out of it. Only names are kept of each file."""
    graph, read = Graph(), 0
    for path, text in files:
        check(path)
        if text is None:
            try:
                text = workspace.text(path)
            except Refusal:
                continue
        read += 1
        if not generated(path, text):
            graph.add(path, text.content, file_definitions(path, text, index))
    return graph, read


# --- the ranked map, as overview shows it -------------------------------------------------

SIGNATURE_WIDTH = 160


def cut(text: str) -> str:
    return text if len(text) <= SIGNATURE_WIDTH else text[: SIGNATURE_WIDTH - 1] + "…"


class Signs:
    """The one-line signatures of ranked definitions, each file's text read and parsed only
    when one of its definitions is shown (`texts`: those already read)."""

    def __init__(self, workspace: Workspace, texts: dict[Path, Text]):
        self.workspace, self.texts = workspace, texts
        self.symbols: dict[Path, dict[tuple[str, int], Symbol]] = {}

    def line(self, r: Ranked) -> str:
        indent = "  " * r.symbol.name_path.count("/")
        return f"{indent}{r.symbol.start_line}: {self.sign(r)}"

    def sign(self, r: Ranked) -> str:
        text = self.texts.get(r.path)
        if text is None:
            try:
                text = self.texts[r.path] = self.workspace.text(r.path)
            except Refusal:
                return cut(r.symbol.name)  # gone since it was ranked
        symbol = r.symbol if isinstance(r.symbol, Symbol) else self.outlined(r.path, text, r.symbol)
        if symbol is None:  # an index entry the outline no longer has (the file changed)
            return cut(text.line(r.symbol.start_line).strip()) if r.symbol.start_line <= text.line_count else cut(r.symbol.name)  # fmt: skip
        return cut(signature(r.path, text, symbol).one_line())

    def outlined(self, path: Path, text: Text, d: Definition) -> Symbol | None:
        """The outline's symbol for an index entry (a signature needs its byte columns)."""
        if path not in self.symbols:
            self.symbols[path] = {(s.name_path, s.start_line): s for s in definitions(outline(path, text))}
        return self.symbols[path].get((d.name_path, d.start_line))


class Remembered:
    """The last ranking made in this process and what it was made from, so that an agent
    paging on with offset= (or asking again) gets it back for a stat of each file, without
    reading or ranking them again."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.stamp: tuple | None = None
        self.ranking: tuple[list[Ranked], int] | None = None

    def get(self, stamp: tuple | None) -> tuple[list[Ranked], int] | None:
        with self.lock:
            return self.ranking if stamp is not None and stamp == self.stamp else None

    def put(self, stamp: tuple | None, ranking: tuple[list[Ranked], int]) -> None:
        with self.lock:
            self.stamp, self.ranking = (stamp, ranking) if stamp is not None else (None, None)


REMEMBERED = Remembered()


def stamp_of(workspace: Workspace, files: list[tuple[Path, Text | None]]) -> tuple | None:
    """What a ranking of `files` depends on: each one's text version (an open buffer's, or
    one given), else its stat identity; None when a stat cannot vouch for a file's text (it
    changed too recently: see workspace.is_racy)."""
    read_at = time.time_ns()
    stamp: list[tuple[Path, object]] = []
    for path, given in files:
        text = given if given is not None else workspace.open_text(path)
        if text is not None:
            stamp.append((path, text.version))
            continue
        try:
            info = os.stat(path)
        except OSError:
            stamp.append((path, None))
            continue
        if is_racy(info, read_at):
            return None
        stamp.append((path, file_identity(info)))
    return tuple(stamp)


def ranked_map(
    workspace: Workspace,
    shown: str,
    files: Iterable[tuple[Path, Text | None]],
    offset: int,
    budget: int,
    head: str | None = None,
    *,
    index: SymbolIndex | None = None,
    check: Callable[[Path], None] = lambda path: None,
) -> dict:
    """The ranked definitions of `files` (a text None: read when needed) from `offset`, as
    many as fit `budget`, grouped by file (`head`: the first line, instead of overview's own)."""
    files = list(files)
    stamp = stamp_of(workspace, files)
    if (remembered := REMEMBERED.get(stamp)) is not None:
        ranked, read = remembered
    else:
        graph, read = ranked_graph(workspace, files, index, check)
        ranked = rank_definitions(graph)
        del graph  # only the ranked definitions are needed from here
        REMEMBERED.put(stamp, (ranked, read))
    fields = {"path": shown, "files": read, "ranked": len(ranked)}
    if not ranked:
        return {
            "text": f"overview {shown} · {plural(read, 'source file')}, no definition used by another file",
            "next": None,
            "shown": [],
            **fields,
        }
    if offset >= len(ranked):
        raise Refusal(
            "out_of_range",
            f"offset={offset} is past the last ranked definition: there are {len(ranked):,}; use offset=0..{len(ranked) - 1}.",
        )

    def frame(end: int) -> list[str]:
        lines = [
            head
            or f"overview {shown} · {plural(read, 'file')}, {plural(len(ranked), 'definition')} used across files"
            f" · ranked by use from other files (by name) · showing {offset + 1:,}-{end:,}"
        ]
        if end < len(ranked):
            lines.append(f"more: the next ranked definitions with overview path={shown} offset={end}")
        return lines

    signs = Signs(workspace, {path: text for path, text in files if text is not None})
    lines = fitted(ranked, offset, budget, frame, signs.line, workspace.display)
    end = offset + len(lines)
    return {
        "text": "\n".join(grouped(ranked[offset:end], lines, frame(end), workspace.display)),
        "next": {"offset": end} if end < len(ranked) else None,
        "shown": [
            {"path": workspace.display(r.path), "name_path": r.symbol.name_path, "line": r.symbol.start_line}
            for r in ranked[offset:end]
        ],
        **fields,
    }


def fitted(
    ranked: list[Ranked],
    offset: int,
    budget: int,
    frame: Callable[[int], list[str]],
    line: Callable[[Ranked], str],
    display: Callable[[Path], str],
) -> list[str]:
    """The lines of the most definitions from `offset` that fit `budget` with their frame and
    their files' lines, each rendered once: the size grows by each one's line (and its
    file's, for a file's first), so the first that does not fit ends the scan. Refuses,
    naming the size of one, when not even one fits."""
    lines: list[str] = []
    body, seen = 0, set()  # characters of the lines after the frame, each with its newline
    for r in ranked[offset:]:
        shown = line(r)
        grows = len(shown) + 1 + (len(display(r.path)) + 1 if r.path not in seen else 0)
        if size(frame(offset + len(lines) + 1)) + body + grows > budget:
            if not lines:
                minimum = size(frame(offset + 1)) + grows
                raise Refusal(
                    "budget_too_small",
                    f"max_chars={budget} is too small for one ranked definition; use at least {minimum}.",
                    minimum=minimum,
                )
            break
        lines.append(shown)
        body += grows
        seen.add(r.path)
    return lines


def grouped(chosen: list[Ranked], lines: list[str], frame: list[str], display: Callable[[Path], str]) -> list[str]:  # fmt: skip
    """The frame, then each file (in the order of its best definition) with its definitions'
    lines in line order."""
    by_file: dict[Path, list[int]] = {}
    for n, r in enumerate(chosen):
        by_file.setdefault(r.path, []).append(n)
    out = list(frame)
    for file, ns in by_file.items():
        out.append(display(file))
        ns.sort(key=lambda n: chosen[n].symbol.start_line)
        out += [lines[n] for n in ns]
    return out
