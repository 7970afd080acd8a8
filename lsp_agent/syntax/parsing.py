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

TREE_CACHE_SIZE = 48  # trees (with their bytes) kept for incremental re-parses and reuse
MAX_PARSE_BYTES = 32 * 1024 * 1024  # larger texts get no symbols (a parse would take seconds)


@dataclass(frozen=True)
class Parsed:
    language: str
    version: str
    data: bytes  # the UTF-8 bytes the tree was parsed from: node offsets index into them
    tree: object  # tree_sitter.Tree


def encode(text: Text) -> bytes:
    return text.content.encode("utf-8", "surrogatepass")


def common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix, in C speed: the XOR of the two as big integers
    has its highest set bit in the first byte that differs."""
    n = min(len(a), len(b))
    x = int.from_bytes(a[:n], "big") ^ int.from_bytes(b[:n], "big")
    return n if x == 0 else n - 1 - (x.bit_length() - 1) // 8


def common_suffix(a: bytes, b: bytes, limit: int) -> int:
    """Length of the longest common suffix, at most `limit` bytes."""
    if limit <= 0:
        return 0
    x = int.from_bytes(a[len(a) - limit :], "little") ^ int.from_bytes(b[len(b) - limit :], "little")
    return limit if x == 0 else limit - 1 - (x.bit_length() - 1) // 8


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
    return dict(
        start_byte=start,
        old_end_byte=old_end,
        new_end_byte=new_end,
        start_point=point_at(new, start),
        old_end_point=point_at(old, old_end),
        new_end_point=point_at(new, new_end),
    )


class ParseCache:
    """The latest tree of each recently parsed path (LRU), and per-thread parsers
    (a tree_sitter.Parser must not be shared between threads)."""

    def __init__(self, size: int = TREE_CACHE_SIZE):
        self.size = size
        self._trees: OrderedDict[Path, Parsed] = OrderedDict()
        self._lock = threading.Lock()
        self._local = threading.local()
        self.counts = {"cold": 0, "incremental": 0, "cached": 0}

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
        if previous is not None and previous.language == language:
            old_tree = previous.tree.copy()  # other threads may still be reading the cached tree
            old_tree.edit(**input_edit(previous.data, data))
            tree = parser.parse(data, old_tree)
            kind = "incremental"
        else:
            tree = parser.parse(data)
            kind = "cold"
        parsed = Parsed(language, text.version, data, tree)
        with self._lock:
            self.counts[kind] += 1
            self._trees[path] = parsed
            self._trees.move_to_end(path)
            while len(self._trees) > self.size:
                self._trees.popitem(last=False)
        return parsed

    def forget(self, path: Path) -> None:
        with self._lock:
            self._trees.pop(path, None)


PARSES = ParseCache()
