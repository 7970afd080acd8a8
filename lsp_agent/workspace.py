"""Workspace roots, path confinement, the open-document overlay and decoded texts.

Tools never open files themselves: they ask the workspace, which refuses anything outside
its roots (after resolving `..` and symlinks) and serves an editor's unsaved buffer in place
of the disk while the document is open.
"""

from __future__ import annotations

import errno
import os
import re
import stat
import threading
import time
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from urllib.parse import unquote, urlparse

from .errors import Refusal

try:  # hashlib's own blake2b, without hashlib's load of OpenSSL (a one-shot command's import)
    from _blake2 import blake2b
except ImportError:  # another Python than CPython
    from hashlib import blake2b

BINARY_SNIFF_BYTES = 8192
MAX_TEXT_BYTES = 256 * 1024 * 1024  # a text is held in memory whole, with its line index


def content_version(data: bytes) -> str:
    """A short content hash: equal texts have equal versions, whoever wrote them. Eight hex
    digits: versions are only compared for one file, where two differing texts share one
    with a chance of one in four billion."""
    return blake2b(data, digest_size=4).hexdigest()


# --- names as data ---------------------------------------------------------------------

# Characters a name may hold that would not read as themselves in an answer: controls (a
# newline forges an answer line, ESC drives a terminal, CR overwrites), format characters
# (bidirectional overrides reorder what is shown), lone surrogates (a byte that is not
# UTF-8, as os.fsdecode keeps it: no front door can encode it) and line separators.
UNSHOWN = frozenset(("Cc", "Cf", "Cs", "Zl", "Zp"))
SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
ESCAPE = re.compile(r"\\(?:x([0-9a-f]{2})|u([0-9a-f]{4})|([nrt]))")


def escape_name(name: str) -> str:
    """A file name as shown in an answer: each character that would not read as itself
    written as an escape (\\n, \\xff for a byte that is not UTF-8, \\u202e), the rest as is.
    The one escaping of every front door; `resolve` takes the escaped name back."""
    if name.isprintable():  # the usual case, decided in C
        return name
    return "".join(escape_char(c) if unicodedata.category(c) in UNSHOWN else c for c in name)


def escape_char(char: str) -> str:
    if char in SHORT_ESCAPES:
        return SHORT_ESCAPES[char]
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # os.fsdecode's stand-in for the byte code - 0xDC00
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def unescape_name(shown: str) -> str:
    """The name `escape_name` showed as `shown` (bytes as os.fsdecode decodes them)."""

    def one(match: re.Match) -> str:
        if match[1]:
            code = int(match[1], 16)
            return chr(code) if code < 0x80 else os.fsdecode(bytes([code]))
        if match[2]:
            return chr(int(match[2], 16))
        return {"n": "\n", "r": "\r", "t": "\t"}[match[3]]

    return ESCAPE.sub(one, shown)


LOCAL_HOSTS = ("", "localhost")


def is_local_file_uri(uri: str) -> bool:
    """A file:// URI of this machine: no host or localhost (`file://otherhost/a.py` names
    another machine's a.py, not ours)."""
    parsed = urlparse(uri)
    return parsed.scheme == "file" and parsed.netloc.lower() in LOCAL_HOSTS


