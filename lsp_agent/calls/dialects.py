"""The registry of dialects, and the tables a scrubber reads for a chosen set of them.

Adding a dialect is writing its module (one `Dialect` record) and listing it here."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

from . import fenced, function_xml, invoke_xml, mistral, tagged_json
from .dialect import Dialect

DIALECTS: dict[str, Dialect] = {
    d.name: d
    for d in (tagged_json.DIALECT, function_xml.DIALECT, invoke_xml.DIALECT, mistral.DIALECT, fenced.DIALECT)
}


def dialect(name: str) -> Dialect:
    try:
        return DIALECTS[name]
    except KeyError:
        raise ValueError(f"unknown dialect {name!r}; dialects: {', '.join(DIALECTS)}") from None


@dataclass(frozen=True)
class Lexicon:
    """What a scrubber looks for, for one set of dialects."""

    candidate: re.Pattern  # a character where an opener or a stray closer may start
    openers: dict[str, tuple[Dialect, ...]]  # by first character: dialects that open anywhere
    line_openers: dict[str, tuple[Dialect, ...]]  # by first character: dialects that open at line starts
    stray_closers: dict[str, str]  # closer -> the dialect it betrays


@cache
def lexicon(names: tuple[str, ...] = tuple(DIALECTS)) -> Lexicon:
    chosen = [dialect(n) for n in names]
    return Lexicon(
        candidate=re.compile("[" + re.escape("".join(sorted({c for d in chosen for c in d.starts}))) + "]"),
        openers=by_first_char(d for d in chosen if not d.line_start),
        line_openers=by_first_char(d for d in chosen if d.line_start),
        stray_closers={c: d.name for d in chosen for c in d.stray_closers},
    )


def by_first_char(chosen: Iterable[Dialect]) -> dict[str, tuple[Dialect, ...]]:
    table: dict[str, tuple[Dialect, ...]] = {}
    for d in chosen:
        for c in d.starts:
            table[c] = (*table.get(c, ()), d)
    return table
