"""Writing a file inside the workspace: atomically, beneath its root, guarded by a version.

The folder that will hold the file is opened one name at a time from the root, none through
a symlink, and everything after happens relative to that descriptor: a name swapped for a
link between the check and the write is refused, never followed. The new bytes go to a
temporary file in that folder, flushed, given the old file's mode, then renamed over the old
name, so a reader (or a crash, a kill, a full disk) sees the old file or the new one, never a
part. The version the caller edited is compared with the file's bytes under an exclusive
lock of the folder, which every lsp-agent process takes before it renames: of two clients
editing one version, one writes and the other is told the file changed.
"""

from __future__ import annotations

import errno
import fcntl
import os
import secrets
import stat
import threading
from collections import OrderedDict
from pathlib import Path

from .errors import Refusal
from .workspace import BINARY_SNIFF_BYTES, MAX_TEXT_BYTES, ON_THE_WAY, Text, content_version

DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
TEMPORARY_PREFIX = ".lsp-agent-"  # ".lsp-agent-<random>.<name>.tmp", in the file's own folder
NEW_FILE_MODE = 0o666  # before the umask, as an editor creates files


def open_folder(root: Path, folder: Path, *, create: bool = False) -> int:
    """A descriptor of `folder` (inside `root`), opened from the root one name at a time
    without following links; with `create`, missing folders are made on the way."""
    parts = [p for p in folder.relative_to(root).parts if p not in ("", ".")]
    if ".." in parts:
        raise Refusal("outside_workspace", f"{folder}: a '..' in a confined path.")
    fd = os.open(root, DIRECTORY)
    try:
        for n, part in enumerate(parts, 1):
            how = DIRECTORY if n == len(parts) else ON_THE_WAY  # the file's own folder is written in
            try:
                opened = os.open(part, how, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                os.mkdir(part, 0o777, dir_fd=fd)
                opened = os.open(part, how, dir_fd=fd)
            except NotADirectoryError:  # a file on the way, or a link (ELOOP is not certain)
                if stat.S_ISLNK(os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode):
                    raise OSError(errno.ELOOP, "a symlink on the way") from None
                raise
            os.close(fd)
            fd = opened
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_beneath(folder_fd: int, name: str) -> bytes | None:
    """The bytes of `name` in the folder, None when there is none; a link is refused."""
    try:
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0), dir_fd=folder_fd
        )
    except FileNotFoundError:
        return None
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise OSError(errno.EISDIR, "a folder")
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file")
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            size += len(chunk)
            if size > MAX_TEXT_BYTES:
                raise OSError(errno.EFBIG, "too large to edit")
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


