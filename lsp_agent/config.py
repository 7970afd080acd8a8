"""Settings: defaults for every tool, from CLI flags, then initializationOptions, then the
client's `workspace/configuration` section `lspAgent` (each later source overrides).

Each option is validated on its own, so one bad option is reported and keeps its value
while the good ones apply.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, fields

TYPE_CHECKING = False  # typing is imported by type checkers only: a one-shot command's milliseconds
if TYPE_CHECKING:
    from typing import Any


def positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def valid_servers(value: Any) -> bool:
    """semantic_servers: each family's entry a non-empty list of strings, an object with
    one as `command`, or false."""
    if not isinstance(value, dict):
        return False
    for entry in value.values():
        command = entry.get("command") if isinstance(entry, dict) else entry
        if entry is False:
            continue
        if not (isinstance(command, list) and command and all(isinstance(c, str) for c in command)):
            return False
    return True


# option name -> (check, what a good value looks like)
RULES = {
    "max_chars": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 200,
        "an integer >= 200",
    ),
    "max_nudges": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
        "an integer >= 0",
    ),
    "edits": (lambda v: v in ("on", "off"), '"on" or "off" (off: a read-only server, no edit tools)'),
    "precision": (lambda v: v in ("auto", "syntax"), '"auto" or "syntax"'),
    "semantic_servers": (
        valid_servers,
        'an object: language -> command (a list of strings), {"command": [...]} or false',
    ),
    "semantic_timeout": (lambda v: positive(v) and v <= 600, "a number of seconds, 0 < n <= 600"),
    "semantic_idle": (positive, "a number of seconds > 0"),
    "semantic_memory_mb": (
        lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 64,
        "an integer >= 64",
    ),
    "scip_indexes": (
        lambda v: isinstance(v, list) and all(isinstance(p, str) and p for p in v),
        "a list of paths of index files in the workspace",
    ),
}
# option name -> why it is refused (a removed option is named, not silently ignored)
REMOVED = {
    "search_engine": "the one search engine is ripgrep (its values `auto` and `rg` meant the same, "
    "and the pure-Python engine was removed, it answered differently)",
}


@dataclass(frozen=True)
class Settings:
    """Every option, with its default."""

    max_chars: int = 20_000  # default budget of every answer's text
    max_nudges: int = 2  # nudges per turn for undecodable tool calls (calls: decode_calls, run_calls)
    edits: str = "on"  # "off": the tools that write files are not in the catalog and refused
    # navigation's source of meaning: "auto" asks the language's server where one is found,
    # "syntax" only ever matches by name (see docs/navigation.md)
    precision: str = "auto"
    # per language family ("python", "typescript", "go", "c", "rust"): a command (list of
    # strings), {"command": [...], "tsserver": path, "name": ..., "warmup": s}, or false
    semantic_servers: dict = dataclasses.field(default_factory=dict)
    semantic_timeout: float = 10.0  # seconds a question to a language server may take
    semantic_idle: float = 600.0  # seconds unused before a language server is stopped
    semantic_memory_mb: int = 4096  # a language server above this (with its children) restarts
    # SCIP index files besides those found in the workspace (index.scip, index.NAME.scip)
    scip_indexes: list = dataclasses.field(default_factory=list)

    @classmethod
    def from_options(cls, options: Any) -> tuple[Settings, list[str]]:
        """Settings from a client's initializationOptions, and one problem message per
        rejected option."""
        return cls().updated(options)

    def updated(self, options: Any, *, source: str = "initializationOptions") -> tuple[Settings, list[str]]:
        """These settings with the valid `options` applied, and one problem message per
        rejected option (which keeps its current value).

        From `workspace/configuration` (source "configuration") names may be camelCase as
        editors write them (`maxChars`), a null value means "not set", and other names are
        the editor's own settings in the same section, so they are not reported."""
        if options is None:
            return self, []
        if not isinstance(options, dict):
            return self, [f"{source} must be an object, got {type(options).__name__}; ignored."]
        configuration = source == "configuration"
        known = {f.name for f in fields(self)}
        values = {}
        problems: list[str] = []
        for given, value in options.items():
            name = snake_case(given) if configuration else given
            if name in REMOVED:
                if value is not None or not configuration:
                    problems.append(f"option {given}={value!r} is refused: {REMOVED[name]}; remove it.")
                continue
            if name not in known:
                if not configuration:
                    problems.append(f"unknown option {given!r} ignored (known: {', '.join(sorted(known))}).")
                continue
            if value is None and configuration:
                continue
            check, expected = RULES[name]
            if check(value):
                values[name] = value
            else:
                problems.append(
                    f"option {given}={value!r} is invalid ({expected} expected); using {getattr(self, name)!r}."
                )
        return self.replace(**values), problems

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


def snake_case(name: str) -> str:
    """`maxChars` -> `max_chars` (names already in snake case are unchanged)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()
