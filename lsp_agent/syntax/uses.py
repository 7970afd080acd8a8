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
import struct
import zlib
from array import array
from collections import Counter

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Any

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

# A use table: every word of a file ([\w$]+, not starting with a digit), each use with its
# 0-based row, a code (references.role_code) and its receiver (0: none, else n: the n-th of the
# file's receivers, references._Receivers). It is a record's `use_table`, packed so that one
# name's uses are read without inflating the rest (references asks hundreds of files for one
# name): the words are cut into buckets by a hash of the word, a bucket's words' uses kept
# together (each word's in order), and the uses cut into blocks of BLOCK_USES; each bucket and
# block is a zlib stream of its own, found through a table of offsets. A lookup inflates one
# bucket (its words and how many uses each has) and the blocks its word's uses lie in.
#   head:     stamp (8 bytes: references.table_stamp), then uses, buckets, blocks, uses a block
#             holds, the packed receivers' length, and the array typecodes of the rows and of
#             the receivers: 2 bytes each where every one is below 65,536, else 4 (TABLE_HEAD)
#   starts:   where each bucket, then each block, starts in the streams, and where they end
#   firsts:   each bucket's first use, and the uses' count (4 bytes each, as the starts)
#   buckets:  each: its words "\n"-joined (UTF-8), a NUL, then each word's count of uses
#   blocks:   each: its uses' rows, codes (1 byte each), receivers
#   receivers: the file's receivers, one a line, packed
TABLE_HEAD = struct.Struct("=8sIIIIIcc")  # in this machine's order, as the arrays after it
STAMP_BYTES = 8
# So Django's tables take 5.8 MB, as they did as one stream each, and `filter`'s 333 are looked
# up in 12 ms, not 35 (inflated whole). Smaller buckets and blocks are faster, and larger (64
# and 256: 10 ms, 6.3 MB).
BUCKET_WORDS = 128  # words a bucket holds, about: what a lookup inflates beside its blocks
BLOCK_USES = 512  # uses a block holds
LEVEL = 6  # small streams: a better level makes them a twentieth smaller, no slower to read


def bucket_of(word: str, buckets: int) -> int:
    return zlib.crc32(word.encode("utf-8", "surrogatepass")) % buckets


