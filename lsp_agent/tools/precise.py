"""The semantic section of navigation answers: what the language's own server confirms.

Tools ask through `confirmed`; it never fails: a server that is missing, crashes, hangs or
answers garbage gives a `Confirmed` with `unavailable` set to the reason, and the tool
answers from the syntax source alone, saying why. Locations outside the workspace roots are
counted in `dropped` and never shown.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path

from ..budget import plural
from ..errors import Cancelled
from ..semantic import Location, Missing, RequestCancelled, Semantic, Unavailable, in_order
from ..semantic.servers import family_of, spec_for
from ..workspace import Text
from .registry import Context

BY_NAME = "a question by name"  # no position to ask a server about: nothing to say
MAX_STARTS = 8  # definitions of a name asked about, for a question by name

PRECISION = {
    "enum": ["auto", "syntax"],
    "description": "auto: with the language's server; syntax: by name.",
}


@dataclass
class Confirmed:
    """A semantic answer merged over one or more positions, or why there is none."""

    server: str = ""
    locations: list[Location] = field(default_factory=list)
    dropped: int = 0
    invalid: int = 0
    partial: str | None = None
    asked: int = 0
    of: int = 0  # positions there were to ask about
    unavailable: str | None = None
    missing: bool = False  # unavailable because no server is set up for the language
    notes: list[str] = field(default_factory=list)  # said by the source (a stale SCIP index)
    documentation: list[str] = field(default_factory=list)  # the symbol's, where the source has it
    # when the question began (time.monotonic) and the seconds the server's answers took where
    # they were asked: its requests, their locations read (not a wait for a thread to run it,
    # nor, from a worker, the pipe to the serving process and back, nor its answer taken)
    began: float = field(default=0.0, compare=False)
    took: float = field(default=0.0, compare=False)
    # the texts the locations were read from, where this process read them (not a worker's):
    # what the answer shows of them is the same text, not a second read of each file
    texts: dict[Path, Text] = field(default_factory=dict, compare=False, repr=False)

    @property
    def answered(self) -> bool:
        return self.unavailable is None

    def keys(self) -> set[tuple[Path, int, int]]:
        return {(loc.path, loc.line, loc.column) for loc in self.locations}

    def fields(self) -> dict:
        if self.unavailable is not None:
            return {"semantic": {"unavailable": self.unavailable}}
        return {
            "semantic": {
                "server": self.server,
                "locations": len(self.locations),
                "outside_workspace": self.dropped,
                "invalid": self.invalid,
                "partial": self.partial,
            }
            | ({"documentation": self.documentation} if self.documentation else {})
        }


# Questions asked while the syntax source works on the same call (`ahead`).
AHEAD = ThreadPoolExecutor(max_workers=4, thread_name_prefix="semantic")


def semantic(ctx: Context, precision: str | None, report: Callable[[str], None] | None = None) -> Semantic:
    settings = ctx.settings if precision is None else ctx.settings.replace(precision=precision)
    if ctx.semantic_source is not None:  # in a worker: the serving process's, over the pipe
        return ctx.semantic_source(settings, report or (lambda message: ctx.progress(message)))
    return Semantic(
        ctx.workspace, settings, ctx.cancel_event, report or (lambda message: ctx.progress(message)),
        editor=ctx.semantic_editor,
    )  # fmt: skip


def server_expected(ctx: Context, path: Path, precision: str | None) -> bool:
    """Whether a language server is set up to answer about `path` (the editor's, or one
    configured or on PATH): a guess made before asking, so that the by-name search beside it
    may leave out other languages' files (a SCIP index alone is not guessed: all are searched)."""
    if (precision or ctx.settings.precision) == "syntax":
        return False
    if ctx.semantic_editor is not None:
        return True
    family = family_of(path)
    return family is not None and spec_for(family, ctx.settings.semantic_servers)[0] is not None


def ahead(ctx: Context, method: str, starts: list[tuple[Path, int, int]], precision: str | None) -> Future:
    """`confirmed` in another thread, so that the server and the syntax source work at once.
    That thread reports nothing (only the call's own thread may step aside for light calls)."""
    return AHEAD.submit(confirmed, ctx, method, starts, precision, quiet=True)


def here(ctx: Context, method: str, starts: list[tuple[Path, int, int]], precision: str | None) -> Future:
    """`confirmed` on this thread, as `ahead`'s future would hold it once done: where the
    answer is expected at once, the hops to a thread and back are saved."""
    done: Future = Future()
    try:
        done.set_result(confirmed(ctx, method, starts, precision))
    except Exception as exc:  # (Cancelled: raised where its result is taken, as from a thread)
        done.set_exception(exc)
    return done


def result(ctx: Context, pending: Future) -> Confirmed:
    """The answer asked `ahead`, reporting progress while it is still coming."""
    while not wait([pending], timeout=0.2).done:
        ctx.progress("waiting for the language server")
    return pending.result()


def confirmed(
    ctx: Context,
    method: str,
    starts: list[tuple[Path, int, int]],
    precision: str | None,
    *,
    quiet: bool = False,
) -> Confirmed:
    """The server's `method` answers (references, definition, implementation) at each start,
    merged; cancelling the call cancels the request at the server."""
    began = time.monotonic()
    source = semantic(ctx, precision, (lambda message: None) if quiet else None)
    result = Confirmed(of=len(starts))
    if not starts:
        return Confirmed(unavailable="no definition to ask the server about", missing=True)
    failure: str | None = None
    fault = False
    spent = 0.0  # the server's own time (its answers', where each was asked), not the pipe's
    for path, line, column in starts[:MAX_STARTS]:
        try:
            answer = source.locations(method, path, line, column)
        except RequestCancelled:
            raise Cancelled() from None
        except Missing as exc:  # that language has no server: its definitions go unasked
            failure = failure or str(exc)
            continue
        except Unavailable as exc:  # a fault: nothing the server said this time is trusted
            failure, fault = str(exc) or "the server did not answer", True
            break
        result.server = answer.server
        result.locations += answer.locations
        result.dropped += answer.dropped
        result.invalid += answer.invalid
        result.partial = result.partial or answer.partial
        result.notes += [n for n in answer.notes if n not in result.notes]
        result.documentation = result.documentation or answer.documentation
        result.asked += 1
        spent += answer.took
    if fault or not result.asked:
        return Confirmed(unavailable=failure or "no server answered", missing=not fault, of=len(starts))
    result.locations = in_order(result.locations)
    result.began, result.took = began, spent
    if isinstance(source, Semantic):
        result.texts = dict(read for read in source.files.values() if read is not None)
    return result


def source_notes(found: Confirmed, what: str) -> list[str]:
    """The notes that say where an answer came from and how complete it is."""
    if not found.answered:
        if found.unavailable in ("precision=syntax", BY_NAME) or found.missing:
            return []  # nothing went wrong: `lsp-agent doctor` says which source answers
        return [f"no type-aware answer: {found.unavailable}"]
    notes = list(found.notes)
    if found.partial:
        notes.append(f"may be incomplete: {found.partial}")
    if found.dropped:
        notes.append(
            f"left out: {plural(found.dropped, 'location')} outside the workspace (standard library, installed packages)"
        )
    if found.invalid:
        notes.append(
            f"left out: {plural(found.invalid, 'location')} {found.server} gave that no file here has"
        )
    if found.asked < found.of:
        notes.append(
            f"asked {found.server} about {found.asked} of {found.of} {what}: narrow with a name path (Owner/name) or start from a use"
        )
    return notes
