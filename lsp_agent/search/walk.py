"""The one walker: the files ripgrep searches, as `rg --files` lists them with the same flags.

Search, the symbol index and outlines see the same set of files because ripgrep chooses it
for all of them: .gitignore, .ignore and .rgignore (each below its own folder), hidden files
and folders skipped, symlinks not followed, `--glob` overrides. The flags make the choice
reproducible: `--no-config` (no user config file), `--no-ignore-global` (no per-user
excludes), `--no-require-git` (a .gitignore counts outside git repositories too). A searched
folder keeps the rules of the folders above it, as when rg is run there: ripgrep reads them
itself (each kind of ignore file taking precedence as ripgrep orders them), up to the top of
a git repository for .gitignore. An ignore line ripgrep cannot parse is skipped by ripgrep,
silently (`--no-ignore-messages`).

Open editor buffers are not on disk as they are in the editor (or not at all), so ripgrep
decides for them on a mirror: a temporary tree holding only the ignore files of their
folders (and of the folders above the workspace) and an empty file per buffer, listed
with the same flags.
"""

from __future__ import annotations

import os
import stat
import sys
import sysconfig
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..ahead import WALK_FLAGS
from ..errors import Refusal
from ..workspace import open_beneath, read_all

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    import subprocess
    from typing import IO

# subprocess, tempfile and shutil are imported where used: a one-shot search whose rg was
# started ahead (head_start.py) needs none of them.

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")


# Where the `ripgrep` wheel puts rg: this interpreter's scripts folder, else beside it. Found
# once, at import: sysconfig fills its config dict lazily and without a lock, so a first call
# from two worker threads at once can fail with "dictionary changed size during iteration".
WHEEL_FOLDERS = (sysconfig.get_path("scripts"), os.path.dirname(sys.executable))


RG_NAME = "rg.exe" if os.name == "nt" else "rg"


def find_rg() -> str | None:
    """Our own rg: `$LSP_AGENT_RG` when it is an absolute path, else the one the `ripgrep`
    wheel installed next to this interpreter, else rg in an absolute folder of PATH. Never
    through an empty or relative PATH entry ("", "."): the server often runs in the
    workspace (VS Code starts it there), where anyone who can write a file can plant `./rg`."""
    configured = os.environ.get("LSP_AGENT_RG", "")
    if os.path.isabs(configured) and os.access(configured, os.X_OK):
        return configured
    for folder in WHEEL_FOLDERS:
        candidate = os.path.join(folder, RG_NAME)
        if os.path.isabs(candidate) and os.access(candidate, os.X_OK):
            return candidate
    path = os.pathsep.join(
        f for f in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(f)
    )
    import shutil

    return shutil.which(RG_NAME, path=path) if path else None


def require_rg() -> str:
    rg = find_rg()
    if rg is None:
        raise Refusal(
            "no_ripgrep",
            "ripgrep (rg) was not found next to this Python (the `ripgrep` wheel), at $LSP_AGENT_RG nor in "
            "an absolute folder of PATH; "
            "search and file listing need it: install the `ripgrep` package from PyPI or rg itself.",
        )
    return rg


def walk_args(rels: list[str], globs: tuple[str, ...] = ()) -> list[str]:
    """ripgrep's arguments choosing the files under root-relative `rels` ("" for the root):
    the flags, then "--" and the paths. Run rg with cwd=root."""
    return [
        *WALK_FLAGS,
        *(f"--glob={g}" for g in globs),
        "--",
        *("./" + rel if rel else "./" for rel in rels),
    ]


def list_files(
    root: Path,
    rels: list[str],
    globs: tuple[str, ...] = (),
    *,
    check: Callable[[], None] | None = None,
    keep: Callable[[Path], bool] | None = None,
) -> list[Path]:
    """The files ripgrep searches under root-relative `rels` (those `keep` accepts), as
    absolute paths, each folder's files before its subfolders, by name. `check` is called
    as names arrive (it raises to stop, e.g. Cancelled); rg is killed and reaped whatever
    happens."""
    return sorted(filter(keep, walk_files(root, rels, globs, check=check)), key=lambda p: walk_order(p, root))


