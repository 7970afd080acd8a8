"""Parse trees cached by (path, version), re-parsed incrementally when a text changes.

The edit handed to tree-sitter is computed by comparing the previous text of the path with
the new one (common prefix and suffix), so it does not matter where a change came from: an
editor's didChange, a tool's edit or a save on disk all re-parse only what changed.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

from ..workspace import Text
from .languages import grammar

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    import tree_sitter

TREE_CACHE_SIZE = 48  # trees (with their bytes) kept for incremental re-parses and reuse
# A tree takes about 25 times its source in memory (typescript.js: 9 MB -> 225 MB), so the
# cache is also bounded by the source bytes it holds; the newest tree is always kept.
TREE_CACHE_BYTES = 8 * 1024 * 1024
MAX_PARSE_BYTES = 32 * 1024 * 1024  # larger texts get no symbols (a parse would take seconds)
# A parse of a bytes object holds the GIL until it is done: a tenth of a second for a large
# file, which a light call in another thread (a read, documentSymbol while typing) then
# waits for. Handed a function to read from instead, the parser calls back into Python for
# each chunk, where the interpreter lets another thread run. Texts this large are parsed
# from scratch that way; an incremental parse (the light lane's) runs through.
CHUNKED_PARSE_BYTES = 16 * 1024
PARSE_CHUNK = 4096  # bytes read at once: about a millisecond of parsing


@dataclass(frozen=True)
class Parsed:
    """A file's text and its tree."""

    language: str
    version: str
    data: bytes  # the UTF-8 bytes the tree was parsed from: node offsets index into them
    tree: tree_sitter.Tree
    # After an incremental parse: what it started from, so an outline can be updated too.
    change: Change | None = None


@dataclass(frozen=True)
class Change:
    """How a tree differs from the tree of an earlier version of its text."""

    previous: str  # the earlier version
    edit: dict  # the edit from it (arguments of tree_sitter.Tree.edit)
    changed: tuple[tuple[int, int], ...]  # byte ranges, in the new text, whose syntax changed


def parse_fresh(parser: tree_sitter.Parser, data: bytes) -> tree_sitter.Tree:
    """The tree of `data` parsed from scratch (in chunks when large, see CHUNKED_PARSE_BYTES)."""
    if len(data) <= CHUNKED_PARSE_BYTES:
        return parser.parse(data)
    return parser.parse(lambda offset, _point: data[offset : offset + PARSE_CHUNK])


def encode(text: Text) -> bytes:
    return text.content.encode("utf-8", "surrogatepass")


def _first_difference(a: bytes, b: bytes, n: int) -> int:
    """The first index < n where a and b differ (n if none): galloping memcmp over growing
    chunks, then bisection, so an edit at offset k costs O(k) in C and O(log k) in Python."""
    i, step = 0, 4096
    while i < n:
        j = min(n, i + step)
        if a[i:j] != b[i:j]:
            break
        i, step = j, step * 2
    else:
        return n
    lo, hi = i, j  # a[:lo] == b[:lo], and they differ before hi
    while hi - lo > 32:
        mid = (lo + hi) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid
    while a[lo] == b[lo]:
        lo += 1
    return lo


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix."""
    return _first_difference(a, b, min(len(a), len(b)))


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` bytes (galloping from the end)."""
    la, lb = len(a), len(b)
    i, step = 0, 4096
    while i < limit:
        j = min(limit, i + step)
        if a[la - j : la - i] != b[lb - j : lb - i]:
            break
        i, step = j, step * 2
    else:
        return limit
    lo, hi = i, j  # the last lo bytes are equal, the last hi are not
    while hi - lo > 32:
        mid = (lo + hi) // 2
        if a[la - mid : la - lo] == b[lb - mid : lb - lo]:
            lo = mid
        else:
            hi = mid
    while a[la - lo - 1] == b[lb - lo - 1]:
        lo += 1
    return lo


def point_at(data: bytes, offset: int) -> tuple[int, int]:
    """(row, byte column) of a byte offset, as tree-sitter counts them."""
    row = data.count(b"\n", 0, offset)
    return row, offset - (data.rfind(b"\n", 0, offset) + 1)


def input_edit(old: bytes, new: bytes) -> dict:
    """The single edit turning `old` into `new`, as arguments of tree_sitter.Tree.edit."""
    start = common_prefix(old, new)
    while start > 0 and start < len(new) and (new[start] & 0xC0) == 0x80:
        start -= 1  # never split a UTF-8 sequence
    suffix = common_suffix(old, new, min(len(old), len(new)) - start)
    while suffix > 0 and (new[len(new) - suffix] & 0xC0) == 0x80:
        suffix -= 1
    old_end, new_end = len(old) - suffix, len(new) - suffix
    return {
        "start_byte": start,
        "old_end_byte": old_end,
        "new_end_byte": new_end,
        "start_point": point_at(new, start),
        "old_end_point": point_at(old, old_end),
        "new_end_point": point_at(new, new_end),
    }


