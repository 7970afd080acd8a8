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
checkpoints. The tools whose work is long pure Python over the files (IN_WORKERS: ranking,
matching and classifying uses, the Python part of a search, outlines of folders) run in
worker processes instead, given the roots, the settings and the open buffers (those changed
since the worker last saw them: each keeps what it was sent); each worker
keeps the index a server saved for the roots, whose records it uses where they hold a
file's current text. The semantic source stays here: a language server's session belongs to
the serving process (its open buffers, one session per language and root), so a tool in a
worker asks it over the pipe (RemoteSemantic) and the answer is the one it gives in-process.
The questions a call is known to ask first (Tool.asks_first: references from a use) are asked
here as the call is handed over, so the server works while the worker starts; a call that is
mostly a quick server's answer stays here (Tool.stays), where a worker's hops would be a third
of it.
A cancel tells the worker's tool to stop at its next checkpoint (the worker is killed if it
has not within GRACE); a worker that dies fails its call with an answer saying so, and the
next call starts another.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import logging
import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from weakref import WeakKeyDictionary

from .config import Settings
from .errors import ArgumentError, Cancelled, Refusal
from .tools import REGISTRY, Context, internal_error, is_light, run

if TYPE_CHECKING:
    from multiprocessing.connection import Connection

    from .syntax.index import SymbolIndex
    from .syntax.records import FileRecord
    from .workspace import Text, Workspace

log = logging.getLogger(__name__)

T = TypeVar("T")

LIGHT_WORKERS = 4
HEAVY_WORKERS = 3
# A heavy thread steps aside at most this long per checkpoint, so a stream of light calls
# slows heavy work down but never stops it.
MAX_PAUSE = 0.05
SWITCH_INTERVAL = 0.001  # seconds a thread runs before another waiting for the GIL gets it
# Heavy calls of these tools run in a worker process (their light ones, on one small file, here).
IN_WORKERS = frozenset(
    {"overview", "references", "search", "symbols", "find_symbol", "definition", "list_files"}
    | {"implementations", "callers", "callees"}
)
# ...except while the server's index is built: then these answer from it in milliseconds.
FROM_THE_INDEX = frozenset({"find_symbol", "definition"})
PROCESS_WORKERS = 1  # of 2 cores, one stays the server's; calls there remember the last ranking
POLL = 0.05  # seconds between two looks at a call's cancel while its worker runs it
GRACE = 2.0  # seconds a cancelled call's worker has to stop before it is killed
# What a tool in a worker may ask the serving process's semantic source (Semantic's methods).
SEMANTIC_METHODS = frozenset({"locations", "calls", "unserved", "cold"})


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
            self._light_done()

    def submit(self, heavy: bool, fn: Callable[..., T], *args: Any) -> Future[T]:
        """fn(*args) in its lane's thread, from any thread, for a call whose thread answers
        it itself (server.py): a light one counts as running until fn returns."""
        if heavy:
            return self.heavy.submit(fn, *args)
        with self._idle:
            self._light_running += 1
        try:
            future = self.light.submit(fn, *args)
        except BaseException:
            self._light_done()
            raise
        future.add_done_callback(self._light_done)
        return future

    def _light_done(self, _future: Future | None = None) -> None:
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
        RECORDS.stop()


class WorkerDied(Exception):
    """The worker process running a call exited before it answered."""


