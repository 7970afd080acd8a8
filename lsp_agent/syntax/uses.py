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


# --- the roles of every name in a file (references from the index) -------------------------

# A use table: every word of a file ([\w$]+, not starting with a digit), grouped by the word
# in order of its first use, each with its 0-based row, a code (references.role_code) and
# its receiver (0: none, else n: the n-th of the file's receivers, references._Receivers):
# the names "\n"-joined, how many uses each has, the rows, codes, receivers and the uses'
# receivers. It rides in a record's `uses` bytes as a second zlib stream after the names'
# (unpack reads the first alone), so a saved index carries it as it carries those.
TABLE_HEAD = "IIII"  # lengths of the names (UTF-8 bytes), the counts, the rows, the receivers (bytes)
HEAD_BYTES = array(TABLE_HEAD[0]).itemsize * len(TABLE_HEAD)
STAMP_BYTES = 8  # after the head: what made the table (references.table_stamp)


def pack_table(names: list[str], counts: array, rows: array, codes: bytes, receivers: str, ids: array, stamp: bytes) -> bytes:  # fmt: skip
    joined = "\n".join(names).encode("utf-8", "surrogatepass")
    written = receivers.encode("utf-8", "surrogatepass")
    head = array(TABLE_HEAD[0], [len(joined), len(counts), len(rows), len(written)])
    body = [head.tobytes(), stamp, joined, counts.tobytes(), rows.tobytes(), codes, written, ids.tobytes()]
    return zlib.compress(b"".join(body), 1)


def _second(packed: bytes | None) -> bytes:
    """The bytes after the names' zlib stream: a table's, if any."""
    if packed is None:
        return b""
    first = zlib.decompressobj()
    first.decompress(packed, MAX_PACKED)
    return first.unused_data


def has_table(packed: bytes | None, stamp: bytes) -> bool:
    """Whether a record's `uses` hold a use table made as `stamp` says tables are made now."""
    after = _second(packed)
    head = zlib.decompressobj().decompress(after, HEAD_BYTES + STAMP_BYTES) if after else b""
    return head[HEAD_BYTES : HEAD_BYTES + STAMP_BYTES] == stamp


def unpack_table(packed: bytes, stamp: bytes, receivers: bool = True) -> tuple[str, array, array, bytes, str, array] | None:  # fmt: skip
    """(names "\n"-joined, counts, rows, codes, receivers, the uses' receivers) of a record's
    `uses`; None when they hold no table (a record made without a tree, or by an older
    version) or one made otherwise than `stamp` says (another references query, an older
    table): never read as this version's. Without `receivers`, the last two are left empty,
    unread (a third of the table)."""
    after = _second(packed)
    if not after:
        return None
    inflate = zlib.decompressobj()
    data = inflate.decompress(after, HEAD_BYTES + STAMP_BYTES)
    if data[HEAD_BYTES : HEAD_BYTES + STAMP_BYTES] != stamp:
        return None
    head = array(TABLE_HEAD[0])
    head.frombytes(data[:HEAD_BYTES])
    size, n_counts, n_rows, n_written = head
    if receivers:
        data += inflate.decompress(inflate.unconsumed_tail, MAX_PACKED)
    else:  # up to the codes' end
        data += inflate.decompress(inflate.unconsumed_tail, size + 4 * n_counts + 5 * n_rows)
        n_written = 0
    at = HEAD_BYTES + STAMP_BYTES
    names = data[at : at + size].decode("utf-8", "surrogatepass")
    at += size
    counts, rows, ids = array("I"), array("I"), array("I")
    counts.frombytes(data[at : at + 4 * n_counts])
    at += 4 * n_counts
    rows.frombytes(data[at : at + 4 * n_rows])
    at += 4 * n_rows
    codes = data[at : at + n_rows]
    at += n_rows
    written = data[at : at + n_written].decode("utf-8", "surrogatepass")
    if receivers:
        ids.frombytes(data[at + n_written : at + n_written + 4 * n_rows])
    return names, counts, rows, codes, written, ids
