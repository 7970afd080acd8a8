"""The door kit: what every asynchronous front door (the LSP server, MCP) does with a tool
call around the tool, written once — validate the arguments, choose the lane, build the
Context, run the tool in its lane's thread, tell it to stop when the call is cancelled. A
door only translates: its protocol's request into `check`/`open`/`run`, an ArgumentError
into its own "invalid params", the answer into its reply. (The CLI, one call per process,
has no lanes to choose: it calls `tools.call`, which validates, runs and maps refusals and
defects to answers the same way.)
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .config import Settings
from .errors import Cancelled
from .lanes import Lanes, answers_from_index
from .tools import Context, is_light, run, validate
from .workspace import Text, Workspace

if TYPE_CHECKING:
    from .semantic.editor import EditorLink
    from .syntax.index import SymbolIndex

# report(message, percentage or None): a door's progress notifications
Report = Callable[[str, "int | None"], None]


@dataclass(frozen=True)
class Call:
    """One admitted call: its validated arguments, its lane, the Context the tool runs with."""

    name: str
    arguments: dict
    heavy: bool
    context: Context


@dataclass
class Door:
    """A front door's way to the tools: one workspace, its lanes, its settings (read at each
    call, since a client may change them) and, for the LSP server, its symbol index."""

    workspace: Workspace
    lanes: Lanes
    settings: Callable[[], Settings] = Settings
    index: SymbolIndex | None = None
    # The client's way to apply edits, asked at each call (None: edits go to disk).
    editor: Callable[[], Callable[[Path, Text, str], str | None] | None] = lambda: None
    # The client's own language features, asked first by the semantic source (None: none).
    semantic_editor: Callable[[], EditorLink | None] = lambda: None

    def check(self, name: str, params: Any) -> dict:
        """The arguments of a call to `name`, validated; raises ArgumentError (the door's
        "invalid params") for an unknown tool or malformed arguments."""
        return validate(name, params)

    def open(self, name: str, arguments: dict, report: Report | None = None) -> Call:
        """A checked call in its lane (light: milliseconds whatever the workspace), with the
        Context it runs with; a heavy call steps aside for light ones at its checkpoints."""
        heavy = not (
            is_light(self.workspace, name, arguments) or answers_from_index(self.index, name, arguments)
        )
        step_aside = self.lanes.step_aside if heavy else None
        context = Context(
            self.workspace,
            self.settings(),
            report=report,
            step_aside=step_aside,
            index=self.index,
            arrived=time.monotonic(),
            apply_edit=self.editor(),
            semantic_editor=self.semantic_editor(),
        )
        return Call(name, arguments, heavy, context)

    async def run(self, call: Call, work: Callable[[Context, str, dict], Any] = run) -> Any:
        """work(context, name, arguments) — the tool by default — in the call's lane. A
        cancelled call stops waiting at once and the cancellation goes on; the tool's thread
        stops at its next check_cancelled (a search kills its ripgrep). An ArgumentError the
        tool raises (arguments only it can check) goes to the door to translate."""
        try:
            return await self.lanes.run(call.heavy, work, call.context, call.name, call.arguments)
        except (asyncio.CancelledError, Cancelled):
            call.context.cancel_event.set()
            raise