# One lock per folder in this process (flock serialises processes, not threads that share
# an open file description's owner: each thread takes the process lock first).
_LOCKS: dict[tuple[int, int], threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _thread_lock(info: os.stat_result) -> threading.Lock:
    with _LOCKS_GUARD:
        return _LOCKS.setdefault((info.st_dev, info.st_ino), threading.Lock())


def write_file(
    root: Path, path: Path, data: bytes, *, expected: str | None, shown: str, create: bool = False
) -> None:
    """Replace `path` (inside `root`) by `data`, atomically, if its bytes still have the
    version `expected` (None: the file must not exist). Refuses, saying what happened, when
    the file changed, vanished, appeared, became a link, or the disk cannot take it; the file
    is then exactly as it was."""
    try:
        folder = open_folder(root, path.parent, create=create)
    except Refusal:
        raise
    except OSError as exc:
        raise write_refusal(shown, exc, "its folder") from None
    try:
        info = os.fstat(folder)
        with _thread_lock(info):
            fcntl.flock(folder, fcntl.LOCK_EX)  # against other lsp-agent processes
            try:
                mode = check_current(folder, path.name, expected, shown)
                replace(folder, path.name, data, mode, shown)
            finally:
                fcntl.flock(folder, fcntl.LOCK_UN)
    finally:
        os.close(folder)


def check_current(folder: int, name: str, expected: str | None, shown: str) -> int:
    """The mode to give the new file, once the file is as the caller saw it."""
    try:
        current = read_beneath(folder, name)
        info = os.stat(name, dir_fd=folder, follow_symlinks=False) if current is not None else None
    except OSError as exc:
        raise write_refusal(shown, exc, "the file") from None
    if expected is None:
        if current is not None:
            raise Refusal("exists", f"{shown} was created by someone else meanwhile; nothing was written.")
        return NEW_FILE_MODE & ~current_umask()
    if current is None:
        raise Refusal(
            "vanished", f"{shown} no longer exists (deleted or moved since it was read); nothing was written."
        )
    if content_version(current) != expected:
        raise Refusal(
            "stale",
            f"{shown} changed on disk while the edit was being made (now version {content_version(current)}); "
            "nothing was written: read it again and redo the edit.",
            current_version=content_version(current),
        )
    assert info is not None
    return stat.S_IMODE(info.st_mode)


def replace(folder: int, name: str, data: bytes, mode: int, shown: str) -> None:
    """Write a temporary file beside `name`, flush it, then rename it over `name`."""
    temporary = f"{TEMPORARY_PREFIX}{secrets.token_hex(4)}.{name[:100]}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(temporary, flags, 0o600, dir_fd=folder)
    except OSError as exc:
        raise write_refusal(shown, exc, "a temporary file beside it") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fchmod(fd, mode)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as exc:
        try:
            os.unlink(temporary, dir_fd=folder)
        except OSError:
            pass
        raise write_refusal(shown, exc, "the new text") from None
    try:
        os.fsync(folder)  # the rename itself survives a power cut
    except OSError:
        pass


def write_refusal(shown: str, exc: OSError, what: str) -> Refusal:
    """A refusal saying why writing failed, and that the file was left as it was."""
    unchanged = "the file is unchanged"
    if exc.errno == errno.ENOTDIR:
        return Refusal(
            "not_a_folder", f"{shown}: a part of its path is a file, not a folder; nothing was written."
        )
    if exc.errno in (errno.ELOOP, errno.EMLINK):
        return Refusal(
            "outside_workspace",
            f"{shown}: a symlink is on the way (it changed after the path was checked); nothing was written.",
        )
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return Refusal("disk_full", f"{shown}: the disk is full (writing {what}); {unchanged}.")
    if exc.errno == errno.EROFS:
        return Refusal("read_only", f"{shown}: the file system is read-only; {unchanged}.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return Refusal("permission_denied", f"{shown}: permission denied (writing {what}); {unchanged}.")
    if exc.errno == errno.EISDIR:
        return Refusal("is_directory", f"{shown} is a folder now; nothing was written.")
    if exc.errno == errno.ENOENT:
        return Refusal("vanished", f"{shown}: its folder no longer exists; nothing was written.")
    return Refusal("write_failed", f"{shown}: {exc.strerror or exc} (writing {what}); {unchanged}.")


def current_umask() -> int:
    """The process's umask, read without changing it where /proc tells it."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def decodable(data: bytes) -> bool:
    """Text an edit can keep exactly: UTF-8 with no NUL in its first 8 KiB."""
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class History:
    """The texts recently served or written, by path and version (a bounded memory): a
    stale line-range edit is answered with the lines changed since the version it names."""

    def __init__(self, max_chars: int = 64 * 1024 * 1024, per_path: int = 8):
        self.max_chars = max_chars
        self.per_path = per_path
        self._texts: OrderedDict[tuple[Path, str], str] = OrderedDict()  # oldest first
        self._versions: dict[Path, list[str]] = {}  # each path's versions, oldest first
        self._chars = 0
        self._lock = threading.Lock()

    def remember(self, path: Path, text: Text) -> None:
        key = (path, text.version)
        with self._lock:
            if key in self._texts:
                self._texts.move_to_end(key)
                return
            if len(text.content) > self.max_chars // 4:
                return
            self._texts[key] = text.content
            self._chars += len(text.content)
            versions = self._versions.setdefault(path, [])
            versions.append(text.version)
            if len(versions) > self.per_path:
                self._forget((path, versions[0]))
            while self._chars > self.max_chars:
                self._forget(next(iter(self._texts)))

    def _forget(self, key: tuple[Path, str]) -> None:
        self._chars -= len(self._texts.pop(key))
        versions = self._versions[key[0]]
        versions.remove(key[1])
        if not versions:
            del self._versions[key[0]]

    def recall(self, path: Path, version: str) -> str | None:
        with self._lock:
            return self._texts.get((path, version))


HISTORY = History()
