"""The workspace symbol index behind workspace/symbol: every definition of every source
file, built in the background and kept current as documents and files change.

Positions are converted when a file is indexed, in the position encoding the client
negotiated, so a query only filters and sorts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from ..errors import Refusal
from ..workspace import Text, Workspace
from .files import source_files
from .languages import language_for
from .outline import Symbol, outline, walk

log = logging.getLogger(__name__)

# Larger files (bundles, generated code) are left out of the background index: a 9 MB
# bundle takes over a second and a quarter of a GB to parse. They still get outlines on demand.
INDEX_MAX_BYTES = 2 * 1024 * 1024

Range = tuple[int, int, int, int]  # 0-based line and column, start and end, in the client's encoding


def column(text: Text, row: int, byte_column: int, encoding: str) -> int:
    """A tree-sitter column (UTF-8 bytes into line `row`, 0-based) in `encoding`
    ("utf-8", "utf-16" or "utf-32", as LSP names them)."""
    if encoding == "utf-8" or byte_column == 0 or row >= text.line_count:
        return byte_column
    prefix = text.line(row + 1).encode("utf-8", "surrogatepass")[:byte_column].decode("utf-8", "replace")
    if encoding == "utf-32":
        return len(prefix)
    return len(prefix) + sum(1 for ch in prefix if ord(ch) > 0xFFFF)  # surrogate pairs in UTF-16


def convert(text: Text, points: tuple[int, int, int, int], encoding: str) -> Range:
    row, col, end_row, end_col = points
    return row, column(text, row, col, encoding), end_row, column(text, end_row, end_col, encoding)


@dataclass(frozen=True, slots=True)
class Entry:
    name: str
    kind: str
    container: str  # the name path of the parent ("" at the top level)
    range: Range
    selection: Range


def entries(text: Text, symbols: Iterable[Symbol], encoding: str) -> list[Entry]:
    out = []
    for symbol in walk(symbols):
        container = (
            symbol.name_path[: -len(symbol.name) - 1] if symbol.name_path.endswith("/" + symbol.name) else ""
        )
        out.append(
            Entry(symbol.name, symbol.kind, container, convert(text, symbol.range, encoding),
                  convert(text, symbol.selection, encoding))
        )  # fmt: skip
    return out


def rank(query: str, name: str) -> int | None:
    """How well `name` answers a workspace/symbol query (lower is better; None: not at all).
    Case-insensitive: exact, prefix, substring, then the query's letters in order."""
    if not query:
        return 3
    q, n = query.lower(), name.lower()
    if n == q:
        return 0
    if n.startswith(q):
        return 1
    if q in n:
        return 2
    position = 0
    for ch in q:
        position = n.find(ch, position) + 1
        if position == 0:
            return None
    return 3


class SymbolIndex:
    def __init__(self, workspace: Workspace, encoding: str = "utf-16"):
        self.workspace = workspace
        self.encoding = encoding
        self.files: dict[Path, list[Entry]] = {}
        self.ready = threading.Event()
        self._lock = threading.Lock()

    def build(self, report: Callable[[str, int | None], None] | None = None, cancelled=lambda: False) -> int:
        """Index every source file under the roots; returns the number of files."""
        paths = [p for root in self.workspace.roots for p in source_files(self.workspace, root)]
        with self._lock:  # files no longer under a root (a folder was removed) are dropped
            self.files = {p: e for p, e in self.files.items() if self.workspace.root_of(p) is not None}
        reported = -1
        for n, path in enumerate(paths, 1):
            if cancelled():
                break
            self.update(path)
            # once per percent: a report per file would flood the client on a large workspace
            if report is not None and (percent := n * 100 // len(paths)) != reported:
                reported = percent
                report(f"indexing {n:,} of {len(paths):,} files", percent)
        self.ready.set()
        return len(paths)

    def update(self, path: Path) -> None:
        """(Re-)index one file from the workspace's current text (the editor's buffer when
        open); forget it when it is gone, unreadable or not source."""
        if language_for(path) is None or self.workspace.root_of(path) is None:
            return
        try:
            text = self.workspace.text(path)
        except Refusal:
            self.remove(path)
            return
        if text.size > INDEX_MAX_BYTES:
            self.remove(path)
            return
        try:
            found = entries(text, outline(path, text), self.encoding)
        except Exception:  # one file the parser or a query chokes on must not stop the index
            log.exception("symbol index: cannot outline %s", path)
            self.remove(path)
            return
        with self._lock:
            self.files[path] = found

    def remove(self, path: Path) -> None:
        with self._lock:
            self.files.pop(path, None)

    def query(self, query: str, limit: int = 500) -> list[tuple[Path, Entry]]:
        with self._lock:
            files = list(self.files.items())
        hits = []
        for path, found in files:
            for entry in found:
                score = rank(query, entry.name)
                if score is not None:
                    hits.append((score, len(entry.name), str(path), entry.range, path, entry))
        hits.sort(key=lambda h: h[:4])
        return [(h[4], h[5]) for h in hits[:limit]]
