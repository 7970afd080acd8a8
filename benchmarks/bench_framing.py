"""framing: how much of each answer is framing rather than content, for a fixed set of answers
on Django 5.2.8's sdist (PyPI), with ripgrep-style and Serena-style renderings of the same
results side by side.

    python -m benchmarks.bench_framing        (or: make bench BENCH=framing)

Content is the workspace's text an answer shows and what locates it, counted the same way
whatever the format: a read's lines (each with its newline) or column segment; a search's
matched lines at the stage's detail (whole lines with their newlines and the context lines in
stage 1, the line without indentation in stage 2, at most the cut width in stage 3), each
file's path once and each match's line number. Framing is every other character: headers,
notes, what was dropped, how to get more, a read's line numbers (its first gives them all),
repeated paths, symbols, padding and separators. Some framing is what makes an answer useful
(the symbol that tells two matches apart); the ratio shows what it costs. Answers without
text (search stages 4-7, outlines, find_symbol's locations, refusals) get no ratio: their
size per item (match, symbol, location) is shown instead.

The ripgrep-style rendering is what `rg` prints for the same matches at the same detail
(`--heading -n` for full matches, `path:line:text` for one line per match, `-M W
--max-columns-preview` for cut lines, `path:line:` for line numbers, `--count-matches` for
counts; `rg -n '' FILE`, `N:text`, for a read). Claude Code's Grep prints ripgrep's own
output, and its Read today numbers each line flush-left with a tab (`N<tab>text`), which costs
what `N:text` does. The cat -n-style rendering is a read as `cat -n` prints it, each number
right-aligned in six columns then a tab: the format Claude Code's Read documents and printed
before (with `→` for the tab), and what Codex shows when it runs `nl -ba` before `sed -n`. The
Serena-style rendering is the format of Serena's `search_for_pattern` (a JSON object of path to
blocks of `  >  N:line` and `...  N:line`, then "Match lines per file" and "Match counts per
file"), of its `read_file` (the bare text, no line numbers, as Codex's plain `sed -n` shows a
file) and of its `find_symbol` (a JSON list). "—": no rendering at that level of detail.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from benchmarks.common import Report, django_tree
from lsp_agent.search import find_rg
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

GOALS = {"search": 0.35, "read": 0.10}  # framing ÷ content, issue 17
# as the search tool runs rg
RG_FLAGS = ["--no-config", "--no-ignore-global", "--no-require-git", "--no-mmap"]

# (label, tool, arguments): what an agent asks on Django, each kind of answer at least once.
# "stage": N asks at the largest budget whose answer is shortened to stage N or below, so
# each stage is measured whatever the format's size.
CASES: list[tuple[str, str, dict]] = [
    ("read a file", "read", {"path": "django/db/models/fields/__init__.py"}),
    ("read on (page 2)", "read", {"path": "django/db/models/fields/__init__.py", "start": "next"}),
    ("read a small file", "read", {"path": "django/utils/functional.py"}),
    ("read a long file's end", "read", {"path": "django/db/models/query.py", "start": 2500}),
    ("read symbol=", "read", {"path": "django/db/models/query.py", "symbol": "QuerySet/get"}),
    ("find_symbol body", "find_symbol", {"name_path": "Model/get_deferred_fields", "include_body": True}),
    ("search, 2 matches", "search", {"pattern": "_check_db_comment"}),
    ("search, 5 matches", "search", {"pattern": "class BooleanField"}),
    ("search, 6 matches", "search", {"pattern": "class QuerySet"}),
    ("search, context", "search", {"pattern": "def get_deferred_fields", "context_after": 3}),
    ("search, 22 definitions", "search", {"pattern": "def to_python", "paths": ["django/forms"]}),
    ("search, 31 matches", "search", {"pattern": "empty_strings_allowed"}),
    ("search, 100 matches", "search", {"pattern": "get_internal_type"}),
    ("search, 171 matches", "search", {"pattern": r"self\.model", "paths": ["django/db/models"]}),
    (
        "search, a page",
        "search",
        {"pattern": "def get_", "paths": ["django/db/models"], "offset": 0, "limit": 40},
    ),
    (
        "search, one line each",
        "search",
        {"pattern": "def get_", "paths": ["django/db/models"], "stage": 2},
    ),
    ("search, lines cut", "search", {"pattern": "def get_", "paths": ["django/db/models"], "stage": 3}),
    ("search, symbols", "search", {"pattern": "to_python", "stage": 4}),
    (
        "search, symbols, small",
        "search",
        {"pattern": "to_python", "paths": ["django/forms"], "stage": 4},
    ),
    ("search, line numbers", "search", {"pattern": "get_internal_type", "stage": 5}),
    ("search, counts", "search", {"pattern": "queryset"}),
    ("search, summary", "search", {"pattern": "import"}),
    ("symbols of a file", "symbols", {"path": "django/utils/functional.py"}),
    ("symbols, shallower", "symbols", {"path": "django/db/models/fields/__init__.py", "max_chars": 6_000}),
    ("symbols of a folder", "symbols", {"path": "django/db/models"}),
    ("find_symbol", "find_symbol", {"name_path": "to_python", "path": "django/db/models"}),
    ("refusal: past the end", "read", {"path": "django/utils/functional.py", "start": 9_999}),
    ("refusal: bad regex", "search", {"pattern": "foo(?=bar)"}),
    ("refusal: past the last match", "search", {"pattern": "class BooleanField", "offset": 99}),
]


@dataclass
class Row:
    label: str
    kind: str  # "read", "search" (with text shown), "other"
    stage: str
    chars: int
    content: int | None  # characters of workspace text shown; None: none
    items: int  # matches, lines, symbols or locations the answer covers
    rg: str | None = None  # the same results, ripgrep-style
    catn: str | None = None  # the same read, cat -n-style
    serena: str | None = None  # the same results, Serena-style


def ratio(chars: int, content: int | None) -> float | None:
    return (chars - content) / content if content else None


def show(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


class Files:
    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[str, list[str]] = {}

    def lines(self, path: str) -> list[str]:
        if path not in self.cache:
            self.cache[path] = (self.root / path).read_text(encoding="utf-8", errors="replace").splitlines()
        return self.cache[path]


# --- reads -------------------------------------------------------------------------------------------


def read_row(files: Files, label: str, answer: dict) -> Row:
    lines = files.lines(answer["path"])[answer["start"] - 1 : answer["end"]]
    if "columns" in answer:
        first, last = answer["columns"]
        content = last - first + 1
    else:
        content = sum(len(line) + 1 for line in lines)
    row = Row(label, "read", "lines", len(answer["text"]), content, len(lines))
    row.rg = "\n".join(f"{n}:{line}" for n, line in enumerate(lines, answer["start"]))
    row.catn = "\n".join(f"{n:>6}\t{line}" for n, line in enumerate(lines, answer["start"]))
    row.serena = "\n".join(lines) + "\n"
    return row


# --- searches ----------------------------------------------------------------------------------------


@dataclass
class Hit:
    path: str
    line: int
    text: str
    context: dict[int, str]  # the context lines ripgrep printed with this match


def rg_matches(root: Path, args: dict) -> list[Hit]:
    """The same search run by `rg --json`, in path then line order."""
    command = [find_rg(), "--json", "--sort", "path", *RG_FLAGS]
    command += ["-F"] if args.get("fixed_strings") else []
    command += ["-i"] if args.get("ignore_case") else []
    command += ["-A", str(args["context_after"])] if args.get("context_after") else []
    command += ["-B", str(args["context_before"])] if args.get("context_before") else []
    command += ["-e", args["pattern"], *args.get("paths", [])]
    done = subprocess.run(
        command, cwd=root, capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False
    )
    hits: list[Hit] = []
    pending: dict[int, str] = {}
    after = args.get("context_after", 0)
    for raw in done.stdout.splitlines():
        event = json.loads(raw)
        if event["type"] not in ("match", "context"):
            continue
        data = event["data"]
        path, line = data["path"]["text"], data["line_number"]
        text = data["lines"].get("text", "").rstrip("\n").rstrip("\r")
        if event["type"] == "match":
            hits.append(Hit(path, line, text, pending))
            pending = {}
        elif hits and hits[-1].path == path and hits[-1].line < line <= hits[-1].line + after:
            hits[-1].context[line] = text
        else:
            pending[line] = text
    return hits


def content_of(hits: list[Hit], stage: int, width: int | None) -> int | None:
    """The text shown (stages 1-3), with what locates it: each file's path once and each
    match's line number."""
    if stage > 3:
        return None
    where = sum(len(p) for p in dict.fromkeys(h.path for h in hits)) + sum(len(str(h.line)) for h in hits)
    if stage == 1:
        shown = {(h.path, h.line): h.text for h in hits}
        for h in hits:
            shown.update({(h.path, n): t for n, t in h.context.items()})
        return where + sum(len(t) + 1 for t in shown.values())
    return where + sum(min(len(h.text.strip()), width or len(h.text)) for h in hits)


