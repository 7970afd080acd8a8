"""No function in lsp_agent/ is over 60 lines (the project's standard): a longer one is a
ladder or a door written by hand, and belongs in the shared pieces (budget.Ladder,
tools/doors.py)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "lsp_agent"
LONGEST = 60

# Known, and owned by other work in flight; each allowed only until its owner lands (the
# last test fails once one is short enough, so the list cannot go stale):
KNOWN_LONG = {
    "lsp_agent/calls/scan.py scan",  # the fence loop the finders share: issue 22 item 6 (calls/)
    "lsp_agent/calls/tagged_json.py scan",  # the same
    "lsp_agent/tools/overview.py ranked_map",  # moves into syntax/ranking.py: issue 28
}


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
    long = [f"{n} lines: {where}" for n, where in lengths if n > LONGEST and key(where) not in KNOWN_LONG]
    assert not long, "functions over 60 lines:\n" + "\n".join(long)


def key(where: str) -> str:
    """`lsp_agent/x.py:12 name` without its line number."""
    path, _, name = where.partition(" ")
    return f"{path.rsplit(':', 1)[0]} {name}"


def test_the_known_long_functions_are_still_long():
    still = {key(where) for n, where in function_lengths() if n > LONGEST}
    assert still >= KNOWN_LONG, f"no longer over {LONGEST} lines, drop from KNOWN_LONG: {KNOWN_LONG - still}"