class Worker:
    """One worker process and the serving end of its pipe."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")  # never fork a process that runs threads
        self.conn, child = context.Pipe()
        self.process = context.Process(
            target=worker_main, args=(child,), name="lsp-agent worker", daemon=True
        )
        self.process.start()
        child.close()
        self.lock = threading.Lock()  # sends come from the call's thread and semantic threads
        # The open buffers it holds, per workspace: the texts last sent (buffers_for)
        self.seen: WeakKeyDictionary[Workspace, dict[Path, Text]] = WeakKeyDictionary()

    def buffers_for(self, ws: Workspace) -> tuple[int, dict[Path, str], list[Path]]:
        """(the workspace's number, the buffers opened or changed since the worker last saw
        them, the paths closed since): a call sends these, not every open buffer again. A
        change makes a new Text: the one sent is the one the worker holds when it is the same
        object."""
        documents = ws.open_documents()
        seen = self.seen.get(ws, {})
        changed = {path: text.content for path, text in documents.items() if seen.get(path) is not text}
        closed = [path for path in seen if path not in documents]
        self.seen[ws] = documents
        return workspace_number(ws), changed, closed

    def send(self, *message: Any) -> None:
        try:
            with self.lock:
                self.conn.send(message)
        except (OSError, EOFError):  # it died: the call's thread sees that at its next receive
            pass

    def receive(self, timeout: float) -> tuple | None:
        """The worker's next message, None if none came within `timeout`; raises WorkerDied."""
        try:
            return self.conn.recv() if self.conn.poll(timeout) else None
        except (EOFError, OSError):
            raise WorkerDied(self.how()) from None

    def how(self) -> str:
        self.process.join(5.0)  # its pipe closed as it exited: reaped at once but on a loaded machine
        code = self.process.exitcode
        if code is None:
            return "its pipe closed"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def serve(self, ctx: Context, stop: threading.Event, early: list[Early]) -> tuple:
        """Relay a call's progress and semantic questions until its answer, or until the call
        is cancelled here: ("stopping",). `stop` stops the questions asked here for it; those
        in `early` were asked before the worker asked them (asked_early)."""
        sources: dict[int, Any] = {}
        while True:
            message = self.receive(POLL)
            if message is None:
                if ctx.cancel_event.is_set():
                    self.send("cancel")
                    return ("stopping",)
            elif message[0] == "progress":
                if ctx.report is not None:
                    ctx.report(message[1], message[2])
            elif message[0] == "semantic":
                _, asked, source, settings, method, args = message
                taken = next((e for e in early if e.question == (settings, method, args)), None)
                for other in [e for e in early if e.question[1] == method]:
                    early.remove(other)  # taken (a second alike is asked anew), or not to be asked
                    if other is not taken:
                        other.cancel.set()
                question = (asked, source, settings, method, args)
                SEMANTIC.submit(self.answer_semantic, ctx, stop, sources, taken, *question)
            else:
                return message

    def answer_semantic(self, ctx: Context, stop: threading.Event, sources: dict, taken: Early | None, asked: int, source: int, settings: Settings, method: str, args: tuple) -> None:  # fmt: skip
        """A semantic question from the worker's tool, asked here (or `taken`, asked early)
        and answered over the pipe; stopped (the request cancelled at the language server)
        when the call ends."""
        from .semantic import Semantic, Unavailable

        if source not in sources and taken is None:
            report = partial_send(self, "report", source)
            sources[source] = Semantic(ctx.workspace, settings, stop, report, editor=ctx.semantic_editor)
        try:
            if method not in SEMANTIC_METHODS:
                raise Unavailable(f"{method} is not asked from a worker")
            answer = taken.answer.result() if taken else getattr(sources[source], method)(*args)
            reply: tuple = ("ok", answer)
        except Exception as exc:  # Unavailable, Missing, RequestCancelled: the tool handles them
            reply = ("raise", exc if crosses(exc) else Unavailable(f"{type(exc).__name__}: {exc}"))
        try:
            self.send("reply", asked, reply)  # pickled whole before a byte is written
        except Exception as exc:  # an answer that cannot cross (it never should): as a fault
            self.send(
                "reply",
                asked,
                ("raise", Unavailable(f"the answer could not be passed on ({type(exc).__name__})")),
            )

    def kill(self) -> None:
        self.process.kill()
        self.conn.close()


_NUMBERS: WeakKeyDictionary[Workspace, int] = WeakKeyDictionary()
_NEXT_NUMBER = itertools.count(1)
_NUMBERS_LOCK = threading.Lock()


def workspace_number(ws: Workspace) -> int:
    """A number of this workspace, never another's in this process (a worker keeps each
    workspace's buffers under it)."""
    with _NUMBERS_LOCK:
        if ws not in _NUMBERS:
            _NUMBERS[ws] = next(_NEXT_NUMBER)
        return _NUMBERS[ws]


def partial_send(worker: Worker, *head: Any) -> Callable[[str], None]:
    return lambda message: worker.send(*head, message)


# The serving process's threads that answer semantic questions from tools in workers.
SEMANTIC = ThreadPoolExecutor(max_workers=4, thread_name_prefix="worker-semantic")