def counts(hits: list[Hit]) -> dict[str, int]:
    out: dict[str, int] = {}
    for h in hits:
        out[h.path] = out.get(h.path, 0) + 1
    return out


def rg_style(hits: list[Hit], stage: int, width: int | None) -> str | None:
    out: list[str] = []
    if stage == 1:  # rg --heading -n: a blank line between files, -- between groups
        context = any(h.context for h in hits)
        for path in dict.fromkeys(h.path for h in hits):
            shown: dict[int, str] = {}
            for h in (h for h in hits if h.path == path):
                shown.update({n: f"{n}-{t}" for n, t in h.context.items()})
                shown[h.line] = f"{h.line}:{h.text}"
            out += ([""] if out else []) + [path]
            for n in sorted(shown):
                if context and n - 1 not in shown and n != min(shown):
                    out.append("--")
                out.append(shown[n])
    elif stage == 2:
        out = [f"{h.path}:{h.line}:{h.text}" for h in hits]
    elif stage == 3 and width is not None:  # rg -M W --max-columns-preview
        cut = " [... omitted end of long line]"
        out = [
            f"{h.path}:{h.line}:" + (h.text if len(h.text) <= width else h.text[:width] + cut) for h in hits
        ]
    elif stage in (4, 5):
        out = [f"{h.path}:{h.line}:" for h in hits]
    elif stage == 6:  # rg --count-matches
        out = [f"{p}:{n}" for p, n in counts(hits).items()]
    else:
        return None
    return "\n".join(out)


