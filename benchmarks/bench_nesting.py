"""Nesting: what one call costs on deeply nested code, at two sizes. Untrusted code can nest
definitions thousands deep (a generated or hostile file); every tool's cost must stay
near-linear in its input, so ×k the nesting should cost about ×k the time, not ×k².

Each row times one tool on one generated file (fresh caches: a new folder per run) at
NESTING_SIZE levels and at NESTING_FACTOR times as many, and quotes the ratio;
NESTING_FILES (shapes, `;` between) and NESTING_TOOLS (`,` between) pick some.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

from .common import Report

SIZE = int(os.environ.get("NESTING_SIZE", "5000"))
FACTOR = int(os.environ.get("NESTING_FACTOR", "4"))

# name -> (file name, its text at n levels, with one `marker` use in the innermost body)
FILES: dict[str, tuple[str, Callable[[int], str]]] = {
    "JS functions": ("deep.js", lambda n: "".join(f"function f{i}() {{\n" for i in range(n)) + "marker();\n" + "}\n" * n),
    "JS decorated methods": (
        "deep.js",
        lambda n: "".join(f"class C{i} {{ @d\nm{i}() {{ return class {{\n" for i in range(n)) + "marker();\n" + "}}}\n" * n,
    ),
    "Rust attributed fns": ("deep.rs", lambda n: "".join(f"#[a]\nfn f{i}() {{\n" for i in range(n)) + "marker();\n" + "}\n" * n),
    "JS functions, the name at every depth": (
        "deep.js",
        lambda n: "".join(f"function f{i}() {{\nmarker(); marker(); x.marker(); marker;\n" for i in range(n)) + "}\n" * n,
    ),
    "C blocks with prototypes": (
        "deep.c",
        lambda n: "void g() {\n" + "".join(f"{{ int f{i}(void);\n" for i in range(n)) + "marker();\n" + "}\n" * n + "}\n",
    ),
}  # fmt: skip

TOOLS: dict[str, Callable[[str, int], dict]] = {
    "search": lambda file, n: {"pattern": "marker"},
    "symbols": lambda file, n: {"path": file},
    "find_symbol": lambda file, n: {"name_path": "f3", "include_body": True},
    "overview": lambda file, n: {"path": "."},
    "references": lambda file, n: {"name": "marker"},
    "read": lambda file, n: {"path": file, "start": n},
}


def once(file: str, text: str, tool: str, arguments: dict) -> float:
    root = Path(tempfile.mkdtemp(prefix="nesting-"))
    (root / file).write_text(text)
    ctx = Context(Workspace([root]))
    start = time.perf_counter()
    answer = call(ctx, tool, arguments)
    elapsed = time.perf_counter() - start
    assert "error" not in answer, answer
    return elapsed


def main() -> None:
    big = SIZE * FACTOR
    report = Report(
        "nesting",
        f"One call on code nested {SIZE:,} and {big:,} deep (×{FACTOR}): the time should grow ×{FACTOR}",
        ["file", "tool", f"s at {SIZE:,}", f"s at {big:,}", "ratio"],
    )
    shapes, tools = os.environ.get("NESTING_FILES"), os.environ.get("NESTING_TOOLS")
    for label, (file, make) in FILES.items():
        if shapes and label not in shapes.split(";"):
            continue
        small_text, big_text = make(SIZE), make(big)
        for tool, arguments in TOOLS.items():
            if tools and tool not in tools.split(","):
                continue
            small = min(once(file, small_text, tool, arguments(file, SIZE)) for _ in range(2))
            large = min(once(file, big_text, tool, arguments(file, big)) for _ in range(2))
            report.add(label, tool, small, large, large / max(small, 1e-6))
    report.note(
        f"Goal: every ratio near ×{FACTOR} (a quadratic step shows as ×{FACTOR * FACTOR}); "
        "times under about 50 ms are dominated by fixed costs."
    )
    print(report.table())
    report.write()


if __name__ == "__main__":
    main()