@dataclass
class Early:
    """A semantic question asked before its worker asked it, and its answer to come."""

    question: tuple[Settings, str, tuple]
    answer: Future
    cancel: threading.Event  # set once the call ends, or its worker asked that method elsewhere


def asked_early(ctx: Context, name: str, arguments: dict) -> list[Early]:
    """The questions the call's tool will ask first (Tool.asks_first), asked here now, of a
    running server that has answered before: the worker's start and its tool's first steps
    (about 1.5 ms) pass while the server works. Those it could not find or ask are left to
    the tool, which meets the fault itself and says so. (Asked before the worker's own
    question is: the pool runs them first, so a wait for one never holds a thread it needs.)"""
    from .semantic import Semantic

    asks = REGISTRY[name].asks_first
    early: list[Early] = []
    try:
        for settings, method, args in asks(ctx, arguments) if asks is not None else []:
            cancel = threading.Event()
            source = Semantic(ctx.workspace, settings, cancel, editor=ctx.semantic_editor)
            early.append(
                Early((settings, method, args), SEMANTIC.submit(getattr(source, method), *args), cancel)
            )
    except Exception:
        pass
    return early


class ToolProcesses:
    """Worker processes (spawned on first use, `workers` at most) that run IN_WORKERS tools."""

    def __init__(self, workers: int = PROCESS_WORKERS):
        self.workers = workers
        self.idle: list[Worker] = []
        self.alive: set[Worker] = set()
        self.changed = threading.Condition()

    def run(self, ctx: Context, name: str, arguments: dict) -> dict:
        """The tool's answer from a worker. A cancel answers Cancelled at once and tells the
        worker's tool to stop; a worker that dies answers an error saying so."""
        worker = self.take(ctx)
        encoding = ctx.index.encoding if ctx.index is not None else "utf-16"
        call = (
            (ctx.arrived, time.monotonic()),  # (when it came in, when it was handed over)
            ctx.workspace.roots,
            worker.buffers_for(ctx.workspace),
            encoding,
            ctx.settings,
            name,
            arguments,
            ctx.report is not None,
        )
        stop = threading.Event()
        asked: list[Early] = []
        try:
            worker.send("call", *call)
            asked = asked_early(ctx, name, arguments)
            outcome = worker.serve(ctx, stop, list(asked))
        except WorkerDied as died:
            self.discard(worker)
            log.warning("%s: the worker process stopped (%s)", name, died)
            return worker_stopped(name, str(died))
        except BaseException:
            self.discard(worker)
            raise
        finally:
            stop.set()
            for question in asked:
                question.cancel.set()
        if outcome[0] == "stopping":
            threading.Thread(target=self.drain, args=(worker,), name="worker-drain", daemon=True).start()
            raise Cancelled()
        self.give_back(worker)
        if outcome[0] == "cancelled":
            raise Cancelled()
        if outcome[0] == "invalid":
            raise ArgumentError(outcome[1])
        return outcome[1]

    def record(self, ws: Workspace, path: Path, encoding: str) -> tuple[bool, FileRecord | None]:
        """(True, the index record of `path`'s current text made in a worker), or (False,
        None) when no worker could make it (it died, or the server is stopping)."""
        worker = self.take(Context(ws))
        buffer = ws.open_text(path)
        try:
            worker.send("record", ws.roots, path, None if buffer is None else buffer.content, encoding)
            while (message := worker.receive(POLL)) is None:
                pass
        except WorkerDied:
            self.discard(worker)
            return False, None
        self.give_back(worker)
        return True, message[1]

    def take(self, ctx: Context) -> Worker:
        """An idle worker, a new one while fewer than `workers` run, else the next to be free."""
        with self.changed:
            while True:
                if ctx.cancel_event.is_set():
                    raise Cancelled()
                if self.idle:
                    return self.idle.pop()
                if len(self.alive) < self.workers:
                    worker = Worker()
                    self.alive.add(worker)
                    return worker
                self.changed.wait(POLL)

    def warm(self, roots: list[Path], encoding: str) -> None:
        """Start the workers now and have them load the index saved for `roots` (once the
        server has saved it): the first heavy call then finds them ready."""
        with self.changed:
            while len(self.alive) < self.workers:
                worker = Worker()
                self.alive.add(worker)
                self.idle.append(worker)
                worker.send("warm", roots, encoding)
            self.changed.notify_all()

    def give_back(self, worker: Worker) -> None:
        with self.changed:
            if worker in self.alive:
                self.idle.append(worker)
                self.changed.notify()

    def discard(self, worker: Worker) -> None:
        worker.kill()
        with self.changed:
            self.alive.discard(worker)
            self.changed.notify()

    def drain(self, worker: Worker) -> None:
        """A cancelled call's worker back to idle once its tool stopped; killed after GRACE."""
        deadline = time.monotonic() + GRACE
        try:
            while (left := deadline - time.monotonic()) > 0:
                message = worker.receive(left)
                if message is None:
                    break
                if message[0] == "semantic":  # a question asked as it was cancelled
                    from .semantic import RequestCancelled

                    worker.send("reply", message[1], ("raise", RequestCancelled()))
                elif message[0] in ("answer", "cancelled", "invalid"):
                    return self.give_back(worker)
        except WorkerDied:
            pass
        self.discard(worker)

    def stop(self) -> None:
        """Stop every worker at once (a call that runs there is not waited for)."""
        with self.changed:
            workers, self.idle, self.alive = list(self.alive), [], set()
            self.changed.notify_all()
        for worker in workers:
            worker.kill()

    @property
    def pool(self) -> set[Worker] | None:
        """The workers alive, None when there are none (stopped, or none started yet)."""
        return set(self.alive) or None


