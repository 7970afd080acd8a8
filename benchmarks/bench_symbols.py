"""Symbols: outlines of all of Django, enclosing-symbol lookups in typescript.js, and cold vs
cached vs incremental parses of a 10,000-line file.

Python's own `ast` module is the side-by-side baseline for Django (a C parser that knows
only Python); the incremental re-parse must be at least 10x faster than a cold parse.
"""

from __future__ import annotations

import ast
import random
import time
from pathlib import Path

from lsp_agent.syntax import clear_caches, enclosing_symbol, enclosing_symbols, outline, walk
from lsp_agent.syntax.parsing import ParseCache
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Text, Workspace

from .common import Report, django_tree, median, timed, typescript_js


def django_outline(files: list[Path], texts: dict[Path, Text]) -> int:
    clear_caches()
    return sum(sum(1 for _ in walk(outline(p, texts[p]))) for p in files)


def ast_outline(texts: dict[Path, Text]) -> int:
    kinds = (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    count = 0
    for text in texts.values():
        try:
            tree = ast.parse(text.content)
        except SyntaxError:  # a few Django files are templates of Python, not Python
            continue
        count += sum(isinstance(node, kinds) for node in ast.walk(tree))
    return count


def django_modules(files: list[Path], lines: int = 10_000) -> str:
    """Real Python: whole modules of Django's ORM (django/db), concatenated up to `lines`."""
    text = ""
    for path in files:
        if "/django/db/" in path.as_posix():
            module = path.read_text(encoding="utf-8")
            text += module if module.endswith("\n") else module + "\n"
            if text.count("\n") >= lines:
                return text
    return text


def parse_times(report: Report, label: str, source: str, language: str, edits: int = 15) -> float:
    """Rows for cold, cached and incremental parses of `source`; returns cold / incremental.
    Each incremental parse follows a different one-line edit (a comment appended to a random
    line), timed against the tree of the unedited text."""
    path = Path(f"bench.{language}")
    base = Text.from_str(source)
    lines = source.split("\n")
    comment = "#" if language == "python" else "//"
    cold = median(timed(lambda: ParseCache().parse(path, base, language), repeat=7))
    cache = ParseCache()
    cache.parse(path, base, language)
    cached = median(timed(lambda: cache.parse(path, base, language), repeat=7))
    incremental = []
    for n in random.Random(3).sample(range(len(lines) - 1), edits):
        edited = Text.from_str("\n".join([*lines[:n], f"{lines[n]}  {comment} edited", *lines[n + 1 :]]))
        started = time.perf_counter()
        cache.parse(path, edited, language)
        incremental.append(time.perf_counter() - started)
        cache.parse(path, base, language)  # back to the base, untimed
    assert cache.counts["incremental"] == 2 * edits
    incr = median(incremental)
    report.add(f"{label}: cold parse", base.line_count, cold, 1 / cold, 1.0)
    report.add("  cached (same version)", base.line_count, cached, 1 / cached, cold / cached)
    report.add(
        f"  incremental after a one-line edit (median of {edits})",
        base.line_count,
        incr,
        1 / incr,
        cold / incr,
    )
    return cold / incr


def main() -> None:
    report = Report(
        "symbols",
        "Symbols: outlines, enclosing symbols, parse cache",
        ["what", "items", "median s", "per second", "ratio"],
    )

    # 1. Outline every Python file of Django.
    root = django_tree()
    files = sorted(root.rglob("*.py"))
    texts = {p: Text.from_bytes(p.read_bytes()) for p in files}
    symbols = django_outline(files, texts)
    cold = median(timed(lambda: django_outline(files, texts), repeat=3, warmup=0))
    report.add(f"Django 5.2.8 outline, cold ({symbols:,} symbols)", len(files), cold, len(files) / cold, 1.0)
    base = median(timed(lambda: ast_outline(texts), repeat=3, warmup=0))
    report.add(
        "  same files with Python's ast (classes and functions only)",
        len(files),
        base,
        len(files) / base,
        base / cold,
    )
    cached = median(timed(lambda: sum(len(outline(p, texts[p])) for p in files), repeat=3))
    report.add("  again, outlines cached by version", len(files), cached, len(files) / cached, cached / cold)
    ctx = Context(Workspace([root]))
    clear_caches()
    answers = []
    tool = median(
        timed(
            lambda: answers.append((clear_caches(), call(ctx, "symbols", {"path": ".", "max_chars": 10**9}))),
            repeat=1,
            warmup=0,
        )
    )
    walked = answers[-1][1]["files_scanned"]  # Python, JavaScript and the rest
    report.add(
        "  `symbols path=.` tool: walk, read, outline, render", walked, tool, walked / tool, tool / cold
    )

    # 2. enclosing_symbol in TypeScript's 9 MB bundle.
    ts = typescript_js()
    ts_text = Text.from_bytes(ts.read_bytes())
    clear_caches()
    started = time.perf_counter()
    ts_symbols = sum(1 for _ in walk(outline(ts, ts_text)))
    first = time.perf_counter() - started
    report.add(
        f"typescript.js: parse and outline ({ts_symbols:,} symbols)",
        ts_text.line_count,
        first,
        ts_text.line_count / first,
        "",
    )
    every_line = range(1, ts_text.line_count + 1)
    batch = median(timed(lambda: enclosing_symbols(ts, ts_text, every_line), repeat=3))
    report.add(
        "  enclosing_symbols, every line in one batch", len(every_line), batch, len(every_line) / batch, ""
    )
    sample = random.Random(7).sample(every_line, 20_000)
    single = median(timed(lambda: [enclosing_symbol(ts, ts_text, n) for n in sample], repeat=3))
    report.add("  enclosing_symbol, one call per line", len(sample), single, len(sample) / single, "")

    # 3. Cold vs cached vs incremental parses of two real files of about 10,000 lines.
    ratios = {
        "Python": parse_times(report, "Django ORM modules (Python)", django_modules(files), "python"),
        "TypeScript": parse_times(
            report,
            "typescript.d.ts (TypeScript)",
            (ts.parent / "typescript.d.ts").read_text(encoding="utf-8"),
            "typescript",
        ),
    }
    verdicts = ", ".join(
        f"{lang} {r:.1f}x" + (" (target met)" if r >= 10 else " (BELOW the 10x target)")
        for lang, r in ratios.items()
    )
    report.note(
        f"Incremental re-parse vs cold parse: {verdicts}. Ratios in the Django outline rows are "
        f"times relative to the cold tree-sitter outline (Python's ast takes {base / cold:.2f}x as long "
        "and covers Python only)."
    )
    report.write(chart=("what", "median s"))
