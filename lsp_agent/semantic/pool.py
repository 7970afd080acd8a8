"""The sessions of this process, one per (server command, root), shared by every caller;
a monitor thread stops the idle ones and restarts any above its memory ceiling."""

from __future__ import annotations

import atexit
import threading
import time
from pathlib import Path

from ..config import Settings
from .servers import Spec
from .session import Session

MONITOR_EVERY = 5.0  # seconds between the monitor's looks at idle time and memory
# Seconds between two looks at a server's memory after its answers: each reads /proc whole
# (where no children lists are kept), 1 ms with 80 processes and 10 with 800, on the answer's way.
CHECK_MEMORY_EVERY = 1.0


class Pool:
    def __init__(self) -> None:
        self.sessions: dict[tuple, Session] = {}
        self.limits: dict[tuple, tuple[float, int]] = {}  # key -> (idle seconds, memory MB)
        self.lock = threading.Lock()
        self.monitor: threading.Thread | None = None
        self.stopping = threading.Event()

    def session(self, spec: Spec, root: Path, settings: Settings) -> Session:
        key = (spec.command, root)
        with self.lock:
            session = self.sessions.get(key)
            if session is None:
                session = self.sessions[key] = Session(spec, root)
            self.limits[key] = (settings.semantic_idle, settings.semantic_memory_mb)
            if self.monitor is None:
                self.monitor = threading.Thread(target=self._watch, name="semantic-monitor", daemon=True)
                self.monitor.start()
        return session

    def state(self, spec: Spec, root: Path) -> str:
        session = self.sessions.get((spec.command, root))
        if session is None or not session.running:
            why = session.last_failure if session is not None else None
            return f"not running; last failure: {why}" if why else "starts on the first question"
        partial = session.partial()
        memory = session.memory_mb()
        held = f", {memory:,.0f} MB" if memory is not None else ""
        return f"running{held}" + (f"; {partial}" if partial else "")

    def check_memory(self, session: Session, settings: Settings) -> None:
        """After an answer: restart the server if it holds more than the ceiling (looked at
        once in CHECK_MEMORY_EVERY at most)."""
        now = time.monotonic()
        if now - session.memory_checked < CHECK_MEMORY_EVERY:
            return
        session.memory_checked = now
        memory = session.memory_mb()
        if memory is not None and memory > settings.semantic_memory_mb:
            session.restart(
                f"it held {memory:,.0f} MB, above semantic_memory_mb={settings.semantic_memory_mb:,}"
            )

    def _watch(self) -> None:
        while not self.stopping.wait(MONITOR_EVERY):
            self.sweep()

    def sweep(self) -> None:
        """Stop sessions idle past their limit; restart those above their memory ceiling."""
        now = time.monotonic()
        with self.lock:
            entries = [(s, self.limits[k]) for k, s in self.sessions.items()]
        for session, (idle, memory_mb) in entries:
            if not session.running:
                continue
            if now - session.last_used > idle:
                session.stop()
                continue
            memory = session.memory_mb()
            if memory is not None and memory > memory_mb:
                session.restart(f"it held {memory:,.0f} MB, above semantic_memory_mb={memory_mb:,}")

    def stop_all(self) -> None:
        with self.lock:
            sessions = list(self.sessions.values())
            self.sessions.clear()
            self.limits.clear()
        for session in sessions:
            session.stop()


POOL = Pool()
atexit.register(POOL.stop_all)
