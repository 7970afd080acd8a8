"""A ranked map of a code base, in the spirit of aider's repo map: files are nodes of a graph
whose edges go from a file that uses a name to the files that define it; PageRank over that
graph ranks files, and each file's rank flows along its edges to the definitions it uses.

Definitions and uses come from the symbol index's records where they are current (made when
a record is, see uses.py: ranking reads no file then), else from the file's outline and text.
Matching is by name, as everywhere here, so a use of a name is split between every file that
defines it, as a top-level name or a member alike (a use of `add` says little about which of
40 `add`s it is); a name defined in many files or private (`_x`) weighs less, a long
distinctive name more. Files, names and uses are integer ids in flat arrays, so that ranking
takes time linear in the uses and definitions, and memory for the names defined (no object
per use: the records are read one at a time, twice).
"""

from __future__ import annotations

import math
import os
import threading
import time
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import reduce
from itertools import compress, repeat
from operator import add, ge, neg, sub
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, overload

from ..budget import plural, size
from ..errors import Refusal
from ..workspace import Text, Workspace, file_identity, is_racy
from .languages import language_for
from .outline import Symbol, outline
from .records import FileRecord
from .references import Signature, header_lines, signature
from .uses import BUILTINS, IDENTIFIER, MEMBER, MIN_NAME, file_uses, rankable
from .uses import generated as generated_text

if TYPE_CHECKING:
    from .index import SymbolIndex

__all__ = ["BUILTINS", "IDENTIFIER", "MEMBER", "MIN_NAME"]  # ranking's reading of a text, from uses.py

FAMILIES = {"typescript": "javascript", "tsx": "javascript", "cpp": "c"}
DAMPING = 0.85
ITERATIONS = 40  # at most; fewer once a step moves the ranks by less than TOLERANCE in all
# (they sum to 1): on Django after 24 steps, when the first 300 files are in their final order
TOLERANCE = 1e-5
MEMBER_DEPTH = 2  # definitions ranked: top level and one level in (a class's methods; Source.rows)
SPLIT_RECORDS = 256  # records whose names a ranked list keeps split, for the pages asked for
FAMILY_BITS = 5  # a key packs (name, family, member) in one int: at most 32 families


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
    # From an index record: where its header ends (see references.header_end; NO_HEAD: the
    # first line) and the version of the text it was made from; None: found by parsing.
    head: tuple[int, int] | None = None
    version: str | None = None


NO_HEAD = (-1, -1)


def definitions(symbols: list[Symbol], depth: int = MEMBER_DEPTH) -> Iterable[Symbol]:
    for s in symbols:
        yield s
        if depth > 1:
            yield from definitions(s.children, depth - 1)


def weight(name: str, definers: int) -> float:
    """How much a use of `name` says about the files that define it (`definers`: as a
    top-level name or a member)."""
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
    return generated_text(path.name, text.content, text.line_count)


@dataclass(slots=True)
class Source:
    """One file of the graph: its record when current (definitions and uses from it), else
    its outline's symbols and the uses read from its text."""

    path: Path
    family: int
    record: FileRecord | None
    symbols: list[Symbol] | None = None  # the definitions ranked, when there is no record
    uses: tuple[str, array] | None = None

    def rows(self) -> Iterator[tuple[str, bool, int]]:
        """(name, whether a member, its row: in the record, else in `symbols`) of each
        definition ranked."""
        if self.record is None:
            for i, s in enumerate(self.symbols or []):
                yield s.name, "/" in s.name_path, i
        elif self.record.kinds:  # top level (no container) and one level in (no "/" in it)
            containers = self.record.containers.split("\n")
            for i, (name, container) in enumerate(
                zip(self.record.names.split("\n"), containers, strict=True)
            ):
                if "/" not in container:
                    yield name, bool(container), i

    def used(self) -> tuple[str, array]:
        """The names the file uses and their counts (see uses.file_uses)."""
        if self.uses is not None:
            return self.uses
        used = self.record.used() if self.record is not None else None
        assert used is not None  # a source without uses of its own has a record holding them
        return used

    def start_line(self, row: int) -> int:
        return self.record.ranges[8 * row] + 1 if self.record is not None else self.symbols[row].start_line  # type: ignore[index]  # fmt: skip

    def ranked(self, row: int, rank: float, lines: tuple[list[str], list[str]] | None = None) -> Ranked:
        """The definition of a row, ranked (`lines`: the record's names and containers split)."""
        record = self.record
        if record is None:
            return Ranked(self.path, self.symbols[row], rank)  # type: ignore[index]
        names, containers = lines or (record.names.split("\n"), record.containers.split("\n"))
        head = (record.heads[2 * row], record.heads[2 * row + 1]) if record.heads else None
        return Ranked(self.path, record.entry(row, names, containers), rank, head, record.version)


