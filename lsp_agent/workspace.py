"""Workspace roots, path confinement, the open-document overlay and decoded texts.

Tools never open files themselves: they ask the workspace, which refuses anything outside
its roots (after resolving `..` and symlinks) and serves an editor's unsaved buffer in place
of the disk while the document is open.
"""

from __future__ import annotations

import hashlib
import os
import threading
from bisect import bisect_right
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse

from .errors import Refusal

BINARY_SNIFF_BYTES = 8192


def content_version(data: bytes) -> str:
    """A short content hash: equal texts have equal versions, whoever wrote them."""
    return hashlib.blake2b(data, digest_size=6).hexdigest()


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise Refusal("bad_path", f"{uri!r} is not a file:// URI or a path.")
    return Path(unquote(parsed.path))


@dataclass(frozen=True)
class Text:
    """One decoded version of a file, with a line index built on first use.

    Lines are split on "\\n" only. `eol` is "\\n", "\\r\\n" (every line ends in CRLF: the
    "\\r" is stripped from lines and reported once) or "mixed" (each "\\r" is kept in its
    line, so the text still reproduces exactly).
    """

    content: str
    version: str
    size: int  # bytes on disk (or encoded overlay)
    utf8: bool = True  # False: decoded with replacement characters
    from_editor: bool = False  # True: an open, possibly unsaved, editor buffer
    _index: list = field(default_factory=list, repr=False, compare=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def from_bytes(cls, data: bytes, *, from_editor: bool = False) -> "Text":
        try:
            content, utf8 = data.decode("utf-8"), True
        except UnicodeDecodeError:
            content, utf8 = data.decode("utf-8", errors="replace"), False
        return cls(content, content_version(data), len(data), utf8, from_editor)

    @classmethod
    def from_str(cls, content: str, *, from_editor: bool = True) -> "Text":
        data = content.encode("utf-8", errors="surrogatepass")
        return cls(content, content_version(data), len(data), True, from_editor)

    # --- line index -------------------------------------------------------------------

    def _line_index(self) -> tuple[list[int], int, str]:
        """(offsets of every line start, line count, eol). Built once per text."""
        if not self._index:
            with self._lock:
                if not self._index:
                    self._index.append(self._build_index())
        return self._index[0]

    def _build_index(self) -> tuple[list[int], int, str]:
        content = self.content
        starts = [0]
        find = content.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        newlines = len(starts) - 1
        count = newlines if content.endswith("\n") or not content else newlines + 1
        crlf = content.count("\r\n")
        if newlines == 0 or crlf == 0:
            eol = "\n"
        elif crlf == newlines:
            eol = "\r\n"
        else:
            eol = "mixed"
        if count == newlines + 1:  # no final newline: a sentinel one past the end
            starts.append(len(content) + 1)
        return starts, count, eol

    @property
    def line_count(self) -> int:
        return self._line_index()[1]

    @property
    def eol(self) -> str:
        return self._line_index()[2]

    @property
    def final_newline(self) -> bool:
        return not self.content or self.content.endswith("\n")

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its terminator (and without "\\r" under CRLF)."""
        starts, count, eol = self._line_index()
        if not 1 <= number <= count:
            raise IndexError(number)
        end = starts[number] - 1
        if eol == "\r\n" and (number < count or self.final_newline):
            end -= 1  # the CR of a CRLF terminator, reported once in the header
        return self.content[starts[number - 1] : end]

    def line_length(self, number: int) -> int:
        starts, count, eol = self._line_index()
        length = starts[number] - starts[number - 1] - 1
        if eol == "\r\n" and (number < count or self.final_newline):
            length -= 1
        return length

    def line_of_offset(self, offset: int) -> int:
        """1-based line holding character `offset`."""
        return bisect_right(self._line_index()[0], offset)


class Workspace:
    """Roots, confinement and the overlay of open documents."""

    def __init__(self, roots: list[str | Path] | None = None):
        self.roots: list[Path] = []
        self._overlay: dict[Path, Text] = {}
        self._disk_cache: dict[Path, tuple[tuple[int, int, int], Text]] = {}
        self.set_roots(roots or [Path.cwd()])

    def set_roots(self, roots: list[str | Path]) -> None:
        resolved = []
        for root in roots:
            path = uri_to_path(root) if str(root).startswith("file:") else Path(root)
            path = path.expanduser().resolve()
            if not path.is_dir():
                raise ValueError(f"workspace root {str(path)!r} is not a directory")
            if path not in resolved:
                resolved.append(path)
        self.roots = resolved

    # --- confinement ------------------------------------------------------------------

    def root_of(self, path: Path) -> Path | None:
        for root in self.roots:
            if path == root or path.is_relative_to(root):
                return root
        return None

    def resolve(self, path: str | Path) -> Path:
        """An absolute, symlink-free path inside a root, or a Refusal saying why not.

        Relative paths are taken from the first root. The check is made on the fully
        resolved path, so `..` and symlinks cannot leave the workspace.
        """
        raw = str(path)
        if not raw.strip():
            raise Refusal("bad_path", "The path is empty: give a path relative to the workspace root.")
        if "\x00" in raw:
            raise Refusal("bad_path", "The path contains a NUL character.")
        candidate = uri_to_path(raw) if raw.startswith("file:") else Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.roots[0] / candidate
        lexical = Path(os.path.normpath(candidate))
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as exc:  # symlink loops
            raise Refusal("bad_path", f"{raw}: cannot be resolved ({exc}).") from None
        if self.root_of(real) is None:
            how = "through a symlink " if self.root_of(lexical) is not None else ""
            roots = ", ".join(str(r) for r in self.roots)
            raise Refusal(
                "outside_workspace",
                f"{raw} is {how}outside the workspace ({roots}); "
                "only paths inside the workspace roots can be read.",
            )
        return real

    def display(self, path: Path) -> str:
        """The path as shown to an agent: relative to its root (prefixed by the root's
        name when the workspace has several roots)."""
        root = self.root_of(path)
        if root is None:
            return str(path)
        rel = path.relative_to(root).as_posix() or "."
        return f"{root.name}/{rel}" if len(self.roots) > 1 else rel

    # --- overlay ----------------------------------------------------------------------

    def open_document(self, path: str | Path, content: str) -> None:
        self._overlay[self._key(path)] = Text.from_str(content)

    def update_document(self, path: str | Path, content: str) -> None:
        self._overlay[self._key(path)] = Text.from_str(content)

    def close_document(self, path: str | Path) -> None:
        self._overlay.pop(self._key(path), None)

    def open_documents(self) -> dict[Path, Text]:
        return dict(self._overlay)

    def _key(self, path: str | Path) -> Path:
        raw = str(path)
        candidate = uri_to_path(raw) if raw.startswith("file:") else Path(raw)
        return candidate.resolve()

    # --- reading ----------------------------------------------------------------------

    def text(self, path: Path) -> Text:
        """The text of a resolved path: the editor's buffer if open, else the disk.

        Refuses folders, missing files and binary files (NUL in the first 8 KiB).
        Disk texts are cached by (mtime, size, inode) so repeated pages reuse the index.
        """
        if (open_text := self._overlay.get(path)) is not None:
            return open_text
        shown = self.display(path)
        try:
            stat = path.stat()
        except FileNotFoundError:
            raise Refusal("not_found", f"{shown} does not exist.") from None
        except OSError as exc:
            raise Refusal("unreadable", f"{shown}: {exc.strerror}.") from None
        if path.is_dir():
            raise Refusal("is_directory", f"{shown} is a directory; give a file path.")
        key = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        cached = self._disk_cache.get(path)
        if cached and cached[0] == key:
            return cached[1]
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise Refusal("unreadable", f"{shown}: {exc.strerror}.") from None
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise Refusal(
                "binary",
                f"{shown} is a binary file ({len(data):,} bytes); it is not shown as text.",
            )
        text = Text.from_bytes(data)
        if len(self._disk_cache) > 64:
            self._disk_cache.pop(next(iter(self._disk_cache)))
        self._disk_cache[path] = (key, text)
        return text
