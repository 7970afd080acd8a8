"""Two lanes of worker threads, so a light call never waits behind a heavy one.

Light work (a read, an outline of one small file, decoding a reply, a query of the symbol
index) takes milliseconds; heavy work (a search, a folder outline, indexing) can take
seconds, and an agent may have dozens of them in flight. In one shared pool a read queued
behind 32 searches waited for all of them. Here each lane has its own threads and queue,
and heavy threads step aside at their checkpoints while light calls run: Python runs one
thread at a time, so without that a read would still share the interpreter with every
heavy thread at once. What may run long without checkpoints runs in a subprocess
(ripgrep), which a cancel kills.

A light call also hops between threads (the reader, the event loop, its worker, the loop
again), and at each hop waits for the GIL while another thread runs Python: up to the
switch interval, 5 ms by default. A process with lanes shortens it to SWITCH_INTERVAL,
which bounds those waits; long C calls (a regular expression over the index's names) come
in pieces shorter than that.

Stepping aside still leaves a heavy thread's Python sharing the interpreter between
checkpoints. The tools whose work is long pure Python over the files (IN_WORKERS: ranking
the whole workspace) run in worker processes instead, given the roots, the settings and the
open buffers; each worker keeps the index a server saved for the roots, whose records it
uses where they hold a file's current text.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures import TimeoutError as Pending
from pathlib import Path
from typing import Any, TypeVar

from .config import Settings
from .errors import Cancelled
from .tools import Context, run

T = TypeVar("T")

LIGHT_WORKERS = 4
HEAVY_WORKERS = 3
# A heavy thread steps aside at most this long per checkpoint, so a stream of light calls
# slows heavy work down but never stops it.
MAX_PAUSE = 0.05
SWITCH_INTERVAL = 0.001  # seconds a thread runs before another waiting for the GIL gets it
IN_WORKERS = frozenset({"overview"})
PROCESS_WORKERS = 1  # of 2 cores, one stays the server's; calls there remember the last ranking
POLL = 0.05  # seconds between two looks at a call's cancel while its worker runs it


class Lanes:
    def __init__(self, light_workers: int = LIGHT_WORKERS, heavy_workers: int = HEAVY_WORKERS):
        self.light = ThreadPoolExecutor(light_workers, thread_name_prefix="light")
        self.heavy = ThreadPoolExecutor(heavy_workers, thread_name_prefix="heavy")
        self._light_running = 0
        self._idle = threading.Condition()
        sys.setswitchinterval(SWITCH_INTERVAL)

    async def run(self, heavy: bool, fn: Callable[..., T], *args: Any) -> T:
        """fn(*args) in its lane's thread, awaited from the event loop. A light call counts
        as running from here until its answer is back on the loop: heavy threads step aside
        for the hops between threads too, not only while it runs."""
        loop = asyncio.get_running_loop()
        if heavy:
            return await loop.run_in_executor(self.heavy, fn, *args)
        with self._idle:
            self._light_running += 1
        try:
            return await loop.run_in_executor(self.light, fn, *args)
        finally:
            with self._idle:
                self._light_running -= 1
                if not self._light_running:
                    self._idle.notify_all()

    def step_aside(self) -> None:
        """A heavy thread's checkpoint: wait (up to MAX_PAUSE) while light calls run."""
        if self._light_running:
            with self._idle:
                self._idle.wait_for(lambda: not self._light_running, timeout=MAX_PAUSE)

    def shutdown(self) -> None:
        for pool in (self.light, self.heavy):
            pool.shutdown(wait=False, cancel_futures=True)
        PROCESSES.stop()


class ToolProcesses:
    """Worker processes (spawned on first use) that run IN_WORKERS tools."""

    def __init__(self, workers: int = PROCESS_WORKERS):
        self.workers = workers
        self.pool: ProcessPoolExecutor | None = None
        self.lock = threading.Lock()

    def run(self, ctx: Context, name: str, arguments: dict) -> dict:
        """The tool's answer from a worker; a cancel answers Cancelled at once and stops the
        workers (the others' calls fail over to this process)."""
        ws = ctx.workspace
        documents = {path: text.content for path, text in ws.open_documents().items()}
        pool = self._pool()
        try:
            encoding = ctx.index.encoding if ctx.index is not None else "utf-16"
            future = pool.submit(run_in_worker, ws.roots, documents, encoding, ctx.settings, name, arguments)
        except RuntimeError:  # stopped meanwhile (a cancel, the server shutting down)
            return run(ctx, name, arguments)
        while True:
            try:
                return future.result(timeout=POLL)
            except Pending:
                if ctx.cancel_event.is_set():
                    self.stop(pool)
                    raise Cancelled() from None
            except Exception:  # the worker died (stopped by another call's cancel, killed)
                return run(ctx, name, arguments)

    def _pool(self) -> ProcessPoolExecutor:
        with self.lock:
            if self.pool is None:
                import multiprocessing

                context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
                self.pool = ProcessPoolExecutor(self.workers, mp_context=context, initializer=_start_worker)
            return self.pool

    def stop(self, pool: ProcessPoolExecutor | None = None) -> None:
        """Stop the workers at once (a call that runs there is not waited for)."""
        with self.lock:
            pool = pool or self.pool
            if pool is None or pool is not self.pool:
                return
            self.pool = None
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()


PROCESSES = ToolProcesses()


def run_tool(ctx: Context, name: str, arguments: dict) -> dict:
    """tools.run, in a worker process for the IN_WORKERS tools."""
    if name in IN_WORKERS:
        return PROCESSES.run(ctx, name, arguments)
    return run(ctx, name, arguments)


def _start_worker() -> None:
    os.nice(5)  # the server's own requests (a read, documentSymbol while typing) come first
    # A worker inherits the server's stdin and stdout, which are the LSP connection: it must
    # neither read nor write them, nor keep them open after the server exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)


_SAVED: dict[tuple[Path, ...], tuple[float, Any]] = {}  # a worker's saved index per roots


def run_in_worker(roots: list[Path], documents: dict[Path, str], encoding: str, settings: Settings, name: str, arguments: dict) -> dict:  # fmt: skip
    """In a worker: the tool over a workspace of these roots and open buffers, with the
    index a server saved for them (loaded again when saved again)."""
    from .syntax import store
    from .syntax.index import saved_index
    from .workspace import Workspace

    if os.getppid() == 1:  # the server is gone: nobody wants this
        os._exit(0)
    ws = Workspace(roots)
    for path, content in documents.items():
        ws.open_document(path, content)
    try:
        saved = store.index_file(store.cache_folder(), ws.roots, encoding).stat().st_mtime
    except OSError:
        saved = 0.0
    if _SAVED.get(tuple(ws.roots), (None,))[0] != saved:
        _SAVED[tuple(ws.roots)] = (saved, saved_index(ws, encoding=encoding) if saved else None)
    index = _SAVED[tuple(ws.roots)][1]
    if index is not None:
        index.workspace = ws
    return run(Context(ws, settings, index=index), name, arguments)
