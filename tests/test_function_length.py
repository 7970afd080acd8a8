"""No function in lsp_agent/ is over 60 lines (the project's standard): a longer one is a
ladder or a door written by hand, and belongs in the shared pieces (budget.Ladder,
tools/doors.py)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lsp_agent"
LONGEST = 60


def function_lengths() -> list[tuple[int, str]]:
    """(lines, "file:line name") of every function and method, decorators included."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                assert node.end_lineno is not None
                where = f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {node.name}"
                found.append((node.end_lineno - start + 1, where))
    return sorted(found, reverse=True)


def test_no_function_is_over_60_lines():
    lengths = function_lengths()
    assert len(lengths) > 300  # the walk saw the package
    long = [f"{n} lines: {where}" for n, where in lengths if n > LONGEST]
    assert not long, "functions over 60 lines:\n" + "\n".join(long)