def uri_to_path(uri: str) -> Path:
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        raise Refusal("bad_path", f"{escape_name(uri)!r} is not a file:// URI or a path.")
    if parsed.netloc.lower() not in LOCAL_HOSTS:
        raise Refusal(
            "bad_path", f"{escape_name(uri)} names a file on another host; only local files are served."
        )
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
    def from_bytes(cls, data: bytes, *, from_editor: bool = False) -> Text:
        try:
            content, utf8 = data.decode("utf-8"), True
        except UnicodeDecodeError:
            content, utf8 = data.decode("utf-8", errors="replace"), False
        return cls(content, content_version(data), len(data), utf8, from_editor)

    @classmethod
    def from_str(cls, content: str, *, from_editor: bool = True) -> Text:
        data = content.encode("utf-8", errors="surrogatepass")
        return cls(content, content_version(data), len(data), True, from_editor)

    # --- line index -------------------------------------------------------------------

    def _line_index(self) -> LineIndex:
        """The lines and their cumulative lengths, built once per text on first use."""
        if not self._index:
            with self._lock:
                if not self._index:
                    self._index.append(LineIndex(self.content))
        return self._index[0]

    @property
    def line_count(self) -> int:
        return self._line_index().count

    @property
    def eol(self) -> str:
        return self._line_index().eol

    @property
    def final_newline(self) -> bool:
        return not self.content or self.content.endswith("\n")

    def line(self, number: int) -> str:
        """Line `number` (1-based) without its terminator (and without "\\r" under CRLF)."""
        index = self._line_index()
        if not 1 <= number <= index.count:
            raise IndexError(number)
        return index.lines[number - 1]

    def lines(self, first: int, last: int) -> list[str]:
        """Lines first..last (1-based, inclusive)."""
        return self._line_index().lines[first - 1 : last]

    def line_length(self, number: int) -> int:
        return len(self._line_index().lines[number - 1])


class LineIndex:
    """Lines split once (in C), and where each starts in the content.

    Under uniform CRLF the lines are split on "\\r\\n", so they carry no CR; otherwise
    on "\\n" alone, and any CR stays in its line ("mixed" endings still reproduce exactly).
    """

    def __init__(self, content: str):
        self.lines = content.split("\n")
        self.eol = "\n"
        if "\r" in content:  # rare: only then pay for counting CRLFs
            crlf = content.count("\r\n")
            if crlf and crlf == len(self.lines) - 1:
                self.eol, self.lines = "\r\n", content.split("\r\n")
            elif crlf:
                self.eol = "mixed"
        if content.endswith("\n") or not content:
            self.lines.pop()  # the empty string after the final terminator is no line
        self.count = len(self.lines)
        self._starts: list[int] | None = None

    @property
    def starts(self) -> list[int]:
        """Offset of each line's first character (built on first use: search needs it,
        paging does not)."""
        if self._starts is None:
            step = len(self.eol) if self.eol == "\r\n" else 1
            self._starts = list(accumulate((len(line) + step for line in self.lines), initial=0))
        return self._starts


def plain_relative(rel: str) -> bool:
    """Whether a relative path has no empty, "." or ".." part (it is normalized as it is)."""
    parts = rel.split("/")
    return "" not in parts and "." not in parts and ".." not in parts


def holds(root: Path, text: str) -> bool:
    """Whether the path `text` is `root` or beneath it."""
    prefix = str(root)  # a Path keeps its string once made
    return text == prefix or text.startswith(prefix.rstrip(os.sep) + os.sep)