def serena_style(hits: list[Hit], stage: int, chars: int) -> str | None:
    """Serena's search_for_pattern: full matches, else match lines, else counts per file."""
    if stage == 1:
        grouped: dict[str, list[str]] = {}
        for h in hits:
            lines = {**h.context, h.line: h.text}
            block = "\n".join(
                f"{'  >' if n == h.line else '...'}{str(n).rjust(4)}:{t}" for n, t in sorted(lines.items())
            )
            grouped.setdefault(h.path, []).append(block)
        return json.dumps(grouped, ensure_ascii=False)
    too_long = f"The answer is too long ({chars:,} characters). "
    if stage == 5:
        lines: dict[str, list[int]] = {}
        for h in hits:
            lines.setdefault(h.path, []).append(h.line)
        return too_long + "Match lines per file:\n" + json.dumps(lines, ensure_ascii=False)
    if stage == 6:
        return too_long + "Match counts per file:\n" + json.dumps(counts(hits), ensure_ascii=False)
    return None


def search_row(files: Files, label: str, args: dict, answer: dict) -> Row:
    stage, width = answer["stage"], answer.get("width")
    every = rg_matches(files.root, args)
    lines = answer.get("total_lines", answer["total_matches"])  # rg --json: one event per matched line
    assert lines == len(every), (label, lines, len(every))
    offset = args.get("offset", 0)
    hits = every[offset : offset + args["limit"]] if "limit" in args else every[offset:]
    content = content_of(hits, stage, width)
    kind = "other" if content is None else "search"
    row = Row(label, kind, f"{stage}: {answer['stage_name']}", len(answer["text"]), content, len(hits))
    row.rg = rg_style(hits, stage, width)
    row.serena = serena_style(hits, stage, len(rg_style(hits, 1, None) or ""))
    return row


