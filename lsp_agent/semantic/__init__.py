"""The semantic source: the language's own server, asked as an LSP client.

`Semantic(ws, settings, …)` is what a tool holds for one call: it finds the server for a
file's language (servers.py), gets the shared session for that language and root from the
pool (pool.py), asks, and turns the answer into workspace locations. Every location outside
the workspace roots is dropped and counted, never shown. Anything that goes wrong (no
server, a crash, a hang, an answer that is not one) raises Unavailable with the reason, so
the tool answers from the syntax source and says why.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..config import Settings
from ..errors import Refusal
from ..workspace import Text, Workspace, uri_to_path
from . import scip
from .connection import RequestCancelled, ServerFailed
from .editor import EditorLink, EditorSession, NoProvider
from .pool import POOL
from .servers import KNOWN, family_of, spec_for
from .session import Session, file_uri

__all__ = [
    "KNOWN",
    "POOL",
    "Answer",
    "Call",
    "EditorLink",
    "Location",
    "Missing",
    "RequestCancelled",
    "Semantic",
    "Unavailable",
]


class Unavailable(Exception):
    """No semantic answer; the message is the reason, for the answer's note."""


class Missing(Unavailable):
    """No server is set up for this file (or precision=syntax): not a fault."""


@dataclass(frozen=True, order=True)
class Location:
    path: Path
    line: int  # 1-based
    column: int  # 1-based character column
    end_line: int
    end_column: int


def in_order(locations: list[Location]) -> list[Location]:
    """The distinct locations in Location's order, compared as tuples (a path's parts compare
    as Paths do, without Path's slow comparison: an answer holds hundreds)."""
    return sorted(
        set(locations), key=lambda loc: (loc.path.parts, loc.line, loc.column, loc.end_line, loc.end_column)
    )


@dataclass
class Answer:
    server: str
    locations: list[Location] = field(default_factory=list)
    dropped: int = 0  # outside the workspace roots: never shown
    invalid: int = 0  # inside, but not a position of a file there
    partial: str | None = None  # why it may be incomplete
    notes: list[str] = field(default_factory=list)  # what else the answer must say (a stale index)
    documentation: list[str] = field(default_factory=list)  # hover-like lines (a SCIP index's)
    # seconds it took where it was asked: the serving process's session, so that a tool in a
    # worker counts the server's own time, not the pipe's hops to it and back
    took: float = 0.0


@dataclass(frozen=True)
class Call:
    """One entry of a call hierarchy: the function, where it is, and the call sites."""

    name: str
    detail: str
    at: Location  # the function's name
    sites: tuple[Location, ...]  # the calls (in the caller for callers, in the function for callees)
    depth: int  # 1: a direct caller or callee


def located_extra(method: str) -> dict | None:
    """What a locations question (references, definition, implementation) asks besides
    its position: references count the declaration too."""
    return {"context": {"includeDeclaration": True}} if method == "references" else None


def utf16_to_index(line: str, offset: int) -> int:
    if line.isascii():  # one unit a character (most lines: a server's answer names hundreds)
        return max(min(offset, len(line)), 0)
    units = 0
    for index, char in enumerate(line):
        if units >= offset:
            return index
        units += 2 if ord(char) > 0xFFFF else 1
    return len(line)


def index_to_utf16(line: str, index: int) -> int:
    return len(line[:index].encode("utf-16-le", "surrogatepass")) // 2