class Workspace:
    """Roots, confinement and the overlay of open documents."""

    def __init__(self, roots: Sequence[str | Path] | None = None, *, resolved: bool = False):
        """`resolved`: the roots are another Workspace's (a worker process's copy of the
        server's), taken as they are: resolving them again would follow a link swapped in
        since for a root inside another, and make its target a root."""
        self.roots: list[Path] = []
        self._overlay: dict[Path, Text] = {}
        self._in_editor: set[Path] = set()  # open in an editor, its buffer unsaved or not
        self._disk_cache: dict[Path, Cached] = {}
        self._cache_lock = threading.Lock()
        if resolved:
            self.roots = [Path(root) for root in roots or ()]
        else:
            self.set_roots(roots or [Path.cwd()])

    def set_roots(self, roots: Sequence[str | Path]) -> None:
        resolved = []
        for root in roots:
            path = uri_to_path(str(root)) if str(root).startswith("file:") else Path(root)
            path = path.expanduser().resolve()
            if not path.is_dir():
                raise ValueError(f"workspace root {str(path)!r} is not a directory")
            if path not in resolved:
                resolved.append(path)
        # One assignment: tools in worker threads read the roots while a folder change sets
        # them, and must never see a state between two (such as a root paired with the
        # string of another, which put a file under the wrong root).
        self.roots = resolved

    # --- confinement ------------------------------------------------------------------

    def root_of(self, path: Path) -> Path | None:
        """The first root holding `path`: the one it is shown relative to."""
        text = str(path)
        return next((root for root in self.roots if holds(root, text)), None)

    def confining_root(self, path: Path) -> Path | None:
        """The outermost root holding `path`: the one it is opened, listed and written
        beneath. A root inside another is reached through the outer one, one name at a
        time, never by its own path, which a link swapped in for it could lead out."""
        text = str(path)
        return min(
            (root for root in self.roots if holds(root, text)), key=lambda root: len(str(root)), default=None
        )

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
        candidate = str(uri_to_path(raw)) if raw.startswith("file:") else os.path.expanduser(raw)
        if not os.path.isabs(candidate):
            candidate = os.path.join(self.roots[0], candidate)
        if "\\" in candidate and not os.path.lexists(candidate):
            candidate = unescape_name(candidate)  # a name as an answer showed it (escape_name)
        try:
            try:  # (strict: one pass over the names where every one is there, the usual case)
                real, unresolved = Path(os.path.realpath(candidate, strict=True)), False
            except OSError:  # a name missing on the way, or a symlink loop
                real = Path(os.path.realpath(candidate, strict=False))
                # realpath stops resolving at a symlink loop and joins the rest as written, so
                # `loop/../link_out` would come back as `link_out`, a symlink still to follow: a
                # path is taken only once resolving it again changes nothing.
                unresolved = os.path.realpath(real, strict=False) != str(real)
        except (OSError, ValueError) as exc:
            raise Refusal("bad_path", f"{raw}: cannot be resolved ({exc}).") from None
        if unresolved:
            raise Refusal("bad_path", f"{raw[:200]}: cannot be resolved (a symlink loop on the way).")
        try:
            os.lstat(real)
        except OSError as exc:  # a missing file is the tool's to report; an impossible path is not
            if exc.errno in (errno.ENAMETOOLONG, errno.ELOOP):
                raise Refusal("bad_path", f"{raw[:200]}: {exc.strerror}.") from None
        if self.root_of(real) is None:
            lexical = Path(os.path.normpath(candidate))
            how = "through a symlink " if self.root_of(lexical) is not None else ""
            roots = ", ".join(str(r) for r in self.roots)
            raise Refusal(
                "outside_workspace",
                f"{raw} is {how}outside the workspace ({roots}); "
                "only paths inside the workspace roots can be read.",
            )
        return real

    def named_text(self, path: str | Path) -> tuple[Path, Text]:
        """`resolve(path)` and its text, read at once where the path is written plainly
        (absolute, or relative to the first root, with no `.`, `..`, doubled slash, `~` or
        escape) beneath a root: `text` opens it one name at a time and refuses any symlink
        on the way, so a path it opens is its own real path, and resolving it first
        (realpath's lstat of every name) would find the same. Any other path, or one a link
        on the way refuses, is resolved first; Refusal as `resolve` and `text` say."""
        written = str(path)
        plain = "\\" not in written and "\x00" not in written and not written.startswith(("~", "file:"))
        if plain and written.strip():
            written = written if os.path.isabs(written) else os.path.join(self.roots[0], written)
            if os.path.normpath(written) == written and self.confining_root(found := Path(written)):
                try:
                    return found, self.text(found)
                except (Refusal, ValueError):  # (a name the file system cannot encode)
                    pass  # a link on the way (resolved below), or a refusal it makes again
        real = self.resolve(path)
        return real, self.text(real)

    def display(self, path: Path) -> str:
        """The path as shown to an agent: relative to its root (prefixed by the root's
        name when the workspace has several roots)."""
        root = self.root_of(path)
        if root is None:
            return escape_name(str(path))
        text, prefix = str(path), str(root).rstrip(os.sep)
        rel = text[len(prefix) + 1 :] if len(text) > len(prefix) else "."
        if os.sep != "/" or not plain_relative(rel):  # (relpath's own way: 10 us a path, often)
            rel = os.path.relpath(path, root).replace(os.sep, "/")
        return escape_name(f"{root.name}/{rel}" if len(self.roots) > 1 else rel)

    # --- overlay ----------------------------------------------------------------------

    def open_document(self, path: str | Path, content: str) -> None:
        """Serve `content` for `path` until it is closed (an editor's buffer, opened or changed)."""
        key = self._key(path)
        self._overlay[key] = Text.from_str(content)
        self._in_editor.add(key)

    def hold_document(self, path: str | Path) -> None:
        """`path` is open in an editor but its buffer adds nothing to the disk (the same text,
        or one no longer known): the disk is served, and edits still must not go behind it."""
        key = self._key(path)
        self._overlay.pop(key, None)
        self._in_editor.add(key)

    def close_document(self, path: str | Path) -> None:
        key = self._key(path)
        self._overlay.pop(key, None)
        self._in_editor.discard(key)

    def in_editor(self, path: Path) -> bool:
        """Whether a resolved path is open in an editor (its buffer unsaved or not)."""
        return path in self._in_editor

    def open_documents(self) -> dict[Path, Text]:
        return dict(self._overlay)

    def open_text(self, path: Path) -> Text | None:
        """The editor's buffer of a resolved path, None when it is not open."""
        return self._overlay.get(path)

    def _key(self, path: str | Path) -> Path:
        raw = str(path)
        candidate = uri_to_path(raw) if raw.startswith("file:") else Path(raw)
        return Path(os.path.realpath(candidate))  # never raises, even for a symlink loop

    # --- reading ----------------------------------------------------------------------

    def text(self, path: Path) -> Text:
        """The text of a resolved path: the editor's buffer if open, else the disk.

        Refuses folders, missing files and binary files (NUL in the first 8 KiB).
        Disk texts are cached so repeated pages reuse the line index; see `Cached` for
        why a cached text is never served after the file changed. The file is opened by
        `open_beneath` and read through that descriptor only: a name swapped for a symlink
        after `resolve` checked it is refused, never followed.
        """
        if (open_text := self._overlay.get(path)) is not None:
            return open_text
        with self._cache_lock:
            known = self._disk_cache.get(path)
        if known is not None and not known.racy and self.confining_root(path) and same_version(path, known):
            return known.text  # (a root removed since: refused below, as any path outside)
        read_at = time.time_ns()  # before the stat: a write after it makes the entry racy
        fd = self.open_file(path)
        try:
            info = self._check_file(path, os.fstat(fd))
            identity = file_identity(info)
            with self._cache_lock:
                cached = self._disk_cache.get(path)
            if cached is not None and cached.identity == identity and not cached.racy:
                return cached.text
            text = self._read_text(path, fd)
        finally:
            os.close(fd)
        if cached is not None and cached.identity == identity and cached.text.version == text.version:
            text = cached.text  # verified by content: keep the text whose line index is built
        with self._cache_lock:
            self._disk_cache.pop(path, None)
            if len(self._disk_cache) >= DISK_CACHE_SIZE:
                self._disk_cache.pop(next(iter(self._disk_cache)))
            self._disk_cache[path] = Cached(identity, text, racy=is_racy(info, read_at))
        return text

    def data(self, path: Path) -> bytes:
        """The bytes of a resolved path on disk, read and refused as `text` reads and refuses
        them (beneath its root, a regular file within the limit, not binary), neither decoded
        nor kept: for a scan that reads many files once."""
        fd = self.open_file(path)
        try:
            self._check_file(path, os.fstat(fd))
            return self._read_data(path, fd)
        finally:
            os.close(fd)

    def open_file(self, path: Path) -> int:
        """A descriptor of the resolved `path`, opened beneath the outermost root holding it
        (see `open_beneath`, `confining_root`)."""
        root = self.confining_root(path)
        if root is None:
            raise Refusal("outside_workspace", f"{self.display(path)} is outside the workspace.")
        try:
            return open_beneath(root, path.relative_to(root))
        except FileNotFoundError:
            raise Refusal("not_found", f"{self.display(path)} does not exist.") from None
        except OSError as exc:
            raise opening_refusal(self.display(path), exc) from None

    def _check_file(self, path: Path, info: os.stat_result) -> os.stat_result:
        if stat.S_ISDIR(info.st_mode):
            raise Refusal("is_directory", f"{self.display(path)} is a directory; give a file path.")
        if not stat.S_ISREG(info.st_mode):
            raise Refusal(
                "not_a_file", f"{self.display(path)} is not a regular file (a device, socket or pipe)."
            )
        if info.st_size > MAX_TEXT_BYTES:
            raise Refusal(
                "too_large",
                f"{self.display(path)} has {info.st_size:,} bytes, over the {MAX_TEXT_BYTES:,}-byte limit for text; "
                "search it instead of reading it.",
            )
        return info

    def _read_text(self, path: Path, fd: int) -> Text:
        return Text.from_bytes(self._read_data(path, fd))

    def _read_data(self, path: Path, fd: int) -> bytes:
        try:
            data = read_all(fd, MAX_TEXT_BYTES)
        except OSError as exc:
            raise Refusal("unreadable", f"{self.display(path)}: {exc.strerror}.") from None
        if b"\x00" in data[:BINARY_SNIFF_BYTES]:
            raise Refusal(
                "binary",
                f"{self.display(path)} is a binary file ({len(data):,} bytes); it is not shown as text.",
            )
        return data


