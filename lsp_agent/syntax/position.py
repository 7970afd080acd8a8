"""The name at a position of a file (what references and definition start from): the
identifier under or after a column, and the name before it (`m.get`: "m")."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..errors import Refusal
from ..workspace import Text, Workspace


@dataclass(frozen=True)
class UseAt:
    """The name at a position of a file, and the name before it (`m.get`: "m")."""

    path: Path
    text: Text
    line: int
    column: int  # 0-based start of the name
    name: str
    qualifier: str | None


def use_at(ws: Workspace, path: str, line: int, column: int) -> UseAt:
    """The name at (or after) a 1-based column of a line; refuses a line out of range or
    holding no name there."""
    resolved, text = ws.named_text(path)
    if not 1 <= line <= text.line_count:
        raise Refusal(
            "out_of_range", f"line={line} is outside {ws.display(resolved)} (1..{text.line_count})."
        )
    content = text.line(line)
    words = list(re.finditer(r"[A-Za-z_$][\w$]*", content))
    chosen = next((m for m in words if m.start() < column <= m.end()), None)
    if chosen is None:
        chosen = next((m for m in words if m.start() >= column - 1), None)
    if chosen is None:
        raise Refusal("no_name", f"{ws.display(resolved)}:{line} has no name at or after column {column}.")
    before = re.search(r"([A-Za-z_$][\w$]*)\s*(?:\.|::|->)\s*$", content[: chosen.start()])
    return UseAt(resolved, text, line, chosen.start(), chosen.group(), before.group(1) if before else None)