def source_of(path: Path, text: Text | None, workspace: Workspace, index: SymbolIndex | None, kin: int) -> tuple[bool, Source | None]:  # fmt: skip
    """Whether the file could be read, and the file as ranking reads it: from its record
    when current and holding its uses (no read), else from its text (`text`, or read now);
    None when it cannot be read or is generated."""
    record = None
    text = text or workspace.open_text(path)  # an editor's buffer, whatever the index's workspace
    if index is not None:
        record = index.current(path) if text is None else index.record_of(path, text)
    if record is not None and record.uses is not None:
        return True, None if record.generated else Source(path, kin, record)
    if text is None:
        try:
            text = workspace.text(path)
        except Refusal:
            return False, None
    if generated(path, text):
        return True, None
    if index is not None and (record := index.record_of(path, text)) is not None:
        return True, Source(path, kin, record, uses=file_uses(text.content))
    return True, Source(path, kin, None, list(definitions(outline(path, text))), file_uses(text.content))


class Graph:
    """Files and the names they define and use, as integer ids in flat arrays. A key is a
    (name, family, whether a member) packed in one int; its definers are the files that
    define it, the pairs (file, key), numbered in file order. A use of a name by a file
    flows evenly to every file defining the name in its family (top level or member) but
    the user itself, so the work of a PageRank step is linear in the uses and definitions,
    where edges from each user to each definer would grow as their product (`get`:
    thousands of each)."""

    def __init__(self) -> None:
        self.sources: list[Source] = []
        self.families: dict[str | None, int] = {}
        self.words: dict[str, int] = {}  # every name defined somewhere, to its id
        self.names: list[str] = []  # by id
        self.keys: dict[int, int] = {}  # packed key -> key id
        self.key_word = array("i")  # by key id
        self.pair_key = array("i")  # by pair, in file order
        self.file_pairs = array("i", [0])  # file f's pairs: file_pairs[f]:file_pairs[f + 1]
        # the pair of the same name's other key (member or top level) in the file, else -1
        self.partner = array("i")
        # each definition ranked (a row of a file whose name is rankable), in file order:
        # its file, its row and its pair
        self.row_file = array("i")
        self.row_row = array("i")
        self.row_pair = array("i")

    @property
    def paths(self) -> list[Path]:
        return [s.path for s in self.sources]

    def family_of(self, path: Path) -> int:
        kin = self.families.setdefault(family(path), len(self.families))
        if kin >= 1 << FAMILY_BITS:
            raise ValueError("more families than a key holds")
        return kin

    def add(self, source: Source) -> None:
        """A file's definitions (its uses are read once all files are in: see flows)."""
        words, keys, own = self.words, self.keys, dict[int, int]()
        f, first = len(self.sources), len(self.pair_key)
        for name, member, row in source.rows():
            if not rankable(name):
                continue
            word = words.get(name)
            if word is None:
                word = words[name] = len(self.names)
                self.names.append(name)
            code = (word << FAMILY_BITS | source.family) << 1 | member
            key = keys.get(code)
            if key is None:
                key = keys[code] = len(self.key_word)
                self.key_word.append(word)
            pair = own.get(code)
            if pair is None:
                pair = own[code] = len(self.pair_key)
                self.pair_key.append(key)
            self.row_file.append(f)
            self.row_row.append(row)
            self.row_pair.append(pair)
        self.partner.extend(repeat(-1, len(self.pair_key) - first))
        for code, pair in own.items():
            if (other := own.get(code ^ 1)) is not None:
                self.partner[pair] = other
        self.sources.append(source)
        self.file_pairs.append(len(self.pair_key))

    def definers(self) -> array:
        """Per key, how many files define it."""
        count = array("i", bytes(4 * len(self.key_word)))
        for key in self.pair_key:
            count[key] += 1
        return count

    def lookups(self) -> dict[int, tuple[dict[str, int], list[int], list[int]]]:
        """Per family, each name defined in it (either way) to a slot, and per slot the
        name's key as a top-level name and as a member (-1: not defined so), so that a use
        costs one look-up by name."""
        tables: dict[int, tuple[dict[str, int], list[int], list[int]]] = {}
        mask = (1 << FAMILY_BITS) - 1
        for code, key in self.keys.items():
            slots, top, members = tables.setdefault(code >> 1 & mask, ({}, [], []))
            slot = slots.setdefault(self.names[code >> (FAMILY_BITS + 1)], len(slots))
            if slot == len(top):
                top.append(-1)
                members.append(-1)
            (members if code & 1 else top)[slot] = key
        return tables

    def flows(self) -> Flows:
        """Each use of a defined key by a file (file, key, weight), file by file; a use of
        a name reaches the keys of its family: the top-level one by any use, the member one
        by a use after `.` or `->`. Only the look-up of each used name is per name in
        Python; the rest is array arithmetic, a batch of files at a time."""
        m = self.definers()
        keys, names = self.keys, self.names
        # a name's definers, as a top-level name and as a member: a use is split between them
        total = [0] * len(self.key_word)
        for code, key in keys.items():
            total[key] = m[key] + m[keys[code ^ 1]] if code ^ 1 in keys else m[key]
        share = [weight(names[w], t) / t for w, t in zip(self.key_word, total, strict=True)]
        # every family's slots in one numbering: a family's slot s is offset + s
        lookups, offsets, top, members = self.lookups(), {}, array("i"), array("i")
        for kin, (_, tops, member_keys) in lookups.items():
            offsets[kin] = len(top)
            top.extend(tops)
            members.extend(member_keys)
        flows = Flows(self, top, members, share)
        batch = Batch()
        for f, source in enumerate(self.sources):
            uses, numbers = source.used()
            if uses and (lookup := lookups.get(source.family)) is not None:
                found = array("i", map(lookup[0].get, uses.split("\n"), repeat(-1)))  # -1: defined nowhere
                batch.add(f, offsets[source.family], found, numbers)
                if len(batch.slots) >= BATCH_USES:
                    flows.add_uses(batch)
                    batch = Batch()
        flows.add_uses(batch)
        flows.close()
        return flows