# --- confined opening ---------------------------------------------------------------------

FOLLOWS_NO_LINK = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# A folder on the way: only passed through (Linux's O_PATH needs no right to list it, as a path
# opened by name needs none), never through a link (O_DIRECTORY refuses one: ENOTDIR)
ON_THE_WAY = getattr(os, "O_PATH", os.O_RDONLY) | os.O_NOFOLLOW | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def open_beneath(root: Path, rel: str | Path) -> int:
    """A descriptor of `root/rel`, opened one name at a time from the root, each relative to
    the folder opened before it and none through a symlink (as openat(2) with O_NOFOLLOW).
    What a name is can change between a check and an open (a process in the workspace swaps
    a file for a link out); what is opened this way is inside the root whatever it became.
    The last name is opened non-blocking, so a FIFO is opened (to be refused by its stat)
    without waiting for a writer. Raises OSError: ELOOP or ENOTDIR for a link on the way."""
    with Beneath(root) as beneath:
        return beneath.open(os.fspath(rel))


class Beneath:
    """Many files beneath one root opened as `open_beneath` opens each (one name at a time
    from the root, none through a symlink), the folders on the way kept open from one file to
    the next: checking a tree's files in path order costs an open each, not one per name of
    its path. Only the folders above the last file stay open (a deep tree needs no more
    descriptors than its depth)."""

    def __init__(self, root: Path):
        self.root = root
        self.chain: list[tuple[str, int]] = []  # open folders, the root's first, each in the one before
        # the folder part of the last path whose folders the chain holds, as given
        self.last: str | None = None

    def __enter__(self) -> Beneath:
        return self

    def __exit__(self, *exc) -> None:
        self.close_from(0)

    def close_from(self, depth: int) -> None:
        if len(self.chain) > depth:
            self.last = None
        while len(self.chain) > depth:
            os.close(self.chain.pop()[1])

    def open(self, rel: str) -> int:
        """A descriptor of root/`rel` (a '/'-separated relative path), as open_beneath says;
        of the root itself when `rel` names no file."""
        found = self.folder_of(rel)
        if found is None:
            return os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        folder, name = found
        return os.open(name, FOLLOWS_NO_LINK | os.O_NONBLOCK, dir_fd=folder)

    def reaches(self, rel: str) -> bool:
        """Whether `open` would open root/`rel` (there, and its last name no link), told by a
        stat, without opening it. Raises OSError as `open` does for what is missing, or a link
        or a '..' on the way."""
        found = self.folder_of(rel)
        if found is None:
            return True
        folder, name = found
        return not stat.S_ISLNK(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode)

    def unreached(self, names: list[str], above: str) -> list[str]:
        """Those of `names` (absolute, in path order; `above`: the root's path and a slash)
        that `reaches` refuses or says no to: one stat each, the folders on the way kept open
        from one to the next."""
        refused = []
        for name in names:
            try:
                if not (name.startswith(above) and self.reaches(name[len(above) :])):
                    refused.append(name)
            except OSError:
                refused.append(name)
        return refused

    def folder_of(self, rel: str) -> tuple[int, str] | None:
        """The descriptor of the folder holding root/`rel`, opened beneath the root, and the
        last name of `rel`; None when `rel` names no file."""
        head, _, leaf = rel.rpartition("/")
        if head == self.last and leaf not in ("", ".", ".."):  # a file beside the last one
            return self.chain[-1][1], leaf
        self.last = None  # (until the chain holds this path's folders)
        parts = [p for p in rel.split("/") if p not in ("", ".")]
        if ".." in parts:
            self.close_from(0)  # none of the last path's folders kept past a refused one
            raise OSError(errno.EACCES, "a '..' in a confined path", rel)
        if not parts:
            return None
        *folders, name = parts
        if not self.chain:
            self.chain.append(
                ("", os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)))
            )
        depth = 1
        while (
            depth <= len(folders) and depth < len(self.chain) and self.chain[depth][0] == folders[depth - 1]
        ):
            depth += 1
        self.close_from(depth)
        for folder in folders[depth - 1 :]:
            self.chain.append((folder, os.open(folder, ON_THE_WAY, dir_fd=self.chain[-1][1])))
        if leaf == name:
            self.last = head
        return self.chain[-1][1], name