def worker_stopped(name: str, how: str) -> dict:
    return Refusal(
        "worker_stopped",
        f"{name} stopped: the worker process running it ended before it answered ({how}). "
        "A new worker runs the next call; the same call again may work, or narrow it (path=, paths=) "
        "if it needs more memory than there is.",
    ).answer()


PROCESSES = ToolProcesses()
# Records of large files re-indexed as they are typed into: a worker of their own, so that they
# never wait behind a heavy call (and it holds no saved index).
RECORDS = ToolProcesses(workers=1)
# Files at least this large are re-indexed in RECORDS: a 9,000-line file's record is 150-600 ms
# of Python, which would hold the interpreter that answers documentSymbol and reads.
RECORD_IN_WORKER_BYTES = 64 * 1024


def run_tool(ctx: Context, name: str, arguments: dict) -> dict:
    """tools.run, in a worker process for the heavy calls of the IN_WORKERS tools."""
    if in_worker(ctx, name, arguments):
        return PROCESSES.run(ctx, name, arguments)
    unsend = sent_first(ctx, name, arguments)
    try:
        return run(ctx, name, arguments)
    finally:
        for drop in unsend:
            drop()  # (a question the tool asked is answered there: nothing is told)


def sent_first(ctx: Context, name: str, arguments: dict) -> list[Callable[[], None]]:
    """The questions the call's tool will ask first (Tool.asks_first), sent now to a running
    server that has answered before, when the tool runs here: its own first steps (the
    name's role, a local's scope) are done while the server works, and its question then
    waits for that answer (Session.send). What to call for those it never asks."""
    from .semantic import Semantic

    asks = REGISTRY[name].asks_first
    sent: list[Callable[[], None]] = []
    try:
        for settings, method, args in asks(ctx, arguments) if asks is not None else []:
            if method == "locations" and ctx.semantic_source is None:
                source = Semantic(ctx.workspace, settings, ctx.cancel_event, editor=ctx.semantic_editor)
                if (unsend := source.send(*args)) is not None:
                    sent.append(unsend)
    except Exception:  # the tool meets what went wrong itself, and says so
        pass
    return sent


def answers_from_index(index: SymbolIndex | None, name: str, arguments: dict) -> bool:
    """Whether a call answers from the server's ready index alone, in milliseconds: a name
    looked up in the whole workspace (not a use's file parsed, a file or folder looked in,
    a base's subclasses searched, nor a language server asked). Such a call is the light
    lane's, which heavy work (the use tables made after a warm start, say) steps aside for."""
    if name not in FROM_THE_INDEX or index is None or not index.ready.is_set():
        return False
    return not {"line", "path", "extends"} & arguments.keys()


