"""`lsp-agent` and `python -m lsp_agent`: a head start for the commonest one-shot commands
(head_start.py), before the CLI's own imports, then the CLI."""

import errno
import os
import sys

from . import ahead, head_start


def inspect_on_first_use() -> None:
    """Put off importing `inspect` until one of its names is used. dataclasses imports it (and
    with it ast, dis and tokenize: about 5 ms of a one-shot command's start) only to write a
    signature as the docstring of a class with none, and each dataclass of ours has one."""
    if "inspect" in sys.modules:
        return
    import _thread

    stand_in, lock = type(sys)("inspect"), _thread.RLock()  # a signal handler may come in again

    def name(attribute: str):
        with lock:  # only the stand-in's removal: the import itself is importlib's to serialise
            if sys.modules.get("inspect") is stand_in:
                del sys.modules["inspect"]
        import inspect  # the module itself, from now on for every importer

        return getattr(inspect, attribute)

    stand_in.__getattr__ = name  # type: ignore[method-assign]
    sys.modules["inspect"] = stand_in


inspect_on_first_use()

# What writing a command's output meets on a full or failing disk (a write of stdout's)
UNWRITABLE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO)
ANSWERED_EARLY = False  # the head start answered (no parser, no worker, no thread left running)


def main() -> int:
    global ANSWERED_EARLY
    try:
        answered = head_start.start(sys.argv[1:])
        if answered is None:
            answered = head_start.answer_alone(sys.argv[1:])
        if answered is not None:
            ANSWERED_EARLY = True
            return answered
        from .cli import main as cli_main

        return cli_main()
    except (KeyboardInterrupt, BrokenPipeError) as exc:  # outside the CLI's handlers: the head start's
        command = head_start.command_of(sys.argv[1:])
        return head_start.ended_by(exc, "lsp-agent" + (f" {command[0]}" if command else ""))
    except OSError as exc:
        if exc.errno not in UNWRITABLE:
            raise
        return head_start.unwritten(exc)  # a command's output on a full disk
    finally:
        ahead.discard()


def command() -> None:
    """The console script's entry (and `python -m lsp_agent`'s): main; after an answer the
    head start gave, the process ends as soon as its output is written. Its rg is reaped and
    it started nothing else, so the interpreter's teardown (freeing every module and object:
    ~12 ms of a one-shot search's 100) would free nothing the system does not."""
    code = main()
    if not ANSWERED_EARLY:
        raise SystemExit(code)
    try:
        sys.stdout.flush()  # the answer was flushed once written (head_start.printed): rarely more
    except BrokenPipeError as exc:  # the reader went away before the last of the answer
        code = head_start.ended_by(exc)
    except OSError as exc:
        code = head_start.unwritten(exc)
    try:
        sys.stderr.flush()
    except OSError:
        pass
    os._exit(code)


if __name__ == "__main__":  # not when a worker process imports it (multiprocessing's spawn)
    command()