BATCH_USES = 1 << 17  # names used, looked up, taken into arrays at once: memory stays small


class Batch:
    """The names some consecutive files use: per file its id, family offset and how many;
    per name its slot (-1: defined nowhere in the family) and its counts (any use, after `.`)."""

    def __init__(self) -> None:
        self.files, self.bases, self.lengths = array("i"), array("i"), array("i")
        self.slots, self.counts = array("i"), array("H")

    def add(self, file: int, base: int, slots: array, counts: array) -> None:
        self.files.append(file)
        self.bases.append(base)
        self.lengths.append(len(slots))
        self.slots.extend(slots)
        self.counts.extend(counts)

    def uses(self):
        """(file, slot in the one numbering, counts) of each name defined in its family."""
        import numpy as np

        lengths = np.frombuffer(self.lengths, np.int32)
        files = np.repeat(np.frombuffer(self.files, np.int32), lengths)
        slots = np.frombuffer(self.slots, np.int32)
        here = slots >= 0
        files = files[here]
        slots = slots[here] + np.repeat(np.frombuffer(self.bases, np.int32), lengths)[here]
        return files, slots, np.frombuffer(self.counts, np.uint16).reshape(-1, 2)[here]


def file_sums(files, values, sums: list[float]) -> None:
    """Add to each file's sum its `values` (`files` ascending) left to right, as a loop
    would: in C, per file, so that no million floats are Python objects at once."""
    import numpy as np

    if not len(files):
        return
    cuts = np.flatnonzero(np.diff(files)) + 1
    for file, part in zip(files[np.concatenate(([0], cuts))].tolist(), np.split(values, cuts), strict=True):
        sums[file] = reduce(add, part.tolist(), sums[file])