def find_serena(answer: dict) -> str:
    return json.dumps(
        [
            {"name_path": m["name_path"], "kind": m["kind"], "relative_path": m["path"],
             "body_location": {"start_line": m["start_line"], "end_line": m["end_line"]}}
            for m in answer["matches"]
        ],
        ensure_ascii=False,
    )  # fmt: skip


# --- the run -------------------------------------------------------------------------------------------


def budget_for(ctx: Context, args: dict, stage: int) -> int:
    """The largest budget whose search answer is at `stage` or a later one."""
    budget = 1_000_000
    while (answer := call(ctx, "search", {**args, "max_chars": budget}))["stage"] < stage:
        budget = len(answer["text"]) - 1
    return budget


def measure(root: Path) -> list[Row]:
    files = Files(root)
    ctx = Context(Workspace([root]))
    rows: list[Row] = []
    previous: dict = {}
    for label, tool, args in CASES:
        args = dict(args)
        if args.get("start") == "next":
            args["start"] = previous["next"]["start"]
        if "stage" in args:
            args["max_chars"] = budget_for(ctx, args, args.pop("stage"))
        answer = previous = call(ctx, tool, args)
        chars = len(answer["text"])
        if "error" in answer:
            rows.append(Row(label, "other", f"refusal: {answer['error']['code']}", chars, None, 1))
        elif tool == "search":
            rows.append(search_row(files, label, args, answer))
        elif "start" in answer and "end" in answer:  # a read, or a body read through find_symbol
            rows.append(read_row(files, label, answer))
        elif tool == "symbols":
            rows.append(Row(label, "other", answer["stage"], chars, None, answer["symbols"]))
        else:
            row = Row(label, "other", answer["stage"], chars, None, len(answer["matches"]))
            row.serena = find_serena(answer)
            rows.append(row)
    return rows


def overall(rows: list[Row], kind: str, text_of) -> tuple[float, float] | None:
    """(all framing ÷ all content, the mean of the answers' own ratios): the first weighs big
    answers, the second every call alike, as an agent pays for each. None: no such rendering."""
    pairs = [(len(t), r.content) for r in rows if r.kind == kind and (t := text_of(r)) is not None]
    if not pairs:
        return None
    whole = sum(c - n for c, n in pairs) / sum(n for _, n in pairs)
    mean = sum((c - n) / n for c, n in pairs) / len(pairs)
    return whole, mean


def main() -> None:
    rows = measure(django_tree())
    report = Report(
        "framing",
        "framing ÷ content per answer (Django 5.2.8; lower is better)",
        [
            "answer",
            "stage",
            "chars",
            "÷ content",
            "chars per item",
            "rg-style",
            "cat -n-style",
            "Serena-style",
        ],
    )
    for r in rows:
        styled = [
            "—"
            if t is None
            else (
                f"{show(ratio(len(t), r.content))} ({len(t):,})"
                if r.content
                else f"{len(t) / r.items:.1f} per item"
            )
            for t in (r.rg, r.catn, r.serena)
        ]
        report.add(
            r.label, r.stage, r.chars, show(ratio(r.chars, r.content)), f"{r.chars / r.items:.1f}", *styled
        )
    for kind, goal in GOALS.items():
        whole, mean = overall(rows, kind, lambda r: "x" * r.chars)
        styles = {
            "ripgrep-style": lambda r: r.rg,
            "cat -n-style": lambda r: r.catn,
            "Serena-style": lambda r: r.serena,
        }
        same = ", ".join(
            f"{name} {styled[0]:.3f} / {styled[1]:.3f}"
            for name, pick in styles.items()
            if (styled := overall(rows, kind, pick)) is not None
        )
        report.note(
            f"{kind} answers: framing ÷ content {whole:.3f} over all (goal ≤ {goal}: "
            f"{'met' if whole <= goal else 'not met'}), {mean:.3f} per answer; the same results {same}"
        )
    report.note("stage N rows ask at the largest budget whose answer is at stage N or later")
    report.write()