def pack_table(names: list[str], counts: array, rows: array, codes: bytes, receivers: str, ids: array, stamp: bytes) -> bytes:  # fmt: skip
    """A use table from references.use_table's parts: each word's uses in `rows`, `codes` and
    `ids` one after the other, as many as its count (see above)."""
    n_buckets = max(1, len(names) // BUCKET_WORDS)
    grouped: list[list[tuple[str, int, int]]] = [[] for _ in range(n_buckets)]
    first = 0
    for name, count in zip(names, counts, strict=True):
        grouped[bucket_of(name, n_buckets)].append((name, first, count))
        first += count
    streams, firsts = [], array("I")
    kept_rows, kept_codes, kept_ids = array("I"), bytearray(), array("I")  # bucket by bucket
    for bucket in grouped:
        firsts.append(len(kept_rows))
        for _, first, count in bucket:
            kept_rows += rows[first : first + count]
            kept_codes += codes[first : first + count]
            kept_ids += ids[first : first + count]
        joined = "\n".join(name for name, _, _ in bucket).encode("utf-8", "surrogatepass")
        streams.append(zlib.compress(joined + b"\0" + array("I", [c for _, _, c in bucket]).tobytes(), LEVEL))
    firsts.append(len(kept_rows))
    row_code, id_code = narrowest(kept_rows), narrowest(kept_ids)
    kept_rows, kept_ids = array(row_code, kept_rows), array(id_code, kept_ids)
    for at in range(0, len(kept_rows), BLOCK_USES):
        end = at + BLOCK_USES
        block = kept_rows[at:end].tobytes() + kept_codes[at:end] + kept_ids[at:end].tobytes()
        streams.append(zlib.compress(block, LEVEL))
    written = zlib.compress(receivers.encode("utf-8", "surrogatepass"), LEVEL)
    starts = array("I", [0])
    for stream in streams:
        starts.append(starts[-1] + len(stream))
    head = TABLE_HEAD.pack(stamp, len(rows), n_buckets, len(streams) - n_buckets, BLOCK_USES, len(written), row_code.encode(), id_code.encode())  # fmt: skip
    return b"".join([head, starts.tobytes(), firsts.tobytes(), *streams, written])


def narrowest(values: array) -> str:
    """The typecode of 2-byte unsigned ints where they hold every value, else of 4-byte ones."""
    return "H" if not values or max(values) < 1 << 16 else "I"


class Stored:
    """A use table left in the index file it was saved to (store.TableFile), read each time
    it is looked in, so that a process holding an index does not hold its tables too: a
    monorepo's are 54 MiB, which overview's worker needs not. Its checksum is checked once,
    when the whole index is loaded or else at its first read (`digest` None: checked). As a
    record's field it pickles (to another process) as the table's bytes."""

    __slots__ = ("digest", "length", "offset", "source", "stamp")

    def __init__(self, source: Any, offset: int, length: int, stamp: bytes, digest: bytes | None = None):  # fmt: skip
        self.source, self.offset, self.length, self.stamp, self.digest = source, offset, length, stamp, digest

    def read(self) -> bytes | None:
        """The table's bytes; None when they cannot be read or are not the ones saved."""
        data = self.source.table_at(self.offset, self.length)
        return data if data is not None and self.checked(data) else None

    def checked(self, data: bytes | memoryview) -> bool:
        """Whether `data` are the table's bytes as saved (their checksum, while not checked yet)."""
        digest = self.digest  # once: another thread may check it at the same time
        if digest is not None:
            if self.source.digest(data) != digest:
                return False
            self.digest = None
        return True

    def __reduce__(self) -> tuple:
        return bytes, (self.read() or b"",)

    def __eq__(self, other: object) -> bool:
        mine, theirs = self.read(), other.read() if isinstance(other, Stored) else other
        return mine is not None and mine == theirs


TableBytes = bytes | Stored  # a record's use table: its bytes in memory, or where they are saved


def has_table(packed: TableBytes | None, stamp: bytes) -> bool:
    """Whether a record's `use_table` is one made as `stamp` says tables are made now."""
    if isinstance(packed, Stored):
        return packed.stamp == stamp
    return packed is not None and packed[:STAMP_BYTES] == stamp


class UseTable:
    """A record's use table, read one word at a time (see pack_table)."""

    __slots__ = (
        "_found",
        "_receivers",
        "block",
        "blocks",
        "buckets",
        "data",
        "firsts",
        "ids",
        "rows",
        "starts",
        "streams",
        "uses",
        "view",
    )

    def __init__(self, data: bytes):
        _, self.uses, self.buckets, self.blocks, self.block, written, rows, ids = TABLE_HEAD.unpack_from(data)
        self.rows, self.ids = rows.decode("latin-1"), ids.decode("latin-1")
        self.data, self.view = data, memoryview(data)
        self.starts, self.firsts = array("I"), array("I")
        at = TABLE_HEAD.size + 4 * (self.buckets + self.blocks + 1)
        self.starts.frombytes(data[TABLE_HEAD.size : at])
        self.firsts.frombytes(data[at : at + 4 * (self.buckets + 1)])
        at += 4 * (self.buckets + 1)
        self.streams = at
        if (
            not self.buckets
            or not self.block
            or at + self.starts[-1] + written != len(data)
            or self.blocks * self.block < self.uses
            or len(self.firsts) != self.buckets + 1
            or {self.rows, self.ids} - {"H", "I"}
            or self.firsts[-1] != self.uses
        ):
            raise ValueError("a use table of another shape")
        self._receivers: list[str] | None = None
        self._found: tuple[str, tuple[array, bytes, array] | None] | None = None  # the last word's

    @classmethod
    def of(cls, packed: TableBytes | None, stamp: bytes) -> UseTable | None:
        """The table of a record's `use_table`; None when it has none or one made otherwise
        than `stamp` says (another references query, an older table): never read as this
        version's, nor when damaged."""
        if not has_table(packed, stamp):
            return None
        if isinstance(packed, Stored) and (packed := packed.read()) is None:  # its stamp is the bytes'
            return None
        try:
            return cls(packed)  # type: ignore[arg-type]
        except (ValueError, IndexError, struct.error):
            return None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, UseTable) and self.data == other.data

    def _stream(self, i: int) -> bytes:
        """Bucket i, or block i - buckets, inflated."""
        start, end = self.streams + self.starts[i], self.streams + self.starts[i + 1]
        return zlib.decompressobj().decompress(self.view[start:end], MAX_PACKED)

    def find(self, word: str) -> tuple[array, bytes, array] | None:
        """The rows, codes and receivers of the uses of `word`, in order (empty when the file
        has none); None when the table is damaged. The last word's are kept: a file read is
        asked for its lines, then its uses."""
        if self._found is None or self._found[0] != word:
            self._found = (word, self._find(word))
        return self._found[1]

    def _find(self, word: str) -> tuple[array, bytes, array] | None:
        try:
            b = bucket_of(word, self.buckets)
            bucket = self._stream(b)
            names, _, packed = bucket.partition(b"\0")
            at = (b"\n" + names + b"\n").find(b"\n" + word.encode("utf-8", "surrogatepass") + b"\n")
            if at < 0:
                return array("I"), b"", array("I")
            counts, i = array("I"), names.count(b"\n", 0, at)
            counts.frombytes(packed)
            first, count = self.firsts[b] + sum(counts[:i]), counts[i]
            rows, codes, ids = array(self.rows), bytearray(), array(self.ids)
            r, d = rows.itemsize, ids.itemsize  # bytes a row and a receiver take
            for k in range(first // self.block, (first + count - 1) // self.block + 1):
                block, base = self._stream(self.buckets + k), k * self.block
                n = min(self.block, self.uses - base)
                lo, hi = max(first - base, 0), min(first + count - base, n)
                rows.frombytes(block[r * lo : r * hi])
                codes += block[r * n + lo : r * n + hi]
                ids.frombytes(block[(r + 1) * n + d * lo : (r + 1) * n + d * hi])
        except (ValueError, IndexError, struct.error, zlib.error):
            return None
        if len(rows) != count or len(codes) != count or len(ids) != count:
            return None
        return rows, bytes(codes), ids

    def receivers(self) -> list[str] | None:
        """The file's receivers, one a line (a use's receiver n is the n-th); None when
        damaged."""
        if self._receivers is None:
            start = self.streams + self.starts[-1]
            try:
                text = zlib.decompressobj().decompress(self.view[start:], MAX_PACKED)
                self._receivers = text.decode("utf-8", "surrogatepass").split("\n")
            except (ValueError, zlib.error):
                return None
        return self._receivers