class Flows:
    """The uses of defined keys, as flat arrays (a monorepo has millions of uses); `out` is
    each file's total weight sent (a use's weight times the definers it reaches), `mine` the
    weight of its uses of keys it defines itself (which it sends to the other definers)."""

    def __init__(self, graph: Graph, top: array, members: array, share: list[float]):
        import numpy as np

        self.files, self.keys, pairs = len(graph.sources), len(graph.key_word), len(graph.pair_key)
        self.own = np.full(pairs, -1.0)  # per pair (file, key): the weight of its own use
        self.out = [0.0] * self.files
        self.mine = [0.0] * self.files
        self.tops, self.members = np.frombuffer(top, np.int32), np.frombuffer(members, np.int32)
        self.share, self.definers = np.asarray(share), np.frombuffer(graph.definers(), np.int32)
        # each pair (file, key) as one number, sorted: a use's own pair is looked up in it
        pair_file = np.repeat(np.arange(self.files, dtype=np.int64), np.diff(np.asarray(graph.file_pairs)))
        codes = pair_file << 32 | np.frombuffer(graph.pair_key, np.int32)
        self.by_code = np.argsort(codes, kind="stable")
        self.codes = codes[self.by_code]
        self.parts: list[tuple] = []  # (file, key, weight) of each batch

    def add_uses(self, batch: Batch) -> None:
        """A batch of files' uses; a file's use of a key it defines counts only when another
        file defines the key too. In each file the top-level keys come first, then the
        members, as the sums take them (in order, as += would)."""
        import numpy as np

        files, slots, counts = batch.uses()
        parts = []
        for member, keys_of in enumerate((self.tops, self.members)):  # top-level keys (any use), then members
            keys = keys_of[slots]
            numbers = counts[:, member]
            kept = (keys >= 0) & (numbers > 0)
            parts.append((files[kept], keys[kept], numbers[kept], np.full(int(kept.sum()), member, np.int64)))
        file, key, number, second = (np.concatenate(columns) for columns in zip(*parts, strict=True))
        order = np.argsort(file.astype(np.int64) * 2 + second, kind="stable")  # by file, then top/member
        file, key, number = file[order], key[order], number[order]
        wanted = file.astype(np.int64) << 32 | key
        at = np.minimum(np.searchsorted(self.codes, wanted), max(len(self.codes) - 1, 0))
        mine = self.codes[at] == wanted if len(self.codes) else np.zeros(len(wanted), bool)
        reach = self.definers[key] - mine
        kept = reach > 0  # a key only the file itself defines: no use
        file, key, number, mine, reach, own = file[kept], key[kept], number[kept], mine[kept], reach[kept], self.by_code[at][kept]  # fmt: skip
        weights = self.share[key] * np.sqrt(number.astype(np.float64))
        self.own[own[mine]] = weights[mine]
        file_sums(file[mine], weights[mine], self.mine)
        file_sums(file, weights * reach, self.out)
        self.parts.append((file, key, weights))

    def close(self) -> None:
        """Once every batch is in: the uses as three arrays, in the order added."""
        import numpy as np

        file, key, weight = zip(*self.parts, strict=True)  # flows() adds one batch at least
        self.file, self.key, self.weight = np.concatenate(file), np.concatenate(key), np.concatenate(weight)
        del self.parts, self.tops, self.members, self.share, self.definers, self.codes, self.by_code

    def arrange(self, graph: Graph) -> None:
        """Once all uses are added: the uses in key order (stable: each key's uses in the
        order added), with each key's run of them; the keys some file uses (`used`), where
        their runs end (`ends`: a prefix sum over the uses is taken there) and the pairs of
        those keys, by file (`used_pairs`, from `used_bounds`)."""
        import numpy as np

        order = np.argsort(self.key, kind="stable")
        self.users = np.bincount(self.key, minlength=self.keys)  # per key, its uses
        self.file_of, self.weight_of = self.file[order], self.weight[order]
        del self.file, self.weight, self.key, order
        bounds = np.concatenate(([0], np.cumsum(self.users)))
        self.pair_key = np.frombuffer(graph.pair_key, np.int32)
        self.pair_bounds = list(graph.file_pairs)
        # The runs of used keys are contiguous: the prefix sums at their ends (and at 0) are
        # all a key's inflow needs.
        self.used = np.flatnonzero(self.users)
        self.ends = np.concatenate(([0], bounds[self.used + 1]))
        slot = np.full(self.keys, -1, np.int64)  # a used key's place in `used`
        slot[self.used] = np.arange(len(self.used))
        # A key nobody uses receives 0.0, which leaves a sum as it was: its pairs are left out.
        kept = self.users[self.pair_key] > 0
        self.used_pairs = slot[self.pair_key[kept]]
        self.used_bounds = np.concatenate(([0], np.cumsum(kept)))[np.asarray(self.pair_bounds)]

    def sending(self):
        """Each file's weight sent, as an array (infinite for a dangling file: it sends
        nothing along edges)."""
        import numpy as np

        return np.array([o or math.inf for o in self.out])

    def used_inflow(self, share):
        """Per used key, the rank its users send along it (each user's share times its
        weight), from a prefix sum over the uses in key order (left to right, as a loop
        would add) taken at the runs' ends."""
        import numpy as np

        at_ends = np.concatenate(([0.0], np.cumsum(share[self.file_of] * self.weight_of)))[self.ends]
        return at_ends[1:] - at_ends[:-1]

    def inflow(self, share) -> list[float]:
        """used_inflow per key (0.0: a key nobody uses)."""
        import numpy as np

        inflow = np.zeros(self.keys)
        inflow[self.used] = self.used_inflow(share)
        return inflow.tolist()

    def pagerank(self) -> list[float]:
        """Weighted PageRank over the files, a use of key k by file f being an edge from f to
        each other definer of k; a file without outgoing edges spreads its rank evenly. A
        file receives the inflow of each key it defines, less what it sent itself. Each
        step is a few passes over flat arrays (prefix sums, left to right); the sums over
        files are Python's, in file order."""
        import numpy as np

        n = self.files
        dangling_files = [f for f in range(n) if not self.out[f]]
        out, mine = self.sending(), np.array(self.mine)
        ends, starts = self.used_bounds[1:], self.used_bounds[:-1]
        rank = [1.0 / n] * n
        for _ in range(ITERATIONS):
            before = rank
            dangling = sum(map(rank.__getitem__, dangling_files))
            base = (1 - DAMPING) / n + DAMPING * dangling / n
            share = DAMPING * np.asarray(rank) / out
            inflow = self.used_inflow(share)
            prefix = np.concatenate(([0.0], np.cumsum(inflow[self.used_pairs])))
            rank = ((base + (prefix[ends] - prefix[starts])) - share * mine).tolist()
            if sum(map(abs, map(sub, rank, before))) < TOLERANCE:
                break
        return rank

    def pair_scores(self, rank: list[float]) -> tuple[list[float], list[bool]]:
        """Per pair (definer, key): the rank the other files using the key send along their
        uses, and whether any does."""
        import numpy as np

        share = np.asarray(rank) / self.sending()
        inflow = self.inflow(share)
        users = self.users.tolist()
        pair_key = self.pair_key.tolist()
        scores = list(map(inflow.__getitem__, pair_key))
        used = list(map(bool, map(users.__getitem__, pair_key)))
        shares = share.tolist()
        for pair in compress(range(len(scores)), map(ge, self.own, repeat(0.0))):  # the definer uses it too
            key = pair_key[pair]
            used[pair] = users[key] > 1
            scores[pair] = inflow[key] - shares[bisect_right(self.pair_bounds, pair) - 1] * self.own[pair]
        return scores, used


