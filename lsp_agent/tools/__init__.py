"""The one registry of agent tools.

A tool is a plain function `handler(ctx, **arguments) -> answer` plus its name, a one-line
summary and the JSON Schema of its arguments. Every front door (LSP requests and commands,
the CLI, text-dialect call dispatch) goes through `call`, so a tool is written once and
behaves the same everywhere. Tools know nothing of LSP.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import jsonschema

from ..config import Settings
from ..errors import ArgumentError, Cancelled, Refusal
from ..workspace import Workspace

if TYPE_CHECKING:
    from ..syntax.index import SymbolIndex


@dataclass(eq=False)  # compared and hashed by identity: the server keeps a set of running ones
class Context:
    """What a tool may use besides its arguments."""

    workspace: Workspace
    settings: Settings = field(default_factory=Settings)
    # report(message, percentage or None); the server turns it into $/progress
    report: Callable[[str, int | None], None] | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    # The server's workspace symbol index; without one (CLI, MCP) symbols are found by
    # searching the text for the name and parsing the files that contain it.
    index: SymbolIndex | None = None
    _last_report: float = 0.0

    def check_cancelled(self) -> None:
        if self.cancel_event.is_set():
            raise Cancelled()

    def progress(self, message: str, percentage: int | None = None, *, every: float = 0.2) -> None:
        """Report progress, at most once per `every` seconds."""
        now = time.monotonic()
        if self.report is not None and now - self._last_report >= every:
            self._last_report = now
            self.report(message, percentage)


@dataclass(frozen=True)
class Tool:
    name: str
    summary: str
    schema: dict
    handler: Callable[..., dict]
    # False for tools meant for agent runtimes rather than models (decoding replies, …):
    # they are served as requests but left out of the catalog a model is shown.
    for_agents: bool = True

    @cached_property
    def validator(self) -> jsonschema.Draft202012Validator:
        return jsonschema.Draft202012Validator(self.schema)

    def describe(self) -> dict:
        return {"name": self.name, "description": self.summary, "inputSchema": self.schema}


REGISTRY: dict[str, Tool] = {}

# The budget argument every answering tool takes; `run` fills in the server's default.
MAX_CHARS = {
    "type": "integer",
    "minimum": 200,
    "description": "Budget for the answer's text, header included (default: the server's max_chars).",
}


def tool(
    name: str, summary: str, schema: dict, *, for_agents: bool = True
) -> Callable[[Callable[..., dict]], Callable[..., dict]]:
    """Register `handler` as the tool `name`. The schema is an object schema of its arguments."""
    jsonschema.Draft202012Validator.check_schema(schema)

    def register(handler: Callable[..., dict]) -> Callable[..., dict]:
        if name in REGISTRY:
            raise ValueError(f"tool {name!r} registered twice")
        REGISTRY[name] = Tool(name, summary, schema, handler, for_agents)
        return handler

    return register


def catalog(*, include_runtime: bool = False) -> list[dict]:
    """Each agent tool's name, description and JSON Schema, in registration order
    (with `include_runtime`, the runtime-only tools too, marked `"forAgents": false`)."""
    return [
        t.describe() | ({} if t.for_agents else {"forAgents": False})
        for t in REGISTRY.values()
        if t.for_agents or include_runtime
    ]


def validate(name: str, arguments: Any) -> dict:
    """The arguments of a call to `name`, checked against its schema.

    Raises ArgumentError (a message naming the argument) for anything malformed.
    """
    if name not in REGISTRY:
        raise ArgumentError(f"unknown tool {name!r}; known tools: {', '.join(REGISTRY)}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ArgumentError(f"{name}: arguments must be an object, got {type(arguments).__name__}")
    errors = sorted(REGISTRY[name].validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        raise ArgumentError(f"{name}: {describe_schema_error(errors[0])}")
    return arguments


def describe_schema_error(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return f"{error.message}"
    if error.validator == "required":
        return error.message
    return f"argument {where!r}: {error.message}" if where else error.message


def call(ctx: Context, name: str, arguments: Any) -> dict:
    """Validate and run one tool call. Refusals come back as answers with `error`;
    malformed arguments raise ArgumentError; cancellation raises Cancelled."""
    return run(ctx, name, validate(name, arguments))


def run(ctx: Context, name: str, arguments: dict) -> dict:
    """Run a call whose arguments `validate` has already accepted (front doors validate
    first, to answer malformed calls in their own protocol). A tool that takes `max_chars`
    always gets one: the call's, else the server's default."""
    tool = REGISTRY[name]
    if "max_chars" in tool.schema.get("properties", {}) and "max_chars" not in arguments:
        arguments = {**arguments, "max_chars": ctx.settings.max_chars}
    try:
        return tool.handler(ctx, **arguments)
    except Refusal as refusal:
        return refusal.answer()


# Tool modules register themselves on import, in catalog order (after the names they use).
from . import read, search, symbols, calls  # noqa: E402, F401, I001
