"""rg started ahead of a one-shot command's imports (head_start.py), and taken over by the
search engine (RipgrepEngine.search) when it would start that very rg in that very folder;
those not taken are killed at the end (`discard`). Below every layer: only os and sys."""

from __future__ import annotations

import os
import sys


class Started:
    """An rg started ahead: its argv, the folder it runs in (its descriptor) and the
    in-memory files its output and its errors go to."""

    def __init__(self, argv: list[str], folder: int, out: int, errors: int, pid: int):
        self.argv, self.folder, self.out, self.errors, self.pid = argv, folder, out, errors, pid

    def close(self) -> None:
        for fd in (self.folder, self.out, self.errors):
            os.close(fd)


STARTED: list[Started] = []
# ripgrep's flags for walking a folder (walk.walk_args takes them from here: one list)
WALK_FLAGS = (
    "--no-config",
    "--no-ignore-global",
    "--no-require-git",
    "--no-ignore-messages",
    "--no-messages",
)


# ripgrep's plain output (search/plain.py): each match as LINE NUL COLUMN NUL TEXT under its
# file's path (NUL, which no text line holds, between the fields: rg itself reads the escape)
PLAIN_FLAGS = (
    "--only-matching",
    "--line-number",
    "--column",
    "--heading",
    "--null",
    "--field-match-separator=\\x00",
)


# ripgrep's flags for a search of a whole root: RipgrepEngine.match_args, then walk.walk_args.
# The engine compares the whole argv before it takes the rg over (tests/doors check it does).
def search_argv(
    rg: str, pattern: str, *, fixed_strings: bool = False, globs: list[str] | None = None
) -> list[str]:
    fixed = ["--fixed-strings"] if fixed_strings else []
    return [
        *[rg, "--no-config", "--no-mmap", *PLAIN_FLAGS, *fixed, "--regexp", pattern],
        *WALK_FLAGS,
        *[f"--glob={glob}" for glob in globs or []],
        *["--", "./"],
    ]


def search_ahead(
    pattern: str, root: str, *, fixed_strings: bool = False, globs: list[str] | None = None
) -> None:
    """Start rg for a search of `pattern` over all of `root`, in the folder's descriptor, its
    output in memory (no pipe to fill while the interpreter imports)."""
    rg = os.environ.get("LSP_AGENT_RG", "")
    if not os.path.isabs(rg):  # else walk.find_rg's next choice: the ripgrep wheel's, beside Python
        rg = os.path.join(os.path.dirname(sys.executable), "rg")
    if not hasattr(os, "memfd_create") or not os.path.isdir("/proc/self/fd") or not os.access(rg, os.X_OK):
        return
    argv = search_argv(rg, pattern, fixed_strings=fixed_strings, globs=globs)
    try:
        folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    out, errors = os.memfd_create("rg-out"), os.memfd_create("rg-errors")
    pid = os.fork()
    if pid == 0:  # the child: rg in the folder, stdin empty, its output to the memory files
        try:
            os.fchdir(folder)
            null = os.open(os.devnull, os.O_RDONLY)
            for fd, target in ((null, 0), (out, 1), (errors, 2)):
                os.dup2(fd, target)
            os.execv(rg, argv)
        finally:
            os._exit(127)
    STARTED.append(Started(argv, folder, out, errors, pid))


def take(argv: list[str], folder: int) -> Started | None:
    """The rg started ahead with this argv in this folder (the same directory as the
    descriptor `folder`), handed over once; None if there is none."""
    for started in STARTED:
        a, b = os.fstat(started.folder), os.fstat(folder)
        if started.argv == argv and (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino):
            STARTED.remove(started)
            return started
    return None


def discard() -> None:
    """Kill and reap the rgs started ahead that no search took (a refusal came first)."""
    while STARTED:
        started = STARTED.pop()
        try:
            os.kill(started.pid, 9)
            os.waitpid(started.pid, 0)
        except OSError:
            pass
        started.close()
