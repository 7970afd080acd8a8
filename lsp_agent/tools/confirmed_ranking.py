"""overview's confirmed ranking: the top of the by-name ranking re-ranked by the uses a
semantic source confirms (syntax/ranking.py ranks by name; a use of `get` is split between
every `get` defined anywhere).

Each candidate's references are asked at its name, as the references tool asks them: from a
SCIP index that holds the file (exact and cheap: a few table lookups), else from the editor's
or a headless language server (one request per definition, costly). So the number asked is
bounded by source (SCIP_CANDIDATES, SERVER_CANDIDATES), SCIP lookups run in parallel beside
a server's requests one at a time, and all within CONFIRM_SECONDS, after which no more are
asked (see confirm for why the one in flight is left to finish). The definitions confirmed are sorted by their confirmed uses from other files (then in their own
file) in the places they held, so the others keep theirs; past the candidates the order
stays by name. A source that is missing, fails or is too slow leaves the by-name order, and
the header says why. Locations outside the roots are never counted (the semantic source
drops them).

A re-ranking is kept for the ranking it was made from, so that paging on with offset= shows
the same order; a new call from offset 0 asks again while the last one was incomplete.
"""

from __future__ import annotations

import re
import threading
import time
import weakref
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import overload

from ..config import Settings
from ..errors import Cancelled
from ..semantic import Missing, RequestCancelled, Semantic, Unavailable, scip
from ..semantic.servers import family_of
from ..syntax.ranking import Ranked
from .registry import Context

BY_NAME = "ranked by use from other files (by name)"
SCIP_CANDIDATES = 400  # top definitions asked of a SCIP index (about a default page)
SERVER_CANDIDATES = 40  # of a language server: one request each
PARALLEL = 4  # SCIP lookups at once; a server is asked one request at a time (see confirm)
CONFIRM_SECONDS = 10.0  # for all of them; those not asked by then stay by name
# A request left to finish times out after this long, not semantic_timeout: a timeout counts
# as a hang (two in a row restart the server) and sends a cancel (see confirm)
LEFT_TO_FINISH = 120.0


@dataclass
class Confirmation:
    """What re-ranking found: per candidate asked (its place in the by-name order), its
    confirmed uses (from other files, in its own); the sources that answered; why some or
    all went unconfirmed."""

    candidates: int = 0
    ranked: int = 0  # definitions in the whole ranking
    counts: dict[int, tuple[int, int]] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    partial: str | None = None  # a source that said its answer may be incomplete
    why: str | None = None  # why a candidate went unconfirmed (the first reason)
    fault: bool = False  # the reason is a failure, not a missing source

    @property
    def complete(self) -> bool:
        return len(self.counts) == self.candidates and self.partial is None

    def header(self) -> str:
        if not self.counts:
            return f"{BY_NAME[:-1]}; {self.why})" if self.fault and self.why else BY_NAME
        phrase = f"ranked by confirmed references from {', '.join(self.sources)}"
        if len(self.counts) == self.ranked and self.partial is None:
            return phrase
        phrase += f" for {len(self.counts):,} of the top {self.candidates:,} (the rest by name"
        if len(self.counts) < self.candidates and self.why and self.fault:
            phrase += f"; unconfirmed: {self.why}"
        return phrase + (f"; may be incomplete: {self.partial})" if self.partial else ")")

    def fields(self) -> dict:
        if not self.counts:
            return {"ranking": {"by": "name", "unavailable": self.why}}
        return {
            "ranking": {
                "by": "confirmed references",
                "sources": self.sources,
                "confirmed": len(self.counts),
                "candidates": self.candidates,
                "partial": self.partial,
                "unconfirmed": self.why if len(self.counts) < self.candidates else None,
            }
        }


class Reordered(Sequence[Ranked]):
    """The by-name ranking with its first places in another order."""

    def __init__(self, base: Sequence[Ranked], order: list[int]):
        self.base, self.order = base, order

    def __len__(self) -> int:
        return len(self.base)

    @overload
    def __getitem__(self, i: int) -> Ranked: ...
    @overload
    def __getitem__(self, i: slice) -> list[Ranked]: ...
    def __getitem__(self, i: int | slice) -> Ranked | list[Ranked]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        n = range(len(self))[i]  # IndexError past the end, as a sequence's
        return self.base[self.order[n] if n < len(self.order) else n]


