"""The one registry of agent tools. It knows each tool's module (MODULES) and imports it
when the tool is first looked up, so a one-shot command imports only the tool it runs
(iterating the registry imports them all); a module registers its tools on import.

A tool is a plain function `handler(ctx, **arguments) -> answer` plus its name, a title, a
description and the JSON Schema of its arguments, and the hints clients use to decide how to
run it (MCP's tool annotations: whether it only reads or changes files, always within the workspace). Every front door (LSP requests and commands,
the CLI, text-dialect call dispatch) goes through `call`, so a tool is written once and
behaves the same everywhere. Tools know nothing of LSP.
"""

from __future__ import annotations

import importlib
import threading
import time
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..config import Settings
from ..errors import ArgumentError, Cancelled, Refusal, logger
from ..workspace import Text, Workspace

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Any

    import jsonschema

    from ..semantic.editor import EditorLink
    from ..syntax.index import SymbolIndex


@dataclass(eq=False)  # compared and hashed by identity: the server keeps a set of running ones
class Context:
    """What a tool may use besides its arguments."""

    workspace: Workspace
    settings: Settings = field(default_factory=Settings)
    # report(message, percentage or None); the server turns it into $/progress
    report: Callable[[str, int | None], None] | None = None
    cancel_event: threading.Event = field(default_factory=threading.Event)
    # A heavy call's checkpoint lets light calls run first (see lanes.py); None: no lanes.
    step_aside: Callable[[], None] | None = None
    # The server's workspace symbol index; without one (CLI, MCP) symbols are found by
    # searching the text for the name and parsing the files that contain it.
    index: SymbolIndex | None = None
    # A one-shot's saved index, loaded when first used (symbol_index): an answer of counts
    # alone never pays for its import and its table.
    index_later: Callable[[], SymbolIndex | None] | None = None
    # In an editor that applies workspace edits: apply(path, text before, text after) -> None
    # when the editor applied it, else why not. None: edits are written to disk.
    apply_edit: Callable[[Path, Text, str], str | None] | None = None
    # In an editor that answers lspAgent/semantic: its language features, asked first.
    semantic_editor: EditorLink | None = None
    # In a worker process (lanes.py): semantic_source(settings, report) -> the serving
    # process's semantic source, asked over the pipe. None: this process's own (Semantic).
    semantic_source: Callable[[Settings, Callable[[str], None]], Any] | None = None
    # When a front door opened the call (time.monotonic: one clock for a worker process and
    # its server), so that the way to the tool counts in the answer's time. None: it began
    # with the tool (the CLI, tests).
    arrived: float | None = None
    # In a worker: the seconds its call took over the pipe, as long as its answer takes back.
    way_back: float = 0.0
    _last_report: float = 0.0

    def symbol_index(self) -> SymbolIndex | None:
        """The index: the server's, or the one `index_later` loads, loaded now (a one-shot's,
        asked from its one thread: no lock)."""
        if self.index_later is not None:
            self.index, self.index_later = self.index_later(), None
        return self.index

    def check_cancelled(self) -> None:
        """A checkpoint of long work: stop if cancelled, step aside for light calls."""
        if self.cancel_event.is_set():
            raise Cancelled()
        if self.step_aside is not None:
            self.step_aside()

    def progress(self, message: str, percentage: int | None = None, *, every: float = 0.2) -> None:
        """Report progress, at most once per `every` seconds (a checkpoint too: long work
        reports as it goes, so it steps aside for light calls here)."""
        if self.step_aside is not None:
            self.step_aside()
        now = time.monotonic()
        if self.report is not None and now - self._last_report >= every:
            self._last_report = now
            self.report(message, percentage)

    def progress_of(self, done: int, total: int, doing: str) -> None:
        """Progress that says how far: "outlining 120 of 2,800 files", with its percentage."""
        self.progress(f"{doing} {done:,} of {total:,} files", done * 100 // max(total, 1))


@dataclass(frozen=True)
class Tool:
    """A tool of the registry: its name, schema and handler."""

    name: str
    title: str  # for people: "Read file"
    summary: str
    schema: dict
    handler: Callable[..., dict]
    # False for tools meant for agent runtimes rather than models (decoding replies, …):
    # they are served as requests but left out of the catalog a model is shown.
    for_agents: bool = True
    # Same arguments, same effect: true of every tool that only reads; a streaming session's
    # calls are not (each feed moves the session on).
    idempotent: bool = True
    # True (or true of the call's arguments) for calls that take milliseconds whatever the
    # workspace: front doors run them in the light lane, never queued behind heavy calls.
    light: bool | Callable[[Workspace, dict], bool] = False
    # True for tools that change files (edit, create_file…): left out of the catalog and
    # refused when the setting `edits` is "off".
    writes: bool = False
    # asks_first(ctx, arguments) -> the semantic questions the call will ask first, each as
    # (settings, Semantic's method, its arguments), that a source answering at once may be
    # asked early: the serving process asks them as it hands the call to a worker (lanes.py).
    asks_first: Callable[[Context, dict], list[tuple[Settings, str, tuple]]] | None = None
    # stays(ctx, arguments): true of a call that runs in the serving process though the tool's
    # heavy calls run in a worker (lanes.py): one whose work is mostly a quick server's.
    stays: Callable[[Context, dict], bool] | None = None

    @cached_property
    def validator(self) -> jsonschema.Draft202012Validator:
        import jsonschema  # 0.1 s to import: only for a call the quick check cannot pass

        jsonschema.Draft202012Validator.check_schema(self.schema)
        return jsonschema.Draft202012Validator(self.schema)

    @property
    def annotations(self) -> dict:
        """MCP's tool annotations. Clients act on them: Claude Code runs read-only tools in
        parallel and in plan mode, Codex runs MCP tools in parallel only when marked
        read-only. The edit tools write, and may change what is there (destructive); none
        reaches past the workspace (closed world). run_calls runs other tools, edits among
        them: it is marked as writing too."""
        writes = self.writes or self.name in RUNS_OTHERS
        return {
            "title": self.title,
            "readOnlyHint": not writes,
            "destructiveHint": writes,
            "idempotentHint": self.idempotent and not writes,
            "openWorldHint": False,
        }

    def describe(self) -> dict:
        return {
            "name": self.name,
            "title": self.title,
            "description": self.summary,
            "inputSchema": self.schema,
            "annotations": self.annotations,
        }


# Each tool's module under lsp_agent.tools, in catalog order.
MODULES = {
    "read": "read",
    "search": "search",
    "symbols": "symbols",
    "find_symbol": "symbols",
    "references": "references",
    "definition": "definition",
    "list_files": "list_files",
    "overview": "overview",
    **dict.fromkeys(
        ["decode_calls", "run_calls", "tool_prompt", "stream_open", "stream_feed", "stream_flush"], "calls"
    ),
    **dict.fromkeys(["implementations", "callers", "callees"], "hierarchy"),
    "edit": "edit",
    "edit_symbol": "edit_symbol",
    "create_file": "create_file",
    "rename": "rename",
}


class Registry(MutableMapping[str, Tool]):
    """Tool name -> Tool, importing a tool's module on its first lookup. Iteration is in
    catalog order (MODULES', then tools registered from elsewhere, as tests do)."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}

    def names(self) -> list[str]:
        """Every tool's name, in catalog order, without importing any module."""
        return [*MODULES, *(name for name in self.tools if name not in MODULES)]

    def __getitem__(self, name: str) -> Tool:
        if name not in self.tools and name in MODULES:
            importlib.import_module(f"{__package__}.{MODULES[name]}")
        return self.tools[name]

    def __contains__(self, name: object) -> bool:
        return name in MODULES or name in self.tools

    def __iter__(self) -> Iterator[str]:
        for module in dict.fromkeys(MODULES.values()):
            importlib.import_module(f"{__package__}.{module}")
        return iter(self.names())

    def __len__(self) -> int:
        return len(list(iter(self)))

    def __setitem__(self, name: str, tool: Tool) -> None:
        self.tools[name] = tool

    def __delitem__(self, name: str) -> None:
        del self.tools[name]


REGISTRY = Registry()
RUNS_OTHERS = frozenset({"run_calls"})  # tools that dispatch calls to the others

# The budget argument every answering tool takes; `run` fills in the server's default.
BUDGET = f"max_chars (default {Settings.max_chars:,})"  # as tool descriptions state it
# (its default is said once, in each tool's description: "within max_chars (default 20,000)")
MAX_CHARS = {"type": "integer", "minimum": 200}


# Where a use is, for the tools that start from one (references, definition).
POSITION = {
    "path": {"type": "string", "description": "With line (and column): the file of a use to start from."},
    "line": {"type": "integer", "minimum": 1, "description": "With path: the line of the use (1-based)."},
    "column": {
        "type": "integer",
        "minimum": 1,
        "default": 1,
        "description": "With line: a column inside the name (default: the line's first name).",
    },
}


def tool(
    name: str,
    title: str,
    summary: str,
    schema: dict,
    *,
    for_agents: bool = True,
    idempotent: bool = True,
    light: bool | Callable[[Workspace, dict], bool] = False,
    writes: bool = False,
    asks_first: Callable[[Context, dict], list[tuple[Settings, str, tuple]]] | None = None,
    stays: Callable[[Context, dict], bool] | None = None,
) -> Callable[[Callable[..., dict]], Callable[..., dict]]:
    """Register `handler` as the tool `name`. The schema is an object schema of its arguments
    (checked against JSON Schema's metaschema when the tool's validator is first made)."""

    def register(handler: Callable[..., dict]) -> Callable[..., dict]:
        if name in REGISTRY.tools:
            raise ValueError(f"tool {name!r} registered twice")
        REGISTRY[name] = Tool(
            name, title, summary, schema, handler, for_agents, idempotent, light, writes, asks_first, stays
        )
        return handler

    return register


def catalog(*, include_runtime: bool = False, edits: bool = True) -> list[dict]:
    """Each agent tool's name, title, description, JSON Schema and MCP annotations, in registration order
    (with `include_runtime`, the runtime-only tools too, marked `"forAgents": false`; without
    `edits`, none of the tools that write)."""
    return [
        t.describe() | ({} if t.for_agents else {"forAgents": False})
        for t in REGISTRY.values()
        if (t.for_agents or include_runtime) and (edits or not t.writes)
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
    if (where := out_of_range(arguments)) is not None:
        raise ArgumentError(f"{name}: argument {where!r}: a number out of range (at most ±{SAFE_INTEGER:,})")
    if surely_valid(REGISTRY[name].schema, arguments):
        return arguments
    errors = sorted(REGISTRY[name].validator.iter_errors(arguments), key=lambda e: list(e.path))
    if errors:
        raise ArgumentError(f"{name}: {describe_schema_error(errors[0])}")
    return arguments


# The keywords surely_valid understands; `default` and `description` only annotate.
QUICK_KEYWORDS = frozenset(
    [
        "type",
        "properties",
        "required",
        "additionalProperties",
        "enum",
        "items",
        "anyOf",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "default",
        "description",
    ]
)
QUICK_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
    "null": lambda v: v is None,
}


def surely_valid(schema: Any, value: Any) -> bool:
    """True only if `value` is valid against `schema` (JSON Schema 2020-12); False when it
    is not or when unsure (a keyword or type outside the few the tools use), and then the
    full validator decides and words the error. Spares the CLI importing jsonschema."""
    if not isinstance(schema, dict) or not schema.keys() <= QUICK_KEYWORDS:
        return False
    kinds = schema.get("type", [])
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if kinds and not any(kind in QUICK_TYPES and QUICK_TYPES[kind](value) for kind in kinds):
        return False
    if "enum" in schema and not (isinstance(value, str) and value in schema["enum"]):
        return False
    if "anyOf" in schema and not any(surely_valid(s, value) for s in schema["anyOf"]):
        return False
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if number and not schema.get("minimum", value) <= value <= schema.get("maximum", value):
        return False
    if isinstance(value, str | list):
        low, high = ("minLength", "maxLength") if isinstance(value, str) else ("minItems", "maxItems")
        if not schema.get(low, 0) <= len(value) <= schema.get(high, len(value)):
            return False
    if isinstance(value, list) and "items" in schema:
        return all(surely_valid(schema["items"], item) for item in value)
    if isinstance(value, dict):
        return object_surely_valid(schema, value)
    return True


def object_surely_valid(schema: dict, value: dict) -> bool:
    properties = schema.get("properties", {})
    extra = schema.get("additionalProperties", True)
    if not isinstance(properties, dict) or not isinstance(extra, bool):
        return False
    if not all(key in value for key in schema.get("required", [])):
        return False
    return all(surely_valid(properties[k], v) if k in properties else extra for k, v in value.items())


SAFE_INTEGER = 2**53  # JSON's exact integers; a client can send 10^400, which no tool can use


def out_of_range(arguments: Any) -> str | None:
    """Where in `arguments` a number lies past SAFE_INTEGER (or is not finite), if anywhere;
    a loop, not a recursion: arguments may nest as deep as the JSON parser allows."""
    stack: list[tuple[str, Any]] = [("", arguments)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not -SAFE_INTEGER <= value <= SAFE_INTEGER:  # NaN compares false too
                return where
        elif isinstance(value, dict | list):
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend((f"{where}/{key}" if where else str(key), item) for key, item in items)
    return None


def describe_schema_error(error: jsonschema.ValidationError) -> str:
    where = "/".join(str(p) for p in error.absolute_path)
    if error.validator == "additionalProperties":
        return f"{error.message}"
    if error.validator == "required":
        return error.message
    return f"argument {where!r}: {error.message}" if where else error.message


def is_light(workspace: Workspace, name: str, arguments: dict) -> bool:
    """Whether a validated call runs in the light lane."""
    light = REGISTRY[name].light
    return light(workspace, arguments) if callable(light) else light


# Outlines of one file this small parse in a few milliseconds.
SMALL_FILE_BYTES = 256 * 1024


def one_small_file(workspace: Workspace, arguments: dict) -> bool:
    """For tools whose `path` may be a folder: light when it is one small file."""
    try:
        path = workspace.resolve(arguments.get("path", "."))
        return path.is_file() and path.stat().st_size <= SMALL_FILE_BYTES
    except (Refusal, OSError):
        return True  # refused at once by the tool itself


def call(ctx: Context, name: str, arguments: Any) -> dict:
    """Validate and run one tool call. Refusals come back as answers with `error`;
    malformed arguments raise ArgumentError; cancellation raises Cancelled."""
    return run(ctx, name, validate(name, arguments))


def run(ctx: Context, name: str, arguments: dict) -> dict:
    """Run a call whose arguments `validate` has already accepted (front doors validate
    first, to answer malformed calls in their own protocol). A tool that takes `max_chars`
    always gets one: the call's, else the server's default."""
    tool = REGISTRY[name]
    if tool.writes and ctx.settings.edits == "off":
        return Refusal(
            "edits_off",
            f'{name} is off: this server runs read-only (the setting edits is "off"); no file was changed.',
        ).answer()
    if "max_chars" in tool.schema.get("properties", {}) and "max_chars" not in arguments:
        arguments = {**arguments, "max_chars": ctx.settings.max_chars}
    try:
        return tool.handler(ctx, **arguments)
    except Refusal as refusal:
        return refusal.answer()
    except (ArgumentError, Cancelled):
        raise
    except Exception as exc:  # a bug: an answer the agent can read, the traceback to the log
        logger(__name__).exception("%s failed on %.500s", name, arguments)  # a reply to run_calls may be long
        return internal_error(name, exc)


def internal_error(name: str, exc: Exception) -> dict:
    """The answer to a call a tool failed on by a defect of its own. As an answer rather
    than a protocol error: an MCP client shows the model a tool result (a JSON-RPC error it
    may not), a batch of calls keeps the others' answers, and no traceback leaves the server."""
    cause = f"{type(exc).__name__}: {exc}"
    if len(cause) > 300:
        cause = cause[:300] + "…"
    return Refusal(
        "internal_error",
        f"lsp-agent failed on this {name} call ({cause}). This is a bug in lsp-agent, not in the "
        "call; the server logged it and keeps serving. Another call, or the same one again, may work.",
    ).answer()
