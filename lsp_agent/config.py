"""Settings: defaults for every tool, from initializationOptions or CLI flags.

Each option is validated on its own, so one bad option is reported and replaced by its
default while the good ones are kept.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any, ClassVar


@dataclass(frozen=True)
class Settings:
    max_chars: int = 20_000  # default budget of every answer's text
    search_engine: str = "auto"  # "auto" or "rg": both ripgrep, the one engine
    max_nudges: int = 2  # nudges per turn for undecodable tool calls (calls: decode_calls, run_calls)

    # option name -> (check, what a good value looks like)
    _RULES: ClassVar[dict[str, Any]] = {
        "max_chars": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 200,
            "an integer >= 200",
        ),
        "search_engine": (
            lambda v: v in ("auto", "rg"),
            '"auto" or "rg" (both ripgrep: the pure-Python engine was removed, it answered differently)',
        ),
        "max_nudges": (
            lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
            "an integer >= 0",
        ),
    }

    @classmethod
    def from_options(cls, options: dict | None) -> tuple[Settings, list[str]]:
        """Settings from a client's options, and one problem message per rejected option."""
        problems: list[str] = []
        if options is None:
            return cls(), problems
        if not isinstance(options, dict):
            return cls(), [
                f"initializationOptions must be an object, got {type(options).__name__}; using defaults."
            ]
        known = {f.name for f in fields(cls)}
        values = {}
        for name, value in options.items():
            if name not in known:
                problems.append(f"unknown option {name!r} ignored (known: {', '.join(sorted(known))}).")
                continue
            check, expected = cls._RULES[name]
            if check(value):
                values[name] = value
            else:
                default = getattr(cls, name)
                problems.append(
                    f"option {name}={value!r} is invalid ({expected} expected); using {default!r}."
                )
        return cls(**values), problems

    def replace(self, **changes) -> Settings:
        return dataclasses.replace(self, **changes)