class Kept:
    """The last re-ranking and the by-name ranking it was made from (held weakly: the
    ranking's own cache decides how long that lives)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.made_from: weakref.ref | None = None
        self.key: tuple = ()
        self.value: tuple[Sequence[Ranked], Confirmation] | None = None

    def get(self, ranked: Sequence[Ranked], key: tuple) -> tuple[Sequence[Ranked], Confirmation] | None:
        with self.lock:
            same = self.made_from is not None and self.made_from() is ranked and self.key == key
            return self.value if same else None

    def put(self, ranked: Sequence[Ranked], key: tuple, value: tuple[Sequence[Ranked], Confirmation]) -> None:
        with self.lock:
            try:
                self.made_from = weakref.ref(ranked)
            except TypeError:  # a plain list cannot be held weakly: nothing kept
                self.made_from, self.value = None, None
                return
            self.key, self.value = key, value


KEPT = Kept()


def confirmed_ranking(ctx: Context, ranked: Sequence[Ranked], offset: int) -> tuple[Sequence[Ranked], str, dict]:  # fmt: skip
    """(the ranking to show, the header's phrase for it, the answer's `ranking` field)."""
    settings = ctx.settings
    if settings.precision == "syntax" or not ranked:
        return ranked, BY_NAME, {"ranking": {"by": "name", "unavailable": f"precision={settings.precision}"}}
    key = (settings.precision, tuple(settings.scip_indexes), repr(settings.semantic_servers))
    kept = KEPT.get(ranked, key)
    if kept is None or (offset == 0 and not kept[1].complete):
        patient = settings.replace(semantic_timeout=max(settings.semantic_timeout, LEFT_TO_FINISH))
        found = confirm(ctx, source_for(ctx, patient), ranked)
        kept = (reorder(ranked, found), found)
        KEPT.put(ranked, key, kept)
    shown, found = kept
    return shown, found.header(), found.fields()


def source_for(ctx: Context, settings: Settings) -> Semantic:
    """The call's semantic source; in a worker process the serving process's, over the pipe,
    so no second language server starts beside the one the editor or the server holds."""
    if ctx.semantic_source is not None:
        return ctx.semantic_source(settings, lambda message: None)
    return Semantic(ctx.workspace, settings, ctx.cancel_event, editor=ctx.semantic_editor)


def reorder(ranked: Sequence[Ranked], found: Confirmation) -> Sequence[Ranked]:
    """The confirmed candidates sorted by their uses into the places they held."""
    if not found.counts:
        return ranked
    places = sorted(found.counts)
    best = sorted(places, key=lambda n: (-found.counts[n][0], -found.counts[n][1], n))
    order = list(range(places[-1] + 1))
    for place, n in zip(places, best, strict=True):
        order[place] = n
    return Reordered(ranked, order)


def candidates(ctx: Context, source: Semantic, ranked: Sequence[Ranked]) -> tuple[list[int], list[int], str | None]:  # fmt: skip
    """The places asked about: of the top SCIP_CANDIDATES those whose file an index holds,
    and of the others the first SERVER_CANDIDATES whose language has a server; and why some
    of the top have no source (none is set up for their language)."""
    indexed_places: list[int] = []
    served: list[int] = []
    covered: dict[Path, bool] = {}
    missing: dict[str | None, str | None] = {}
    why: str | None = None
    for n in range(min(len(ranked), SCIP_CANDIDATES)):
        path = ranked[n].path
        if path not in covered:
            covered[path] = indexed(ctx, source, path)
        if covered[path]:
            indexed_places.append(n)
        elif len(served) < SERVER_CANDIDATES:
            if (family := family_of(path)) not in missing:
                missing[family] = source.unserved(path)
            if missing[family] is None:
                served.append(n)
            why = why or missing[family]
    return indexed_places, served, why


def indexed(ctx: Context, source: Semantic, path: Path) -> bool:
    try:
        return (
            scip.STORE.covering(ctx.workspace, source.settings.scip_indexes, path, lambda m: None) is not None
        )
    except scip.Refused:
        return False


def name_at(ctx: Context, r: Ranked) -> tuple[Path, int, int] | None:
    """Where the definition's name is (1-based line and column), as references asks."""
    selection = getattr(r.symbol, "selection", None)
    line = selection[0] + 1 if selection else r.symbol.start_line
    try:
        text = ctx.workspace.text(r.path)
    except Exception:  # gone or unreadable since it was ranked
        return None
    if not 1 <= line <= text.line_count:
        return None
    match = re.search(rf"(?<![\w$]){re.escape(r.symbol.name)}(?![\w$])", text.line(line))
    return (r.path, line, match.start() + 1) if match else None