def opening_refusal(shown: str, exc: OSError) -> Refusal:
    """Why `open_beneath` could not open a path, as a refusal."""
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        return Refusal(
            "outside_workspace",
            f"{shown} is a symlink or has one on the way (it changed after it was checked); "
            "only files inside the workspace roots are read.",
        )
    return Refusal("unreadable", f"{shown}: {exc.strerror}.")


def read_all(fd: int, limit: int) -> bytes:
    """At most `limit` + 1 bytes from `fd`, to its end (the caller refuses more than limit)."""
    chunks, size = [], 0
    while size <= limit and (chunk := os.read(fd, min(1 << 20, limit + 1 - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


DISK_CACHE_SIZE = 64
# Within this long of a change, a file's timestamps cannot tell a second change from the
# first: file times come from a coarse clock (a few ms on Linux) and some file systems keep
# whole seconds (HFS+) or two (FAT). Generous, since it only costs a re-read of young files.
RACY_WINDOW_NS = 2_000_000_000


def file_identity(info: os.stat_result) -> tuple[int, ...]:
    """What tells one version of a file from another without reading it: a rewrite changes
    the size or mtime, and even one that keeps both (`touch -r`, a checkout within the
    same second) changes ctime, which no user can set; a replacement changes the inode."""
    return (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino, info.st_dev)


def same_version(path: Path, cached: Cached) -> bool:
    """Whether `path` still names the very file version `cached` was read from: one lstat,
    where opening it beneath its root takes one open a folder. Nothing is read through the
    path: the text served is the one read beneath the root, of this same inode and version
    (file_identity), so a folder swapped for a link since can show nothing from elsewhere;
    a link in the file's own place is another inode, and is refused by the open."""
    try:
        return file_identity(os.lstat(path)) == cached.identity
    except (OSError, ValueError):
        return False


def is_racy(info: os.stat_result, read_at: int) -> bool:
    """Git's "racily clean" entries: a file changed within the timestamps' granularity of
    being read may change again with identical timestamps, so its cached text is verified
    by content on each use until it is old enough to trust its stat."""
    return max(info.st_mtime_ns, info.st_ctime_ns) + RACY_WINDOW_NS > read_at


@dataclass(frozen=True)
class Cached:
    """A disk text and the stat identity it was read under. A racy entry (see `is_racy`)
    is re-read and compared by content on each use; a verified re-read once the window
    has passed stores it as clean."""

    identity: tuple[int, ...]
    text: Text
    racy: bool