# Bytes that open or close a token spanning lines (a string, a comment): an edit of one can
# change how text far from it lexes, which tree-sitter's reuse of the nodes around it (by
# how far their lexing looked ahead) does not see.
CONTEXT_BYTES = frozenset(b"\"'`#/*\\")


def stale_error(tree, edit: dict, old: bytes, new: bytes, changed: tuple[tuple[int, int], ...]) -> bool:
    """Whether an incremental parse kept a syntax error the edit may have undone: the edit
    changed a byte of CONTEXT_BYTES and an error lies outside what it changed (three double
    quotes typed at the end of a file close a string three above opened: parsed afresh,
    the error there is gone). Then the text is parsed afresh."""
    if not tree.root_node.has_error:
        return False
    start = edit["start_byte"]
    typed = old[start : edit["old_end_byte"]] + new[start : edit["new_end_byte"]]
    if CONTEXT_BYTES.isdisjoint(typed):
        return False
    spans = [(start, edit["new_end_byte"]), *changed]
    todo = [tree.root_node]
    while todo:
        node = todo.pop()
        if node.is_error or node.is_missing:
            if not any(a <= node.end_byte and node.start_byte <= b for a, b in spans):
                return True
            continue
        todo += [child for child in node.children if child.has_error]
    return False


def erroneous(*trees: tree_sitter.Tree) -> tuple[tuple[int, int], ...]:
    """The spans of the top-level nodes holding a syntax error in any of `trees` (an old tree
    edited to the new text's offsets, the new one). How tree-sitter recovers from an error
    depends on the parses before, and its changed ranges can miss a change of structure
    inside such a node when a later parse recovers otherwise (an edit at a file's first byte
    turned a function 200 bytes later into no function): what holds them is looked at again."""
    return tuple(
        (node.start_byte, node.end_byte)
        for tree in trees
        if tree.root_node.has_error
        for node in tree.root_node.children
        if node.has_error
    )


class ParseCache:
    """The latest tree of each recently parsed path (LRU), and per-thread parsers
    (a tree_sitter.Parser must not be shared between threads)."""

    def __init__(self, size: int = TREE_CACHE_SIZE, max_bytes: int = TREE_CACHE_BYTES):
        self.size = size
        self.max_bytes = max_bytes
        self._bytes = 0
        self._trees: OrderedDict[Path, Parsed] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()
        # afresh: an incremental parse redone from scratch (see stale_error)
        self.counts = {"cold": 0, "incremental": 0, "cached": 0, "afresh": 0}

    def parser(self, language: str):
        import tree_sitter

        parsers = self._local.__dict__.setdefault("parsers", {})
        if language not in parsers:
            parsers[language] = tree_sitter.Parser(grammar(language))
        return parsers[language]

    def parse(self, path: Path, text: Text, language: str) -> Parsed | None:
        """The tree of `text` (the content of `path`); None for texts too large to parse."""
        with self._lock:
            previous = self._trees.get(path)
            if previous is not None and previous.version == text.version and previous.language == language:
                self._trees.move_to_end(path)
                self.counts["cached"] += 1
                return previous
        data = encode(text)
        if len(data) > MAX_PARSE_BYTES:
            return None
        parser = self.parser(language)
        change = None
        if previous is not None and previous.language == language:
            old_tree = previous.tree.copy()  # other threads may still be reading the cached tree
            edit = input_edit(previous.data, data)
            old_tree.edit(**edit)
            tree = parser.parse(data, old_tree)
            changed = tuple((r.start_byte, r.end_byte) for r in old_tree.changed_ranges(tree))
            change = Change(previous.version, edit, changed + erroneous(old_tree, tree))
            kind = "incremental"
            if stale_error(tree, edit, previous.data, data, changed):
                tree, change, kind = parse_fresh(parser, data), None, "afresh"
        else:
            tree = parse_fresh(parser, data)
            kind = "cold"
        parsed = Parsed(language, text.version, data, tree, change)
        with self._lock:
            self.counts[kind] += 1
            if (old := self._trees.pop(path, None)) is not None:
                self._bytes -= len(old.data)
            self._trees[path] = parsed
            self._bytes += len(data)
            while len(self._trees) > 1 and (len(self._trees) > self.size or self._bytes > self.max_bytes):
                _, evicted = self._trees.popitem(last=False)
                self._bytes -= len(evicted.data)
        return parsed

    def holds(self, path: Path) -> bool:
        """Whether a tree of `path` is kept: a parse of its next version is incremental."""
        return path in self._trees

    def forget(self, path: Path) -> None:
        with self._lock:
            if (old := self._trees.pop(path, None)) is not None:
                self._bytes -= len(old.data)


PARSES = ParseCache()
