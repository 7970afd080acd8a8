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
"""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")

LIGHT_WORKERS = 4
HEAVY_WORKERS = 3
# A heavy thread steps aside at most this long per checkpoint, so a stream of light calls
# slows heavy work down but never stops it.
MAX_PAUSE = 0.05
SWITCH_INTERVAL = 0.001  # seconds a thread runs before another waiting for the GIL gets it


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
