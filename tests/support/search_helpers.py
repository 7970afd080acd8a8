"""Builders shared by the search tests: hand-made outcomes and a reader of answers."""

from __future__ import annotations

import re
from pathlib import Path

from lsp_agent.search import FileMatches, Match, Outcome


def outcome(
    files: dict[str, list[tuple[int, str]]],
    *,
    context: dict[str, dict[int, str]] | None = None,
    binary: list[str] | None = None,
) -> Outcome:
    """An Outcome from {path: [(line, text), …]}; each match's column is its first non-blank."""
    entries = []
    for shown, rows in sorted(files.items()):
        matches = []
        for line, text in rows:
            col = len(text) - len(text.lstrip())
            matches.append(Match(line, (text,), col, len(text)))
        entries.append(
            FileMatches(
                str(Path("/ws") / shown),
                shown,
                matches,
                (context or {}).get(shown, {}),
                len(matches),
                lines=len(matches),
                hits=len(matches),
            )
        )
    total = sum(f.count for f in entries)
    return Outcome(entries, total, binary or [], True, "test", total, total)


def symbols_from(table: dict[str, dict[int, str | None] | None], defines: set[tuple[str, int]] = frozenset()):
    """A symbol provider from {path: {line: symbol}} (None: no grammar for that file); the
    (path, line) pairs in `defines` are the lines that name their symbol."""

    def provide(file: FileMatches):
        names = table.get(file.shown)
        if names is None:
            return None
        return {m.line: (names.get(m.line), (file.shown, m.line) in defines) for m in file.matches}

    return provide


def located(text: str) -> dict[str, list[int]]:
    """What an agent can read off an answer of stages 1-4: for each enclosing symbol, the
    lines of its matches. A match line is `LINE[ SYMBOL]:TEXT` (`LINE[ SYMBOL]` in stage 4),
    the symbol named when it changes; a file heading starts outside every symbol."""
    found: dict[str, list[int]] = {}
    label = None
    for line in text.split("\n"):
        if m := re.fullmatch(r"(\d+)(?:-\d+)?(?: ([^:\s]+))?(?::.*)?", line, re.DOTALL):
            label = m.group(2) or label
            if label and label != "<module>":
                found.setdefault(label, []).append(int(m.group(1)))
        elif not re.match(r"\d+-|--$", line):  # a file heading (context lines keep the label)
            label = None
    return found