def walk_files(
    root: Path,
    rels: list[str],
    globs: tuple[str, ...] = (),
    *,
    check: Callable[[], None] | None = None,
) -> Iterator[Path]:
    """list_files' files in the order ripgrep lists them (its threads race), each as soon
    as it is listed. Each folder is listed by an rg started in it through its verified
    descriptor (see `places`); a file given is listed as itself."""
    import subprocess
    import tempfile

    rg = require_rg()
    with places(root, rels) as opened:
        for place in opened:
            if not place.folder:
                yield place.base
                continue
            # with globs, what rg says goes to a file: a glob it cannot parse is refused, as search refuses it
            with tempfile.TemporaryFile() if globs else open(os.devnull, "wb") as errors:
                try:
                    proc = subprocess.Popen(
                        [rg, "--files", "--null", *walk_args([""], globs)],
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=errors,
                        **place.popen_args(),
                    )
                except OSError as exc:
                    raise Refusal(
                        "no_ripgrep", f"ripgrep ({rg}) could not be started to list files: {exc.strerror}."
                    ) from None
                yield from listed(proc, place.base, check)
                if globs and proc.returncode:
                    refuse_bad_glob(errors)


def refuse_bad_glob(errors: IO[bytes]) -> None:
    errors.seek(0)
    message = errors.read(4096).decode("utf-8", errors="replace").strip()
    if "error parsing glob" in message:
        raise Refusal("invalid_glob", f"ripgrep refused a glob (ripgrep glob syntax):\n{message}")


def listed(proc: subprocess.Popen, base: Path, check: Callable[[], None] | None) -> Iterator[Path]:
    """The names `rg --files --null` writes, under `base`; rg is killed and reaped at the end."""
    stdout = proc.stdout
    assert stdout is not None  # stdout=PIPE
    watcher = Watcher(proc)
    try:
        pending = b""
        while chunk := os.read(stdout.fileno(), 65536):
            if check is not None:
                check()
            *names, pending = (pending + chunk).split(b"\0")
            yield from [base / os.fsdecode(n).removeprefix("./") for n in names]
    finally:
        proc.kill()
        stdout.close()
        proc.wait()
        watcher.stop()


class Watcher:
    """A thread beside a running rg: kills it when `cancelled` says so (checked every 20 ms)
    and, every half second, frees it from a FIFO it waits to open (see free_from_fifos)."""

    def __init__(self, proc: subprocess.Popen, cancelled: Callable[[], bool] = lambda: False):
        self.proc, self.cancelled = proc, cancelled
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self) -> None:
        rounds = 0
        while not self.done.wait(0.02):
            if self.cancelled():
                self.proc.kill()
                return
            rounds += 1
            if rounds % 25 == 0:
                free_from_fifos(self.proc.pid)

    def stop(self) -> None:
        self.done.set()
        self.thread.join()


def free_from_fifos(pid: int) -> None:
    """ripgrep opens each folder's ignore files (.gitignore, …) itself, and opening a FIFO
    waits for a writer: a FIFO named .gitignore would stop it for good. A thread of rg's
    waiting so (its wchan is the kernel's `wait_for_partner`) is found in /proc, the path it
    opens read from its memory (openat's second argument; rg is our child), and the FIFO
    opened for writing and closed at once: rg's open returns and it reads an empty file."""
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return  # no /proc, or rg has ended
    for thread in threads:
        try:
            with open(f"/proc/{pid}/task/{thread}/wchan") as wchan:
                if wchan.read().strip() != "wait_for_partner":
                    continue
            with open(f"/proc/{pid}/task/{thread}/syscall") as syscall:
                address = int(syscall.read().split()[2], 16)
            with open(f"/proc/{pid}/mem", "rb") as memory:
                memory.seek(address)
                name = memory.read(4096).split(b"\0", 1)[0]
            fifo = os.path.join(os.readlink(f"/proc/{pid}/cwd"), os.fsdecode(name))
            if stat.S_ISFIFO(os.lstat(fifo).st_mode):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK | os.O_NOFOLLOW))
        except (OSError, ValueError, IndexError):
            continue  # gone meanwhile, or not readable: the next round tries again


# rg is started in a folder through the descriptor that verified it: the child's own copy of
# it, named through /proc (no name that a swap could redirect); elsewhere, by its path.
PROC_FD = "/proc/self/fd"
HAS_PROC_FD = os.path.isdir(PROC_FD)


