"""One language server process for one language family and workspace root: started on the
first question, shared by every caller, restarted with back-off after a crash or above its
memory ceiling, stopped when idle (the pool's monitor decides).

A session never raises anything but ServerFailed (a reason for the answer's note) or
RequestCancelled: whatever the server does, lsp-agent answers from the syntax source.
"""

from __future__ import annotations

import itertools
import json
import logging
import math
import os
import signal
import subprocess
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import Refusal
from ..search.walk import walk_files
from .connection import Connection, Pending, RequestCancelled, ServerFailed
from .servers import Spec, launch_command

log = logging.getLogger(__name__)

MAX_OPEN = 64  # documents kept open at the server (typescript-language-server needs them open)
MAX_BACKOFF = 60.0
GRACE = 2.0  # seconds a server stopped for being idle has to shut down on its own
HANGS_BEFORE_RESTART = 2
# A server's answers right after start-up may come from part of the workspace; how long that
# lasts grows with the files it has to read (basedpyright: about 20 s on Django's 2,800).
WARMUP_PER_FILE = 0.01
QUIET = 1.0  # seconds without a new push after which pushed diagnostics are taken as complete
FIRST_QUESTION = 3  # times semantic_timeout for the first question (tsserver loads the project then)


# Questions given a progress token of ours: basedpyright, given none, asks us for one
# (window/workDoneProgress/create) and waits for the answer before it begins, a round trip
# through this process, where the syntax source's parsing beside it holds the GIL (a wake-up
# here waits a median 8-20 ms, up to 0.5 s, under load). Its reports on our token are not
# the server's loading.
OWN_PROGRESS = frozenset({"textDocument/references", "textDocument/implementation"})
TOKEN_PREFIX = "lsp-agent-question-"


@dataclass(frozen=True, eq=False)
class Sent:
    """A question sent ahead of its `ask` (Session.send)."""

    # (method, its params as JSON, the cancel event of the call that sent it: that call takes it)
    key: tuple[str, str, threading.Event]
    conn: Connection
    ident: int
    pending: Pending
    asked: float  # when it was sent


def file_uri(path: Path) -> str:
    return path.as_uri()


