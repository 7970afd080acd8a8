"""The names a file uses, as overview ranks them: the identifiers of its text (comments and
strings included: a cheap, parse-free reading, enough to rank), each with how often it
occurs and how often after `.` or `->` (as a member). Computed once per text, when its index
record is made (in the workers on a cold build), so that ranking never reads a file again.

Only names a definition could have are kept: shorter names (`a`, `s`, `id`) and names every
program uses without defining them (builtins, keywords) are never ranked."""

from __future__ import annotations

import builtins
import keyword
import re
import zlib
from array import array
from collections import Counter

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
MIN_NAME = 3  # shorter names say nothing about where they come from
MAX_COUNT = 0xFFFF  # counts are kept in 16 bits: a name used more often in one file counts as this
# Minified or generated files (one long line of a bundle) are left out of the map.
MAX_LINE_MEAN = 200


def rankable(name: str) -> bool:
    return len(name) >= MIN_NAME and name not in BUILTINS


def file_uses(content: str) -> tuple[str, array]:
    """The names `content` uses, one a line in order of first use, and their counts: two per
    name (every occurrence, then those as a member; each member use is a word too)."""
    bare = Counter(IDENTIFIER.findall(content))
    dotted = Counter(MEMBER.findall(content))
    names = [name for name in bare if rankable(name)]
    counts = array("H")
    for name in names:
        counts.append(min(bare[name], MAX_COUNT))
        counts.append(min(dotted.get(name, 0), MAX_COUNT))
    return "\n".join(names), counts


MAX_PACKED = 16 << 20  # bytes a record's uses unpack to at most (a 2 MiB file's are far fewer)


def pack(names: str, counts: array) -> bytes:
    """Uses as a record keeps them: compressed (a monorepo's are 45 MB plain, a third packed),
    the names (no NUL in any), a NUL, then the counts."""
    return zlib.compress(names.encode("utf-8") + b"\0" + counts.tobytes(), 1)


def unpack(packed: bytes) -> tuple[str, array]:
    data = zlib.decompressobj().decompress(packed, MAX_PACKED)
    names, _, counts = data.partition(b"\0")
    return names.decode("utf-8"), array("H", counts)


def generated(file_name: str, content: str, line_count: int) -> bool:
    """A minified bundle or generated file: `x.min.js`, or lines far longer than code's."""
    return ".min." in file_name or len(content) / max(line_count, 1) > MAX_LINE_MEAN