@dataclass(frozen=True)
class Place:
    """A searched path opened beneath its root: a folder (rg runs in it) or a regular file
    (rg reads it from stdin). `base` is its path, which rg's names are relative to."""

    base: Path
    fd: int
    folder: bool

    def popen_args(self) -> dict:
        if not self.folder:
            return {"stdin": self.fd}
        cwd = f"{PROC_FD}/{self.fd}" if HAS_PROC_FD else str(self.base)
        return {"cwd": cwd, "pass_fds": (self.fd,)}


@contextmanager
def places(root: Path, rels: list[str]) -> Iterator[list[Place]]:
    """The root-relative `rels` opened beneath `root` without following a link (see
    open_beneath); those missing, special or reached through a link are left out. The
    descriptors are closed on leaving."""
    opened: list[Place] = []
    try:
        for rel in rels:
            try:
                fd = open_beneath(root, rel)
            except OSError:
                continue
            mode = os.fstat(fd).st_mode
            if stat.S_ISDIR(mode) or stat.S_ISREG(mode):
                opened.append(Place(root / rel if rel else root, fd, stat.S_ISDIR(mode)))
            else:
                os.close(fd)
        yield opened
    finally:
        for place in opened:
            os.close(place.fd)


def walk_order(path: Path, root: Path) -> str:
    """Sort key: a folder's files before its subfolders, each by name. One string per path,
    as the tuple of (0, file) and (1, folder) parts would compare: a folder's name after
    \x02 and ended by \x00 (which no name holds and every character follows), a file's
    after \x01 (so it comes before any folder beside it)."""
    here, above = str(path), str(root).rstrip("/") + "/"
    rel = here[len(above) :] if here.startswith(above) else path.relative_to(root).as_posix()
    *folders, name = rel.split("/")
    return "".join([f"\x02{folder}\x00" for folder in folders]) + "\x01" + name


def searched_buffers(root: Path, rels: list[str], globs: tuple[str, ...], buffers: list[Path]) -> set[Path]:
    """The open buffers (paths under `root`) that a search of `rels` would search, as ripgrep
    decides: listed from a mirror of their folders' ignore files and an empty file each."""
    under = [
        b
        for b in buffers
        if any(rel == "" or b == root / rel or b.is_relative_to(root / rel) for rel in rels)
    ]
    if not under:
        return set()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="lsp-agent-buffers-") as tmp:
        mirror = Path(tmp) / root.relative_to(root.anchor)  # the root at its own path, under tmp
        for folder in reversed(root.parents):  # the folders above the root: their rules apply too
            mirror_folder(folder, Path(tmp) / folder.relative_to(root.anchor))
        for buffer in under:
            rel = buffer.relative_to(root)
            for depth in range(len(rel.parts)):
                mirror_folder(root / Path(*rel.parts[:depth]), mirror / Path(*rel.parts[:depth]))
            (mirror / rel).touch()
        searched_rels = [r for r in rels if (mirror / r).exists()]
        listed = list_files(mirror, searched_rels, globs)
        return {root / p.relative_to(mirror) for p in listed} & set(under)  # not the copied ignore files


def mirror_folder(folder: Path, copy: Path) -> None:
    """The folder's ignore files (and its .git marker with info/exclude) in `copy`."""
    copy.mkdir(parents=True, exist_ok=True)
    for name in IGNORE_FILES:
        if not (copy / name).exists():
            copy_regular(folder / name, copy / name)
    git = folder / ".git"
    if git.is_dir():
        (copy / ".git" / "info").mkdir(parents=True, exist_ok=True)
        copy_regular(git / "info" / "exclude", copy / ".git" / "info" / "exclude")
    elif git.exists():
        (copy / ".git").touch()


MAX_IGNORE_FILE = 16 * 1024 * 1024


def copy_regular(source: Path, target: Path) -> None:
    """Copy `source` if it is a regular file (not a link, a FIFO or a device: opened without
    following a link and without waiting for a writer); at most MAX_IGNORE_FILE bytes."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            target.write_bytes(read_all(fd, MAX_IGNORE_FILE)[:MAX_IGNORE_FILE])
    finally:
        os.close(fd)