def rank_definitions(graph: Graph) -> Sequence[Ranked]:
    """Every ranked definition, best first. A member (a method, a field) is used as `.name`,
    a top-level definition by its bare name too; a use's weight is split between the files
    that define its name: a definition scores what its file's pairs of its name (as a
    member and top level) received."""
    if not graph.sources:
        return []
    flows = graph.flows()
    flows.arrange(graph)
    scores, used = flows.pair_scores(flows.pagerank())
    del flows
    values = named_scores(graph, scores, used)
    # Sorted by rank to 12 digits: ranks equal but for rounding (two files used alike) are
    # ordered by path and line, not by the order in which floating-point sums were taken
    shown = sorted(range(len(graph.sources)), key=lambda f: str(graph.sources[f].path))
    by_path = array("q", bytes(8 * len(shown)))
    for place, file in enumerate(shown):
        by_path[file] = place << 32
    files, rows, ranks = array("i"), array("i"), array("d")
    for file, row, value in ranked_rows(graph, values, used):
        files.append(file)
        rows.append(row)
        ranks.append(value)
    del values, used
    import numpy as np

    at = np.fromiter((by_path[f] | graph.sources[f].start_line(r) for f, r in zip(files, rows, strict=True)), np.int64, len(files))  # fmt: skip
    rounded = np.fromiter(map(neg, map(float, map(format, ranks, repeat(".12g")))), np.float64, len(ranks))
    order = np.lexsort((at, rounded))  # by rank, then by path and line (stable: as sorted() keeps ties)
    del at, rounded
    for source in graph.sources:
        source.uses = None  # ranked: only the definitions are needed from here
    return RankedList(
        graph.sources,
        *(array(a.typecode, np.frombuffer(a, a.typecode)[order].tobytes()) for a in (files, rows, ranks)),
    )


