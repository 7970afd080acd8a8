"""Settings: defaults for every tool, from CLI flags, then initializationOptions, then the
client's `workspace/configuration` section `lspAgent` (each later source overrides).

Each option is validated on its own, so one bad option is reported and keeps its value
while the good ones apply.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class Settings:
    max_chars: int = 20_000  # default budget of every answer's text
    max_nudges: int = 2  # nudges per turn for undecodable tool calls (calls: decode_calls, run_calls)

    # option name -> (check, what a good value looks like)
    _RULES: ClassVar[dict[str, Any]] = {
        "max_chars": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 200,
            "an integer >= 200",
        ),
        "max_nudges": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
            "an integer >= 0",
        ),
    }
    # option name -> why it is refused (a removed option is named, not silently ignored)
    _REMOVED: ClassVar[dict[str, str]] = {
        "search_engine": "the one search engine is ripgrep (its values `auto` and `rg` meant the same, "
        "and the pure-Python engine was removed, it answered differently)",
    }

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
            if name in self._REMOVED:
                if value is not None or not configuration:
                    problems.append(f"option {given}={value!r} is refused: {self._REMOVED[name]}; remove it.")
                continue
            if name not in known:
                if not configuration:
                    problems.append(f"unknown option {given!r} ignored (known: {', '.join(sorted(known))}).")
                continue
            if value is None and configuration:
                continue
            check, expected = self._RULES[name]
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