class Semantic:
    """The semantic source for one tool call (its workspace, settings, cancel and progress)."""

    def __init__(
        self,
        ws: Workspace,
        settings: Settings,
        cancel: threading.Event | None = None,
        report: Callable[[str], None] | None = None,
        editor: EditorLink | None = None,
    ) -> None:
        self.ws = ws
        self.settings = settings
        self.cancel = cancel
        self.report = report or (lambda message: None)
        self.files: dict[str, tuple[Path, Text] | None] = {}
        # The editor's language features, asked first when it is attached (editor.py).
        self.editor = EditorSession(editor) if editor is not None else None
        self.fallbacks: list[str] = []  # why the editor did not answer, for the answer's notes

    def session(self, path: Path) -> Session:
        if self.settings.precision == "syntax":
            raise Missing("precision=syntax")
        family = family_of(path)
        if family is None:
            raise Missing(f"no language server knows {path.suffix or 'this file'}")
        spec, why = spec_for(family, self.settings.semantic_servers)
        if spec is None:
            raise Missing(why)
        root = self.ws.root_of(path)
        if root is None:
            raise Missing("outside the workspace")
        return POOL.session(spec, root, self.settings)

    def unserved(self, path: Path) -> str | None:
        """Why no language server can answer for `path`'s language, or None (the editor's
        own language features are asked first when one is attached)."""
        if self.editor is not None:
            return None
        try:
            self.session(path)
        except Missing as exc:
            return str(exc)
        return None

    def answered_session(self, path: Path) -> Session | None:
        """The running headless server for `path` that has answered before (a question goes
        to it at once: no start to wait for or report); None when there is none, or when an
        editor is attached (its features are not known here: it may have none, and the
        headless server would be started)."""
        if self.editor is not None:
            return None
        try:
            session = self.session(path)
        except Missing:
            return None
        return session if session.running and session.answered else None

    def at_once(self, path: Path) -> bool:
        return self.answered_session(path) is not None

    def answers_within(self, path: Path, method: str, seconds: float) -> bool:
        """Whether a question about `path` goes at once to a headless server whose last
        answer to `method` came within `seconds` (not when it failed)."""
        session = self.answered_session(path)
        return session is not None and session.took.get(method, math.inf) <= seconds

    def cold(self, paths: list[Path]) -> set[str]:
        """The headless servers of these files' languages that have not answered since they
        started: right after a start basedpyright answers references from the files it has
        read so far, without saying so."""
        cold, families = set(), set()
        for path in paths if self.editor is None else []:
            if (family := family_of(path)) in families:
                continue
            families.add(family)
            try:
                session = self.session(path)
            except Missing:
                continue
            if not session.answered:
                cold.add(session.spec.name)
        return cold

    def _ask(self, method: str, path: Path, line: int, column: int, extra: dict | None = None):
        return self.route(method, self.at(path, line, column, extra), path)

    def at(self, path: Path, line: int, column: int, extra: dict | None = None) -> dict:
        """A question's params at a 1-based position of `path`."""
        params = {"textDocument": {"uri": file_uri(path)}, "position": self.position(path, line, column)}
        return {**params, **(extra or {})}

    def route(self, method: str, params: dict, path: Path) -> tuple[Session | EditorSession, Any]:
        """(who answered, the LSP result): the editor first when one is attached, else (or
        when it has nothing for the question) the language's headless server."""
        why = None
        if self.editor is not None and self.settings.precision != "syntax" and self.ws.root_of(path):
            try:
                return self.editor, self._request(self.editor, method, params, path)
            except NoProvider as exc:
                why = str(exc)
        try:
            session = self.session(path)
        except Missing as exc:
            if why:  # the editor was asked and had nothing: the answer says so
                raise Unavailable(f"{why}; {exc}") from None
            raise
        if why:
            self.fallbacks.append(f"{why}: asked {session.spec.name} instead")
        try:
            return session, self._request(session, method, params, path)
        finally:
            POOL.check_memory(session, self.settings)

    def _request(self, session: Session | EditorSession, method: str, params: dict, path: Path) -> Any:
        try:
            return session.ask(
                method, params, path,
                timeout=self.settings.semantic_timeout, cancel=self.cancel, report=self.report,
            )  # fmt: skip
        except NoProvider:
            raise
        except ServerFailed as exc:
            raise Unavailable(str(exc)) from None

    def ask(self, method: str, path: Path, params: dict) -> tuple[str, Any, str | None]:
        """Any LSP request about `path` (textDocument/rename, …) to its language's server:
        (the server's name, its result, why the answer may be incomplete); the editor's own
        language features first when one is attached (route)."""
        session, result = self.route(method, params, path)
        return session.spec.name, result, session.partial()

    def diagnostics(self, path: Path, text: str) -> tuple[str, list, str | None]:
        """(the server, its diagnostics of `path` holding `text`, why they may be partial)."""
        session = self.session(path)
        try:
            items, partial = session.diagnostics(
                path, text, timeout=self.settings.semantic_timeout, cancel=self.cancel, report=self.report
            )
        except ServerFailed as exc:
            raise Unavailable(str(exc)) from None
        return session.spec.name, items, partial

    def show_buffers(self, path: Path) -> None:
        """Give the server of `path`'s language the editor's unsaved text of every open file
        of that language, so that what it answers is about the text the tools see. An
        attached editor's own language features see its buffers already: nothing is started."""
        if self.editor is not None:
            return
        session = self.session(path)
        family = family_of(path)
        buffers = [(p, t.content) for p, t in self.ws.open_documents().items() if family_of(p) == family]
        if not buffers:
            return
        try:
            conn = session.connection(timeout=60.0, cancel=self.cancel, report=self.report)
            for opened, content in buffers:
                session.show(conn, opened, content)
        except ServerFailed as exc:
            raise Unavailable(str(exc)) from None

    def written(self, paths: list[Path]) -> None:
        """Tell the running servers that these files changed on disk."""
        for session in list(POOL.sessions.values()):
            session.changed_on_disk(paths)

    def position(self, path: Path, line: int, column: int) -> dict:
        text = self.ws.text(path).line(line)
        return {"line": line - 1, "character": index_to_utf16(text, column - 1)}

    def locations(self, method: str, path: Path, line: int, column: int) -> Answer:
        """references, definition or implementation at a 1-based position: from a SCIP index
        that holds the file as it is (scip.py), else from the language's server; an index
        that is stale for the file or damaged is said in the answer's notes."""
        if self.settings.precision == "syntax":
            raise Missing("precision=syntax")
        started = time.monotonic()
        answer = self.located(method, path, line, column)
        answer.took = time.monotonic() - started
        return answer

    def located(self, method: str, path: Path, line: int, column: int) -> Answer:
        """`locations`' answer, from the index or the server."""
        try:
            whole = self.ws.text(path)
            text = whole.line(line) if 1 <= line <= whole.line_count else ""
            hits = scip.lookup(
                self.ws, self.settings.scip_indexes, method, path, line - 1, text, column - 1, self.report
            )
        except (scip.Stale, scip.Refused) as exc:
            hits, notes = None, [str(exc)]
        else:
            notes = []
        if hits is not None:
            return self.indexed(hits, method)
        try:
            answer = self.server_locations(method, path, line, column)
        except Missing:
            if notes:  # nothing else typed answers: the reason is the index's
                raise Unavailable("; ".join(notes)) from None
            raise
        answer.notes = notes + answer.notes
        return answer

    def indexed(self, hits: scip.Hits, method: str) -> Answer:
        """A SCIP answer as workspace locations (the same confinement as a server's)."""
        name = f"{hits.tool or 'SCIP'} index"
        answer = Answer(name, documentation=[d[:500] for d in hits.documentation[:5]])
        answer.dropped, answer.invalid = hits.outside, hits.invalid
        spans = set(hits.exact)  # positions of ASCII documents are characters already
        for file, (line, start, end_line, end), utf8 in hits.others:
            span = {"start": {"line": line, "character": start}, "end": {"line": end_line, "character": end}}
            found = self.location(file_uri(file), span, name) if not utf8 else self.utf8_location(file, span)
            answer.dropped += found is None
            answer.invalid += found == "invalid"
            if isinstance(found, Location):
                spans.add((found.path, found.line, found.column, found.end_line, found.end_column))
        # sorted as tuples in Location's order (a path's parts compare as Paths do, without
        # Path's slow comparison), each Location made once
        ordered = sorted(spans, key=lambda t: (t[0].parts, t[1], t[2], t[3], t[4]))
        answer.locations = [Location(*found) for found in ordered]
        if method == "definition" and not hits.found and not hits.stale:
            answer.dropped += 1  # a symbol no index here defines: the standard library, a package
        if hits.stale:
            shown = ", ".join(self.ws.display(p) for p in hits.stale[:3])
            more = f" and {len(hits.stale) - 3} more" if len(hits.stale) > 3 else ""
            answer.notes.append(
                f"{hits.index} is older than {shown}{more} (changed since it was indexed): uses there are by name"
            )
        return answer

    def utf8_location(self, file: Path, span: dict) -> Location | str | None:
        """A location whose characters are UTF-8 bytes (an index may say so)."""
        opened = self.file(file_uri(file))
        if opened is None:
            return None
        text = opened[1]
        for end in ("start", "end"):
            line = span[end]["line"]
            if 0 <= line < text.line_count:
                encoded = text.line(line + 1).encode("utf-8")[: span[end]["character"]]
                column = len(encoded.decode("utf-8", "ignore"))
                span[end]["character"] = index_to_utf16(text.line(line + 1), column)
        return self.location(file_uri(file), span, "SCIP")

    def send(self, method: str, path: Path, line: int, column: int) -> Callable[[], None] | None:
        """`locations`' question sent now to a headless server that answers at once, when
        no SCIP index is read first: `locations` then waits for that answer, and the caller
        does its own work meanwhile. What to call if it never asks (the server is told to
        stop); None when nothing was sent."""
        session = None if self.settings.scip_indexes else self.answered_session(path)
        if session is None or self.cancel is None:
            return None
        params = self.at(path, line, column, located_extra(method))
        try:
            sent = session.send(f"textDocument/{method}", params, path, self.cancel)
        except ServerFailed:
            return None
        return None if sent is None else partial(session.unsend, sent)

    def server_locations(self, method: str, path: Path, line: int, column: int) -> Answer:
        """textDocument/references, /definition or /implementation at a 1-based position."""
        session, result = self._ask(f"textDocument/{method}", path, line, column, located_extra(method))
        if isinstance(result, dict):
            result = [result]
        if result is None:
            result = []
        if not isinstance(result, list):
            raise Unavailable(
                f"{session.spec.name} answered {method} with a {type(result).__name__}, not locations"
            )
        answer = Answer(session.spec.name, partial=session.partial(), notes=list(self.fallbacks))
        for item in result:
            self.add(answer, item, session.spec.name)
        answer.locations = in_order(answer.locations)
        return answer

    def add(self, answer: Answer, item: Any, server: str) -> None:
        """One Location or LocationLink of an answer, kept if it is in the workspace."""
        if not isinstance(item, dict):
            raise Unavailable(f"{server} answered with a {type(item).__name__} where a location belongs")
        uri = item.get("targetUri", item.get("uri"))
        span = item.get("targetSelectionRange", item.get("range"))
        found = self.location(uri, span, server)
        if found is None:
            answer.dropped += 1
        elif isinstance(found, Location):
            answer.locations.append(found)
        else:
            answer.invalid += 1

    def location(self, uri: Any, span: Any, server: str) -> Location | str | None:
        """A workspace location; None outside the roots; "invalid" for a position no file has."""
        try:
            start, end = span["start"], span["end"]
            numbers = [start["line"], start["character"], end["line"], end["character"]]
        except (TypeError, KeyError):
            raise Unavailable(f"{server} answered a location without a range") from None
        if not isinstance(uri, str) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in numbers
        ):
            raise Unavailable(f"{server} answered a location that is not one")
        if not uri.startswith("file:"):
            return None
        opened = self.file(uri)
        if opened is None:
            return None  # outside the roots (or nothing there to show)
        path, text = opened
        if not 0 <= numbers[0] < text.line_count or numbers[2] < numbers[0]:
            return "invalid"
        first = text.line(numbers[0] + 1)
        last = text.line(min(numbers[2], text.line_count - 1) + 1)
        return Location(
            path, numbers[0] + 1, utf16_to_index(first, numbers[1]) + 1,
            numbers[2] + 1, utf16_to_index(last, numbers[3]) + 1,
        )  # fmt: skip

    def file(self, uri: str) -> tuple[Path, Text] | None:
        """The workspace file a URI names and its text, or None; once per URI and call (an
        answer names the same few files hundreds of times)."""
        if uri not in self.files:
            try:
                self.files[uri] = self.ws.named_text(uri_to_path(uri))
            except (Refusal, ValueError, OSError):
                self.files[uri] = None
        return self.files[uri]

    def calls(
        self, path: Path, line: int, column: int, direction: str, depth: int, most: int
    ) -> tuple[Answer, list[Call]]:
        """The call hierarchy from a position: callers ("incoming") or callees ("outgoing"),
        breadth first to `depth`, at most `most` entries."""
        session, items = self._ask("textDocument/prepareCallHierarchy", path, line, column)
        name = session.spec.name
        if items is None:
            items = []
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise Unavailable(f"{name} answered prepareCallHierarchy with something that is not items")
        answer = Answer(name, partial=session.partial(), notes=list(self.fallbacks))
        found: list[Call] = []
        seen: set[tuple] = set()
        level = [i for i in items[:3]]
        for current in range(1, depth + 1):
            following = []
            for item in level:
                for entry in self.hierarchy_step(session, item, direction, path):
                    call = self.call_of(answer, entry, direction, current, name, item.get("uri"))
                    if call is None or (call.at.path, call.at.line, call.at.column) in seen:
                        continue
                    seen.add((call.at.path, call.at.line, call.at.column))
                    found.append(call)
                    following.append(entry["to" if direction == "outgoing" else "from"])
                    if len(found) >= most:
                        return answer, found
            level = following
        return answer, found

    def hierarchy_step(
        self, session: Session | EditorSession, item: dict, direction: str, path: Path
    ) -> list[dict]:
        try:
            result = self._request(session, f"callHierarchy/{direction}Calls", {"item": item}, path)
        except NoProvider as exc:  # the items were its own: no other source can go on from them
            raise Unavailable(str(exc)) from None
        if result is None:
            return []
        if not isinstance(result, list) or not all(isinstance(e, dict) for e in result):
            raise Unavailable(
                f"{session.spec.name} answered {direction} calls with something that is not calls"
            )
        return result

    def call_of(
        self, answer: Answer, entry: dict, direction: str, depth: int, server: str, parent_uri: Any
    ) -> Call | None:
        item = entry.get("to" if direction == "outgoing" else "from")
        if not isinstance(item, dict):
            raise Unavailable(f"{server} answered a call without its function")
        at = self.location(item.get("uri"), item.get("selectionRange"), server)
        if not isinstance(at, Location):
            answer.dropped += at is None
            answer.invalid += at == "invalid"
            return None
        # call sites are in the caller (incoming) or in the function asked about (outgoing)
        site_uri = item.get("uri") if direction == "incoming" else parent_uri
        sites = []
        for span in entry.get("fromRanges") or []:
            site = self.location(site_uri, span, server)
            if isinstance(site, Location):
                sites.append(site)
        detail = item.get("detail")
        detail = detail[:200] if isinstance(detail, str) else ""
        return Call(str(item.get("name", "?"))[:200], detail, at, tuple(sites), depth)


def describe(ws: Workspace, settings: Settings) -> list[tuple[str, str, str]]:
    """Per language family: (family, the source that answers, why), for `lsp-agent doctor`."""
    rows = []
    for family in KNOWN:
        if settings.precision == "syntax":
            rows.append((family, "syntax", "precision=syntax"))
            continue
        spec, why = spec_for(family, settings.semantic_servers)
        if spec is None:
            rows.append((family, "syntax", why))
            continue
        state = POOL.state(spec, ws.roots[0]) if ws.roots else "not started"
        rows.append((family, spec.name, f"{why} ({state})"))
    return rows