def in_worker(ctx: Context, name: str, arguments: dict) -> bool:
    if name not in IN_WORKERS or is_light(ctx.workspace, name, arguments) or stays(ctx, name, arguments):
        return False
    return not (name in FROM_THE_INDEX and ctx.index is not None and ctx.index.ready.is_set())


def stays(ctx: Context, name: str, arguments: dict) -> bool:
    """Whether the call's tool says it is best run here (Tool.stays); not if asking fails
    (the tool meets that itself, in its worker, and says so)."""
    here = REGISTRY[name].stays
    try:
        return here is not None and here(ctx, arguments)
    except Exception:
        return False


def crosses(exc: Exception) -> bool:
    """Whether an exception comes out of the pipe as it went in: one that cannot be made
    again on the other side would stop the worker's listening thread, and its call with it."""
    import pickle

    try:
        pickle.loads(pickle.dumps(exc))
    except Exception:
        return False
    return True


# --- in a worker process -------------------------------------------------------------------


def _start_worker() -> None:
    os.nice(5)  # the server's own requests (a read, documentSymbol while typing) come first
    # A language server's reply arrives on the pipe's thread while a tool's own thread may be
    # busy (references' by-name uses): as in the serving process, it waits 1 ms, not 5, for it.
    sys.setswitchinterval(SWITCH_INTERVAL)
    # A worker inherits the server's stdin and stdout, which are the LSP connection: it must
    # neither read nor write them, nor keep them open after the server exits.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    os.close(devnull)


class ServingEnd:
    """A worker's end of its pipe: a thread receives (calls, cancels, semantic replies) while
    the main thread runs the calls one at a time."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()  # sends come from the tool's threads and this one's
        # each call with its cancel (None for a warm: load the saved index, answer nothing)
        self.calls: queue.SimpleQueue[tuple[tuple, threading.Event | None]] = queue.SimpleQueue()
        self.cancel = threading.Event()  # the running (or last) call's
        self.replies: dict[int, queue.SimpleQueue] = {}
        self.reports: dict[int, Callable[[str], None]] = {}
        self.ids = itertools.count(1)
        # the open buffers of each workspace (by its number), as the calls' changes left them
        self.buffers: dict[int, dict[Path, str]] = {}

    def send(self, *message: Any) -> None:
        with self.lock:
            self.conn.send(message)

    def listen(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):  # the server is gone: nobody wants what runs here
                os._exit(0)
            if message[0] == "call":
                self.cancel = threading.Event()
                self.calls.put((message[1:], self.cancel))
            elif message[0] in ("warm", "record"):
                self.calls.put((message, None))
            elif message[0] == "cancel":
                self.cancel.set()
            elif message[0] == "reply" and (waiting := self.replies.get(message[1])) is not None:
                waiting.put(message[2])
            elif message[0] == "report" and (report := self.reports.get(message[1])) is not None:
                report(message[2])

    def ask(self, source: int, settings: Settings, method: str, args: tuple, cancel: threading.Event | None) -> Any:  # fmt: skip
        """Semantic's `method`(*args), asked of the serving process's semantic source."""
        from .semantic import RequestCancelled

        asked = next(self.ids)
        waiting: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.replies[asked] = waiting
        try:
            self.send("semantic", asked, source, settings, method, args)
            while True:
                try:
                    kind, value = waiting.get(timeout=POLL)
                    break
                except queue.Empty:
                    if cancel is not None and cancel.is_set():
                        raise RequestCancelled() from None
        finally:
            del self.replies[asked]
        if kind == "raise":
            raise value
        return value


class RemoteSemantic:
    """The semantic source as a tool in a worker holds it: each question asked of the serving
    process's (which has the language servers' sessions), the answer as it gives it there."""

    def __init__(self, end: ServingEnd, settings: Settings, cancel: threading.Event | None, report: Callable[[str], None]) -> None:  # fmt: skip
        self.end, self.settings, self.cancel = end, settings, cancel
        self.source = next(end.ids)
        end.reports[self.source] = report

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method not in SEMANTIC_METHODS:
            raise AttributeError(method)
        return lambda *args: self.end.ask(self.source, self.settings, method, args, self.cancel)


def worker_main(conn: Connection) -> None:
    """A worker process: the calls the serving process sends, one at a time, each answered."""
    _start_worker()
    end = ServingEnd(conn)
    threading.Thread(target=end.listen, name="pipe", daemon=True).start()
    while True:
        call, cancel = end.calls.get()
        if cancel is None:  # a job that is no call: answered, or not (warm)
            job(end, call)
            continue
        name = call[5]
        try:
            reply: tuple = ("answer", run_in_worker(end, cancel, *call))
        except Cancelled:
            reply = ("cancelled",)
        except ArgumentError as exc:
            reply = ("invalid", str(exc))
        except Exception as exc:  # outside the tool (loading the index): answered as a defect
            log.exception("%s failed in a worker", name)
            reply = ("answer", internal_error(name, exc))
        end.reports.clear()
        end.send(*reply)


def job(end: ServingEnd, message: tuple) -> None:
    """warm: the tools imported and the saved index loaded before a call needs them; record:
    a file's index record made here and sent (the serving process puts it in its index)."""
    from .syntax.index import index_file
    from .syntax.languages import language_for
    from .workspace import Workspace

    if message[0] == "warm":
        for tool in IN_WORKERS:
            REGISTRY[tool]
        saved_for(*message[1:])
        return
    roots, path, buffer, encoding = message[1:]
    ws = Workspace(roots, resolved=True)
    if buffer is not None:
        ws.open_document(path, buffer)
    language = language_for(path)
    try:
        record = index_file(ws, path, language, encoding) if language is not None else None
    except Exception:  # as the index's own update: one bad file must not stop it
        log.exception("symbol index: cannot index %s", path)
        record = None
    end.send("record", record)


