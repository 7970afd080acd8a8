"""The editor as the semantic source: first in the order (editor, headless server, syntax).

A client that says it can (`experimental.lspAgent.semantic: true` in its capabilities) is
asked the custom request `lspAgent/semantic` with `{method, params}`, a plain LSP request
(textDocument/references, definition, implementation, prepareCallHierarchy,
callHierarchy/incomingCalls and outgoingCalls, rename, prepareRename). It answers
`{result, source}`: the LSP result of its own language features and who gave it ("VS Code's
providers", "Neovim's attached clients: basedpyright"); `source` null when none had an
answer. Semantic uses an EditorSession as it uses a headless Session, so the answer goes
through the same checks (locations outside the roots dropped and counted, garbage refused).
"""

from __future__ import annotations

import threading
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .connection import ServerFailed
from .session import FIRST_QUESTION

METHOD = "lspAgent/semantic"
CAPABILITY = ("lspAgent", "semantic")  # under the client's experimental capabilities
# Questions about an item the editor gave (a call hierarchy's): an empty answer is an answer.
FOLLOW_UPS = ("callHierarchy/incomingCalls", "callHierarchy/outgoingCalls")


class EditorRefused(Exception):
    """The editor answered the request with an error (the message is its)."""


class NoProvider(ServerFailed):
    """The editor has nothing for this question (no provider, or an error): the headless
    server is asked instead, and the answer says so."""


@dataclass
class EditorLink:
    """How a tool's thread asks the editor: `ask(method, params, timeout, cancel)` sends
    `lspAgent/semantic` and returns the reply; it raises ServerFailed when no reply came in
    time, EditorRefused for an error reply, RequestCancelled when `cancel` was set (the
    request is then cancelled at the editor too)."""

    name: str  # the editor, for messages before it answers ("Visual Studio Code")
    ask: Callable[[str, dict, float, threading.Event | None], Any]
    answered: bool = False  # once: its language features have loaded the project


def advertised(experimental: Any) -> bool:
    """Whether the client's experimental capabilities say it answers lspAgent/semantic."""
    section = experimental.get(CAPABILITY[0]) if isinstance(experimental, dict) else None
    return isinstance(section, dict) and section.get(CAPABILITY[1]) is True


@dataclass
class Label:
    name: str  # the answer's source, as the label shows it


class EditorSession:
    """The editor, asked as a headless Session is (ask, spec.name, partial, memory_mb)."""

    def __init__(self, link: EditorLink) -> None:
        self.link = link
        self.spec = Label(link.name)
        self.answered = False  # in this call (a follow-up may be empty)

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
        if not self.link.answered:  # its language features may still be loading the project
            timeout *= FIRST_QUESTION
        try:
            reply = self.link.ask(method, params, timeout, cancel)
        except EditorRefused as exc:
            raise NoProvider(f"{self.link.name} answered {method} with an error ({str(exc)[:200]})") from None
        if not isinstance(reply, dict) or "result" not in reply:
            raise ServerFailed(f"{self.link.name} answered {METHOD} with something that is not an answer")
        source = reply.get("source")
        if source is None and method in FOLLOW_UPS and self.answered:
            source = self.spec.name
        if source is None:
            raise NoProvider(
                f"{self.link.name} has no {method.split('/')[-1]} provider for {path.suffix or path.name} files"
            )
        if not isinstance(source, str) or not source.strip():
            raise ServerFailed(f"{self.link.name} answered {METHOD} with a source that is not a name")
        self.answered = self.link.answered = True
        self.spec = Label(printable(source))
        return reply["result"]

    def partial(self) -> str | None:
        return None  # the editor's own servers say nothing of their indexing to us

    def memory_mb(self) -> float | None:
        return None  # not ours to restart


def printable(name: str) -> str:
    """A name sent by the editor, as a label may show it: one line, at most 80 characters."""
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in name)
    return " ".join(kept.split())[:80]