class Session:
    def __init__(self, spec: Spec, root: Path) -> None:
        self.spec = spec
        self.root = root
        self.lock = threading.Lock()
        self.conn: Connection | None = None
        self.ready = threading.Event()
        self.boot_error: str | None = None
        self.started_at = 0.0
        self.ready_at = 0.0
        self.last_used = time.monotonic()
        self.memory_checked = -math.inf  # when its memory was last looked at after an answer
        self.failures = 0
        self.retry_at = 0.0
        self.last_failure: str | None = None
        self.hangs = 0
        self.restarts = 0
        self.progress: dict[Any, str] = {}  # work-done tokens begun and not ended -> title
        self.quiet = threading.Event()  # set while no work-done progress is under way
        # uri -> (mtime_ns, version, the path it was opened by): each question looks at them all
        self.opened: OrderedDict[str, tuple[int, int, str]] = OrderedDict()
        self.capabilities: dict = {}
        self.warmup = spec.warmup
        self.answered = False  # since the last start
        # method -> seconds its last answer took from the request sent (inf: it failed)
        self.took: dict[str, float] = {}
        # textDocument/publishDiagnostics as pushed: uri -> (count of pushes so far, version, items)
        self.published: dict[str, tuple[int, Any, list]] = {}
        self.pushed = threading.Condition()
        self.shown: dict[str, int] = {}  # uri -> hash of the buffer text last shown (show)
        self.tokens = itertools.count(1)
        self.sent: dict[tuple[str, str, threading.Event], Sent] = {}  # questions sent ahead of their ask

    # -- life cycle -------------------------------------------------------------------------

    def connection(
        self, *, timeout: float, cancel: threading.Event | None, report: Callable[[str], None]
    ) -> Connection:
        """The running server, started if need be; waits for its initialize answer."""
        self.last_used = time.monotonic()
        with self.lock:
            if self.conn is not None and self.conn.closed is not None:
                self._failed(f"{self.spec.name} {self.conn.closed}")
            if self.conn is None:
                now = time.monotonic()
                if now < self.retry_at:
                    raise ServerFailed(
                        f"{self.last_failure}; next start in {self.retry_at - now:.0f} s (back-off)"
                    )
                self._spawn()
            conn = self.conn
        assert conn is not None
        deadline = time.monotonic() + timeout
        while not self.ready.wait(0.05):
            if cancel is not None and cancel.is_set():
                raise RequestCancelled()
            if self.boot_error is not None or conn.closed is not None:
                break
            if time.monotonic() > deadline:
                with self.lock:
                    self._failed(f"{self.spec.name} did not finish starting within {timeout:g} s")
                raise ServerFailed(self.last_failure or "")
            report(
                f"starting {self.spec.name} for {self.root.name} ({time.monotonic() - self.started_at:.0f} s)"
            )
        if self.boot_error is not None or conn.closed is not None:
            with self.lock:
                if self.conn is conn:
                    self._failed(f"{self.spec.name} failed to start: {self.boot_error or conn.closed}")
            raise ServerFailed(self.last_failure or "")
        return conn

    def _spawn(self) -> None:
        try:
            process = subprocess.Popen(
                launch_command(self.spec),
                cwd=self.root,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # its children (tsserver, node) stop with it
            )
        except OSError as exc:
            self._failed(f"{self.spec.name} could not be started ({exc})")
            raise ServerFailed(self.last_failure or "") from None
        self.conn = Connection(process, self._server_request, self._server_notification)
        self.ready.clear()
        self.boot_error = None
        self.progress.clear()
        self.opened.clear()
        self.answered = False
        self.started_at = time.monotonic()
        threading.Thread(target=self._boot, args=(self.conn,), daemon=True).start()

    def _boot(self, conn: Connection) -> None:
        params = {
            "processId": os.getpid(),
            "clientInfo": {"name": "lsp-agent"},
            "rootUri": file_uri(self.root),
            "workspaceFolders": [{"uri": file_uri(self.root), "name": self.root.name}],
            "capabilities": CLIENT_CAPABILITIES,
            "initializationOptions": self.spec.initialization_options,
        }
        try:
            answer = conn.request("initialize", params, timeout=600)
            if not isinstance(answer, dict) or not isinstance(answer.get("capabilities"), dict):
                raise ServerFailed("its initialize answer has no capabilities")
            self.capabilities = answer["capabilities"]
            conn.notify("initialized", {})
            if self.spec.settings:
                conn.notify("workspace/didChangeConfiguration", {"settings": self.spec.settings})
        except (ServerFailed, RequestCancelled) as exc:
            self.boot_error = str(exc) or type(exc).__name__
            return
        self.warmup = min(self.spec.warmup, WARMUP_PER_FILE * self.files())
        self.ready_at = time.monotonic()
        self.ready.set()

    def files(self) -> int:
        """How many files of the server's languages the root holds (as ripgrep lists them)."""
        globs = tuple(f"*{suffix}" for suffix in self.spec.language_ids)
        try:
            return sum(1 for _ in walk_files(self.root, [""], globs))
        except Refusal:
            return 10**6  # unknown: the whole warm-up

    def _failed(self, why: str) -> None:
        """Record a failure, stop the process, and wait longer before each restart."""
        self.failures += 1
        self.last_failure = why
        self.retry_at = time.monotonic() + min(MAX_BACKOFF, 2.0 ** (self.failures - 1))
        log.warning("%s (root %s): %s", self.spec.name, self.root, why)
        self._kill()

    def _kill(self, *, graceful: bool = False) -> None:
        """Stop the process: asked to shut down first when `graceful` (idle), else at once."""
        conn, self.conn = self.conn, None
        self.ready.clear()
        if conn is None:
            return
        try:
            if graceful and conn.closed is None:
                conn.request("shutdown", None, timeout=GRACE)
            conn.notify("exit", None)
            conn.process.wait(GRACE if graceful else 0.01)
        except (ServerFailed, RequestCancelled, subprocess.TimeoutExpired):
            pass
        try:
            os.killpg(conn.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        conn.process.wait()
        for stream in (conn.process.stdin, conn.process.stdout):
            if stream is not None:
                try:
                    stream.close()
                except OSError:  # what another thread had buffered for the dead process
                    pass

    def stop(self) -> None:
        with self.lock:
            self._kill(graceful=True)

    def restart(self, why: str) -> None:
        """Stop now (the next question starts it again), counted as a restart, not a crash."""
        with self.lock:
            log.warning("%s (root %s): restarting: %s", self.spec.name, self.root, why)
            self.restarts += 1
            self.last_failure = why
            self._kill()

    @property
    def running(self) -> bool:
        return self.conn is not None and self.conn.closed is None

    # -- questions --------------------------------------------------------------------------

    def ask(
        self,
        method: str,
        params: dict,
        path: Path,
        *,
        timeout: float,
        cancel: threading.Event | None,
        report: Callable[[str], None],
    ) -> Any:
        conn = self.connection(timeout=max(timeout, 60.0), cancel=cancel, report=report)
        first = not self.answered
        if first:  # the first question also waits for the server to load the project
            timeout *= FIRST_QUESTION
        sent = self._sent_before(conn, method, params, cancel)
        if sent is None:
            self._open(conn, path)
        if method in OWN_PROGRESS:
            params = {**params, "workDoneToken": f"{TOKEN_PREFIX}{next(self.tokens)}"}
        asked = time.monotonic() if sent is None else sent.asked
        deadline = asked + timeout
        self.took[method] = math.inf  # until it answers
        answer = self._request(conn, method, params, timeout, cancel, sent)
        # (sent first: from its sending to its answer's arrival, not to when it was taken)
        arrived = sent.pending.arrived if sent is not None else None
        self.took[method] = (arrived or time.monotonic()) - asked
        if first and self.progress:
            # answered while it still said it was loading: once it is done, ask again
            self._settle(deadline - time.monotonic(), cancel)
            if not self.progress:
                answer = self._request(conn, method, params, max(deadline - time.monotonic(), 1.0), cancel)
        self.answered = True
        return answer

    def send(self, method: str, params: dict, path: Path, owner: threading.Event) -> Sent | None:
        """`ask`'s question sent now to the running server, when it has answered before: the
        same call's `ask` (the one whose cancel event is `owner`) of the same question then
        waits for this answer, and the call works on meanwhile (its own syntax work while
        the server answers). Another call's question is its own: asked after, it may need a
        change written since. None where `ask` would do more than send (start the server,
        wait for its project to load)."""
        conn = self.conn
        if conn is None or conn.closed is not None or not self.answered or not self.ready.is_set():
            return None
        key = (method, json.dumps(params, sort_keys=True), owner)
        self._open(conn, path)
        if method in OWN_PROGRESS:
            params = {**params, "workDoneToken": f"{TOKEN_PREFIX}{next(self.tokens)}"}
        sent = Sent(key, conn, *conn.send_request(method, params), time.monotonic())
        with self.lock:
            before, self.sent[key] = self.sent.get(key), sent
        if before is not None:  # (the same call sent it twice: the first is not waited for)
            before.conn.forget(before.ident)
        return sent

    def unsend(self, sent: Sent) -> None:
        """A question sent that nobody asked after all: the server is told to stop."""
        with self.lock:
            if self.sent.get(sent.key) is not sent:
                return  # asked, and answered there
            del self.sent[sent.key]
        sent.conn.forget(sent.ident)

    def _sent_before(
        self, conn: Connection, method: str, params: dict, owner: threading.Event | None
    ) -> Sent | None:
        """The same question the same call sent (`send`), taken by this `ask`."""
        if not self.sent or owner is None:
            return None
        with self.lock:
            sent = self.sent.pop((method, json.dumps(params, sort_keys=True), owner), None)
        if sent is None:
            return None
        if sent.conn is conn:
            return sent
        sent.conn.forget(sent.ident)  # to a server since restarted
        return None

    def _request(
        self,
        conn: Connection,
        method: str,
        params: dict,
        timeout: float,
        cancel: threading.Event | None,
        sent: Sent | None = None,
    ) -> Any:
        try:
            if sent is not None:
                answer = conn.answer(sent.ident, method, timeout=timeout, cancel=cancel)
            else:
                answer = conn.request(method, params, timeout=timeout, cancel=cancel)
        except ServerFailed as exc:
            with self.lock:
                if conn.closed is not None:
                    self._failed(f"{self.spec.name} {conn.closed}")
                elif str(exc).startswith("no answer"):
                    self.hangs += 1
                    if self.hangs >= HANGS_BEFORE_RESTART:
                        self._failed(f"{self.spec.name} hung ({exc})")
            raise ServerFailed(f"{self.spec.name}: {exc}") from None
        self.hangs = 0
        self.failures = 0
        self.last_used = time.monotonic()
        return answer

    def _settle(self, timeout: float, cancel: threading.Event | None) -> None:
        """Wait (up to `timeout`) for the work the server said it began at start-up to end
        (tsserver's "Initializing JS/TS language features")."""
        deadline = time.monotonic() + timeout
        while self.progress and time.monotonic() < deadline:
            if cancel is not None and cancel.is_set():
                raise RequestCancelled()
            self.quiet.wait(0.05)

    def _open(self, conn: Connection, path: Path) -> None:
        """Open the document at the server (or tell it the disk changed since); the other
        open documents changed on disk since (an edit wrote them) are sent again too."""
        uri = file_uri(path)
        for other, (mtime, _, where) in list(self.opened.items()):  # (one stat each: 64 at most)
            try:
                moved = other != uri and os.stat(where).st_mtime_ns != mtime
            except OSError:
                moved = False
            if moved:
                self._send_text(conn, Path(where), None)
        self._send_text(conn, path, None)

    def show(self, conn: Connection, path: Path, text: str) -> None:
        """Open `path` at the server holding `text` (an editor's unsaved buffer), unless it
        holds that already."""
        if self.shown.get(file_uri(path)) != hash(text):
            self._send_text(conn, path, text)
            self.shown[file_uri(path)] = hash(text)

    def _send_text(self, conn: Connection, path: Path, given: str | None) -> int:
        """didOpen or didChange with `given` (else the disk's text, when it changed); the
        document's version at the server."""
        uri = file_uri(path)
        try:
            mtime = path.stat().st_mtime_ns
            known = self.opened.get(uri)
            if known is not None and known[0] == mtime and given is None:
                self.opened.move_to_end(uri)
                return known[1]
            text = path.read_text(encoding="utf-8", errors="replace") if given is None else given
            if given is None:
                self.shown.pop(uri, None)  # the server holds the disk's text again
        except OSError:
            return 0
        if known is None:
            language = self.spec.language_ids.get(path.suffix.lower(), "plaintext")
            item = {"uri": uri, "languageId": language, "version": 1, "text": text}
            conn.notify("textDocument/didOpen", {"textDocument": item})
            self.opened[uri] = (mtime, 1, os.fspath(path))
        else:
            version = known[1] + 1
            change = {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]}
            conn.notify("textDocument/didChange", change)
            self.opened[uri] = (mtime, version, os.fspath(path))
            self.opened.move_to_end(uri)
        while len(self.opened) > MAX_OPEN:
            old, _ = self.opened.popitem(last=False)
            conn.notify("textDocument/didClose", {"textDocument": {"uri": old}})
        return self.opened[uri][1] if uri in self.opened else 0

    def diagnostics(
        self, path: Path, text: str, *, timeout: float, cancel: threading.Event | None,
        report: Callable[[str], None],
    ) -> tuple[list, str | None]:  # fmt: skip
        """(the server's diagnostics of `path` holding `text`, why they may be partial): asked
        (textDocument/diagnostic) when the server answers that, else the push it sends after
        the change (publishDiagnostics), waited for up to `timeout`."""
        conn = self.connection(timeout=max(timeout, 60.0), cancel=cancel, report=report)
        if not self.answered:
            timeout *= FIRST_QUESTION
        uri = file_uri(path)
        with self.pushed:
            seen = self.published.get(uri, (0, None, []))[0]
        version = self._send_text(conn, path, text)
        self.answered = True
        if self.capabilities.get("diagnosticProvider"):
            asked = {"textDocument": {"uri": uri}}
            result = self._request(conn, "textDocument/diagnostic", asked, timeout, cancel)
            items = result.get("items") if isinstance(result, dict) else None
            if not isinstance(items, list):
                raise ServerFailed(f"{self.spec.name} answered textDocument/diagnostic without items")
            return items, self.partial()
        return self._pushed_after(uri, seen, version, timeout, cancel)

    def _pushed_after(
        self, uri: str, seen: int, version: int, timeout: float, cancel: threading.Event | None
    ) -> tuple[list, str | None]:
        """The diagnostics pushed for `uri` after push number `seen`, once the pushes have
        been quiet for QUIET seconds: a server that sends no version (typescript-language-
        server) pushes each kind as it comes (syntax first, types later), so the first push
        after a change may still hold the types of the text before it."""
        deadline = time.monotonic() + timeout
        last = seen
        quiet_from = 0.0
        with self.pushed:
            while True:
                count, pushed_version, items = self.published.get(uri, (0, None, []))
                if count > last and (not isinstance(pushed_version, int) or pushed_version >= version):
                    if isinstance(pushed_version, int):
                        return items, self.partial()
                    last, quiet_from = count, time.monotonic()
                if last > seen and time.monotonic() - quiet_from >= QUIET:
                    return items, self.partial()
                if cancel is not None and cancel.is_set():
                    raise RequestCancelled()
                if time.monotonic() > deadline:
                    why = "sent no diagnostics" if last == seen else "was still sending diagnostics"
                    return items, f"{self.spec.name} {why} after {timeout:g} s"
                self.pushed.wait(0.05)

    def changed_on_disk(self, paths: list[Path]) -> None:
        """Tell the server files under its root were written (it may hold them unopened)."""
        conn = self.conn
        mine = [p for p in paths if p.is_relative_to(self.root)]
        if conn is None or conn.closed is not None or not mine:
            return
        changes = [{"uri": file_uri(p), "type": 2} for p in mine]
        try:
            conn.notify("workspace/didChangeWatchedFiles", {"changes": changes})
        except ServerFailed:
            pass

    def partial(self) -> str | None:
        """Why an answer now may be incomplete, or None."""
        if self.progress:
            title = next(iter(self.progress.values()))
            return f"{self.spec.name} is still indexing" + (f" ({title})" if title else "")
        since = time.monotonic() - self.ready_at
        if since < self.warmup:
            return f"{self.spec.name} started {since:.0f} s ago and may still be indexing"
        return None

    # -- what the server asks of us ---------------------------------------------------------

    def _server_request(self, method: str, params: Any) -> Any:
        if method == "workspace/configuration" and isinstance(params, dict):
            return [section(self.spec.settings, item) for item in params.get("items") or []]
        if method == "workspace/workspaceFolders":
            return [{"uri": file_uri(self.root), "name": self.root.name}]
        if method == "client/registerCapability" and isinstance(params, dict):
            for registration in params.get("registrations") or []:  # pull diagnostics, registered late
                if isinstance(registration, dict) and registration.get("method") == "textDocument/diagnostic":
                    self.capabilities["diagnosticProvider"] = registration.get("registerOptions") or {}
        return None  # workDoneProgress/create, registerCapability, showMessageRequest, …

    def _server_notification(self, method: str, params: Any) -> None:
        if method == "textDocument/publishDiagnostics" and isinstance(params, dict):
            items = params.get("diagnostics")
            with self.pushed:
                count = self.published.get(str(params.get("uri")), (0, None, []))[0] + 1
                self.published[str(params.get("uri"))] = (
                    count,
                    params.get("version"),
                    items if isinstance(items, list) else [],
                )
                self.pushed.notify_all()
            return
        if method != "$/progress" or not isinstance(params, dict):
            return
        token, value = params.get("token"), params.get("value")
        if not isinstance(value, dict) or not isinstance(token, (str, int)):
            return
        if isinstance(token, str) and token.startswith(TOKEN_PREFIX):
            return  # a question's own progress, not the server's loading
        if not self.spec.progress_is_loading:
            return
        if value.get("kind") == "begin":
            self.progress[token] = str(value.get("title", "working"))[:80]
            self.quiet.clear()
        elif value.get("kind") == "end":
            self.progress.pop(token, None)
            if not self.progress:
                self.quiet.set()

    # -- memory -----------------------------------------------------------------------------

    def memory_mb(self) -> float | None:
        """Resident memory of the server and its children (Linux /proc), or None."""
        conn = self.conn
        if conn is None:
            return None
        return tree_rss_mb(conn.process.pid)