def named_scores(graph: Graph, scores: list[float], used: list[bool]) -> list[float]:
    """Per pair, the score of its name in its file: its own and its partner's (the name's
    other key), summed in pair order as each is used."""
    named = [0.0 if not u else s for s, u in zip(scores, used, strict=True)]
    alone = list(used)
    for pair in compress(range(len(named)), map(ge, graph.partner, repeat(0))):
        other = graph.partner[pair]
        if alone[other]:
            named[pair] = named[pair] + scores[other] if pair < other else scores[other] + named[pair]
            used[pair] = True
    return named


def ranked_rows(graph: Graph, values: list[float], used: list[bool]) -> Iterator[tuple[int, int, float]]:  # fmt: skip
    """(file, row, score) of each definition whose name scored, one per overloaded name
    path (of a name defined more than once in a file, the widest of each name path: see
    overloads); by file, then by name in the order of its first row."""
    partner = graph.partner

    def chosen() -> Iterator[tuple[int, int, int, int]]:  # (file, row, pair, its name's first pair)
        rows = zip(graph.row_file, graph.row_row, graph.row_pair, strict=True)
        for file, row, pair in compress(rows, map(used.__getitem__, graph.row_pair)):
            yield file, row, pair, pair if (other := partner[pair]) < 0 else min(pair, other)

    count = array("i", bytes(4 * len(values)))  # of each name's rows (by its first pair)
    for _, _, _, name in chosen():
        count[name] += 1
    many: dict[int, list[int]] = {}  # the rows of each name defined more than once in a file
    for _, row, _, name in chosen():
        if count[name] > 1:
            many.setdefault(name, []).append(row)
    lines: tuple[int, tuple[list[str], list[str]] | None] = (-1, None)  # a file's names split
    for file, row, pair, name in chosen():
        if count[name] == 1:
            yield file, row, values[pair]
            continue
        if (rows := many.pop(name, None)) is None:
            continue  # given with the name's first row
        source = graph.sources[file]  # overloads: the widest of each name path
        if lines[0] != file and source.record is not None:
            lines = file, (source.record.names.split("\n"), source.record.containers.split("\n"))
        symbols = [source.ranked(row, 0.0, lines[1]).symbol for row in rows]
        widest = {id(s) for s in overloads(symbols)}
        for row, s in zip(rows, symbols, strict=True):
            if id(s) in widest:
                yield file, row, values[pair]