def uses_of(ctx: Context, source: Semantic, r: Ranked) -> tuple[str, tuple[int, int], str | None] | None:
    """(the source, (confirmed uses from other files, in its own file), why it may be
    incomplete) of one definition; None when its name is not where it was ranked."""
    at = name_at(ctx, r)
    if at is None:
        return None
    answer = source.locations("references", *at)
    elsewhere = sum(1 for loc in answer.locations if loc.path != r.path)
    own = sum(1 for loc in answer.locations if loc.path == r.path and (loc.line, loc.column) != at[1:])
    return answer.server, (elsewhere, own), answer.partial


def confirm(ctx: Context, source: Semantic, ranked: Sequence[Ranked]) -> Confirmation:
    """Each candidate's confirmed uses within CONFIRM_SECONDS, SCIP lookups in parallel
    beside a server's requests one at a time (pyright runs one find-references at a time, a
    new one cancelling the last). At the deadline the request in flight is left to finish,
    not cancelled: basedpyright 1.40 sent $/cancelRequest for a request it had not begun
    (queued while it loads) answered every later references request with an error
    ("this._token.cancel is not a function") until restarted. A cancel of the call still
    cancels the request at the server."""
    indexed_places, served, why = candidates(ctx, source, ranked)
    found = Confirmation(candidates=len(indexed_places) + len(served), ranked=len(ranked), why=why)
    if not found.candidates:
        return found
    cold = source.cold([ranked[n].path for n in served])
    deadline = time.monotonic() + CONFIRM_SECONDS
    pools = ThreadPoolExecutor(PARALLEL, thread_name_prefix="confirm"), ThreadPoolExecutor(1, thread_name_prefix="confirm")  # fmt: skip
    pending = {
        pool.submit(uses_of, ctx, source, ranked[n]): n
        for pool, places in zip(pools, (indexed_places, served), strict=True)
        for n in places
    }
    try:
        while pending and time.monotonic() < deadline:
            ctx.check_cancelled()
            left = max(deadline - time.monotonic(), 0.0)
            done, _ = wait(pending, timeout=min(0.2, left), return_when=FIRST_COMPLETED)
            for future in done:
                take(found, pending.pop(future), future)
            ctx.progress(f"confirming references: {len(found.counts)} of {found.candidates}")
    finally:
        for pool in pools:  # those not begun never are; those asked are left to finish
            pool.shutdown(wait=False, cancel_futures=True)
    if pending:
        note(found, f"{len(pending)} not answered within {CONFIRM_SECONDS:g} s", fault=True)
    if just_started := [name for name in found.sources if name in cold]:
        found.partial = (
            found.partial or f"{just_started[0]} had just started (its first answers can miss uses)"
        )
    return found


def take(found: Confirmation, place: int, future: Future) -> None:
    """One candidate's answer into the confirmation, or the reason it has none."""
    try:
        answered = future.result()
    except RequestCancelled:
        raise Cancelled() from None
    except Unavailable as exc:  # Missing: no source for that language; else a fault
        note(found, str(exc) or "the server did not answer", fault=not isinstance(exc, Missing))
        return
    except Exception as exc:  # anything else the source raised: said, never the call's failure
        note(found, f"{type(exc).__name__}: {exc}", fault=True)
        return
    if answered is None:
        return
    server, counts, partial = answered
    found.counts[place] = counts
    if server not in found.sources:
        found.sources.append(server)
    found.partial = found.partial or partial


def note(found: Confirmation, why: str, *, fault: bool) -> None:
    """The reason some went unconfirmed: the first fault, else the first reason."""
    if found.why is None or (fault and not found.fault):
        found.why, found.fault = why, fault