def section(settings: dict, item: Any) -> Any:
    """The value of a workspace/configuration item's section in our settings (or null)."""
    name = item.get("section") if isinstance(item, dict) else None
    if not name:
        return settings or None
    value: Any = settings
    for part in str(name).split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def tree_pids(pid: int) -> list[int] | None:
    """The process and every process under it (Linux /proc), or None where there is no /proc."""
    proc = Path("/proc")
    if not proc.is_dir():
        return None
    children: dict[int, list[int]] = {}
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        current = todo.pop()
        tree.append(current)
        todo += children.get(current, [])
    return tree


def tree_rss_mb(pid: int) -> float | None:
    pids = tree_pids(pid)
    if pids is None:
        return None
    total, page = 0, os.sysconf("SC_PAGE_SIZE")
    for current in pids:
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
        except (OSError, IndexError, ValueError):
            pass
    return total / 2**20


CLIENT_CAPABILITIES: dict = {
    "general": {"positionEncodings": ["utf-16"]},
    "window": {"workDoneProgress": True},
    "workspace": {
        "configuration": True,
        "workspaceFolders": True,
        "workspaceEdit": {"documentChanges": True},
    },
    "textDocument": {
        "synchronization": {"didSave": False},
        "references": {},
        "definition": {"linkSupport": True},
        "implementation": {"linkSupport": True},
        "callHierarchy": {},
        "documentSymbol": {"hierarchicalDocumentSymbolSupport": True},
        "rename": {"prepareSupport": True},
        "publishDiagnostics": {"versionSupport": True},
        "diagnostic": {},  # pull where offered; basedpyright then registers it late (we take its pushes)
    },
}