class RankedList(Sequence[Ranked]):
    """The ranked definitions as flat arrays (a monorepo has hundreds of thousands), each
    made a Ranked only when asked for (a page of the map)."""

    def __init__(self, sources: list[Source], file: array, row: array, rank: array):
        self.sources, self.file, self.row, self.rank = sources, file, row, rank
        self.lines: dict[int, tuple[list[str], list[str]]] = {}  # a few records' names split

    def __len__(self) -> int:
        return len(self.file)

    @overload
    def __getitem__(self, i: int) -> Ranked: ...
    @overload
    def __getitem__(self, i: slice) -> list[Ranked]: ...
    def __getitem__(self, i: int | slice) -> Ranked | list[Ranked]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        file = self.file[i]
        source = self.sources[file]
        lines = None
        if source.record is not None and (lines := self.lines.get(file)) is None:
            if len(self.lines) >= SPLIT_RECORDS:
                self.lines.clear()
            lines = self.lines[file] = source.record.names.split("\n"), source.record.containers.split("\n")
        return source.ranked(self.row[i], self.rank[i], lines)


def ranked_graph(
    workspace: Workspace,
    files: Iterable[tuple[Path, Text | None]],
    index: SymbolIndex | None = None,
    check: Callable[[Path], None] = lambda path: None,
) -> tuple[Graph, int]:
    """The graph of `files` (a text None: from its current record, else read now and let
    go) and how many were read; generated files are left out of it."""
    graph, read = Graph(), 0
    for path, text in files:
        check(path)
        found, source = source_of(path, text, workspace, index, graph.family_of(path))
        read += found
        if source is not None:
            graph.add(source)
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
        if r.head is not None and r.version == text.version:  # the record's text: no parse
            return cut(Signature(header_lines(text, r.symbol.start_line, None if r.head == NO_HEAD else r.head), None, []).one_line())  # fmt: skip
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
        self.stamp: bytes | None = None
        self.ranking: tuple[Sequence[Ranked], int] | None = None

    def get(self, stamp: bytes | None) -> tuple[Sequence[Ranked], int] | None:
        with self.lock:
            return self.ranking if stamp is not None and stamp == self.stamp else None

    def put(self, stamp: bytes | None, ranking: tuple[Sequence[Ranked], int]) -> None:
        with self.lock:
            self.stamp, self.ranking = (stamp, ranking) if stamp is not None else (None, None)


REMEMBERED = Remembered()


def stamp_of(workspace: Workspace, files: list[tuple[Path, Text | None]]) -> bytes | None:
    """What a ranking of `files` depends on, as one digest: each one's path and text version
    (an open buffer's, or one given), else its stat identity; None when a stat cannot vouch
    for a file's text (it changed too recently: see workspace.is_racy)."""
    import hashlib

    read_at = time.time_ns()
    stamp = hashlib.blake2b(digest_size=32)
    for path, given in files:
        text = given if given is not None else workspace.open_text(path)
        if text is not None:
            stamp.update(f"{path}\0t{text.version}\0".encode("utf-8", "surrogateescape"))
            continue
        try:
            info = os.stat(path)
        except OSError:
            stamp.update(f"{path}\0-\0".encode("utf-8", "surrogateescape"))
            continue
        if is_racy(info, read_at):
            return None
        stamp.update(f"{path}\0{file_identity(info)}\0".encode("utf-8", "surrogateescape"))
    return stamp.digest()


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
    rerank: Callable[[Sequence[Ranked]], tuple[Sequence[Ranked], str, dict]] | None = None,
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
    ranked, how, more = reranked(ranked, offset, rerank)
    fields = {"path": shown, "files": read, "ranked": len(ranked), **more}
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
            f" · {how} · showing {offset + 1:,}-{end:,}"
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


def reranked(ranked: Sequence[Ranked], offset: int, rerank: Callable | None) -> tuple[Sequence[Ranked], str, dict]:  # fmt: skip
    """`rerank`'s ranking (reordered by another source: the header's phrase for it, the
    answer's fields), when there is one and a page to show; else the ranking by name."""
    if rerank is not None and 0 <= offset < len(ranked):
        return rerank(ranked)
    return ranked, "ranked by use from other files (by name)", {}


def fitted(
    ranked: Sequence[Ranked],
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
    for r in map(ranked.__getitem__, range(offset, len(ranked))):  # made one at a time
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


def grouped(chosen: Sequence[Ranked], lines: list[str], frame: list[str], display: Callable[[Path], str]) -> list[str]:  # fmt: skip
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