_SAVED: dict[tuple[Path, ...], tuple[float, SymbolIndex | None]] = {}  # a worker's saved index per roots


def saved_for(roots: list[Path], encoding: str) -> SymbolIndex | None:
    """The index a server saved for these roots, as this worker loaded it (again when saved
    again since)."""
    from .syntax import store
    from .syntax.index import saved_index
    from .workspace import Workspace

    ws = Workspace(roots, resolved=True)
    try:
        saved = store.index_file(store.cache_folder(), ws.roots, encoding).stat().st_mtime
    except OSError:
        saved = 0.0
    if _SAVED.get(tuple(ws.roots), (None,))[0] != saved:
        _SAVED.pop(tuple(ws.roots), None)
        gc.collect()  # what earlier calls left in cycles: collected, not frozen with the index
        _SAVED[tuple(ws.roots)] = (saved, saved_index(ws, encoding=encoding) if saved else None)
        # The index (and the tools imported before it) live as long as the worker: out of the
        # collector's view, as the serving process keeps its own, so that the full collections
        # of a call's work walk what it made, not them (a first references call: 125 -> 111 ms).
        gc.freeze()
    return _SAVED[tuple(ws.roots)][1]


def run_in_worker(end: ServingEnd, cancel: threading.Event, times: tuple[float | None, float], roots: list[Path], buffers: tuple[int, dict[Path, str], list[Path]], encoding: str, settings: Settings, name: str, arguments: dict, reports: bool) -> dict:  # fmt: skip
    """In a worker: the tool over a workspace of these roots and open buffers (those it
    held, with the call's changes: Worker.buffers_for), with the index a server saved for
    them (loaded again when saved again), its progress and semantic questions sent to the
    serving process."""
    from .workspace import Workspace

    (arrived, handed), way_back = times, max(time.monotonic() - times[1], 0.0)
    number, changed, closed = buffers
    documents = end.buffers.setdefault(number, {})
    documents.update(changed)
    for path in closed:
        documents.pop(path, None)
    ws = Workspace(roots, resolved=True)
    for path, content in documents.items():
        ws.open_document(path, content)
    index = saved_for(roots, encoding)
    if index is not None:
        index.workspace = ws
    report = (lambda message, percentage: end.send("progress", message, percentage)) if reports else None

    def remote(chosen: Settings, told: Callable[[str], None]) -> RemoteSemantic:
        return RemoteSemantic(end, chosen, cancel, told)

    ctx = Context(
        ws, settings, report=report, cancel_event=cancel, index=index, semantic_source=remote,
        arrived=handed if arrived is None else arrived, way_back=way_back,
    )  # fmt: skip
    return run(ctx, name, arguments)
