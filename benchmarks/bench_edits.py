"""edits: edit tasks on Django 5.2.8 and rxjs 7.8.2, each solved by a scripted agent twice —
with lsp-agent's edit tools and with a plain old_string/new_string Edit tool and a Read tool
of the kind coding agents ship (Edit refuses an old_string that is missing or not unique;
Read shows `cat -n` lines) — counting whether the first edit call applied exactly the
intended change, the calls, and the characters sent and received.

The tasks, found independently of our parser (Python's ast on Django; on rxjs, `export
function` lines whose body closes with a `}` at column 0): change one line of a body (a
single-line `return`), add a parameter to a signature (with a default, so callers stay
valid), insert a method or function after another, and, across files (benchmarks/
edits_across.py, with the language's server): rename a function, and add a first
parameter to a function and update every call. The expected file is computed from
the original text by line arithmetic; after each agent the file is compared with it
(insertions ignore how many blank lines separate definitions). A call that reported success
but left the file different from the expected is a silent misapplication.

Each agent reads what it must see to write the change (ours: `read symbol=`; plain: Read of
the definition's lines, the plain tool's best case) and copies old text as a person copies a
line: the line it changes, adding the lines above it while the tool says it is not unique.
"""

from __future__ import annotations

import ast
import json
import random
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

from . import edits_across as across
from .common import Report, django_tree, rxjs_tree

SEED = 24
PER_KIND = {"django": 12, "rxjs": 6}  # tasks per kind (body, param, insert) per corpus
ACROSS = {"django": 8, "rxjs": 6}  # tasks per kind (rename, callers) per corpus, with the servers


@dataclass
class Task:
    corpus: str
    kind: str  # body | param | insert
    rel: str
    name_path: str
    start: int  # 1-based first line of the definition
    end: int  # 1-based last line
    line: int  # the line changed (body, param), or the definition's last line (insert)
    new_line: str  # body, param: the new text of `line`; insert: the code inserted (unindented)
    indent: str = ""

    def expected(self, original: str) -> str:
        lines = original.split("\n")
        if self.kind == "insert":
            code = [self.indent + x if x else x for x in self.new_line.split("\n")]
            return "\n".join([*lines[: self.end], "", *code, *lines[self.end :]])
        lines[self.line - 1] = self.new_line
        return "\n".join(lines)


# --- finding tasks ---------------------------------------------------------------------------

PY_DEF = re.compile(r"^(\s*(?:async\s+)?def \w+\()(.*)(\)(?:\s*->.*)?:)\s*$")


def django_tasks(root: Path, rng: random.Random) -> list[Task]:
    candidates: dict[str, list[Task]] = {"body": [], "param": [], "insert": []}
    files = sorted(p for p in (root / "django").rglob("*.py") if "migrations" not in p.parts)
    for path in rng.sample(files, 400):
        text = path.read_text(encoding="utf-8")
        lines = text.split("\n")
        rel = str(path.relative_to(root))
        for cls in (n for n in ast.parse(text).body if isinstance(n, ast.ClassDef)):
            for fn in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                start = fn.decorator_list[0].lineno if fn.decorator_list else fn.lineno
                assert fn.end_lineno is not None
                base = dict(
                    corpus="django",
                    rel=rel,
                    name_path=f"{cls.name}/{fn.name}",
                    start=start,
                    end=fn.end_lineno,
                )
                returns = [s for s in ast.walk(fn) if isinstance(s, ast.Return) and s.value is not None]
                one = [
                    r
                    for r in returns
                    if r.lineno == r.end_lineno and lines[r.lineno - 1].strip().startswith("return ")
                ]
                if one:
                    row = lines[one[0].lineno - 1]
                    new = row.replace("return ", "return (", 1) + ")"
                    candidates["body"].append(Task(kind="body", line=one[0].lineno, new_line=new, **base))
                signature = PY_DEF.match(lines[fn.lineno - 1])
                if signature and "*" not in signature[2] and fn.lineno == fn.body[0].lineno - 1:
                    params = signature[2] + (", extra=None" if signature[2].strip() else "extra=None")
                    new = signature[1] + params + signature[3]
                    candidates["param"].append(Task(kind="param", line=fn.lineno, new_line=new, **base))
                indent = lines[fn.lineno - 1][
                    : len(lines[fn.lineno - 1]) - len(lines[fn.lineno - 1].lstrip())
                ]
                code = f"def added_{fn.name}(self):\n    return None"
                candidates["insert"].append(
                    Task(kind="insert", line=fn.end_lineno, new_line=code, indent=indent, **base)
                )
    return [t for kind in candidates.values() for t in rng.sample(kind, PER_KIND["django"])]


TS_FUNCTION = re.compile(r"^export function (\w+)(<[^()]*>)?\((.*)\)(: [^{]+)? \{$")


def rxjs_tasks(root: Path, rng: random.Random) -> list[Task]:
    candidates: dict[str, list[Task]] = {"body": [], "param": [], "insert": []}
    for path in sorted(root.rglob("*.ts")):
        lines = path.read_text(encoding="utf-8").split("\n")
        rel = str(path.relative_to(root))
        for n, row in enumerate(lines, 1):
            found = TS_FUNCTION.match(row)
            if not found:
                continue
            end = next((k for k in range(n + 1, len(lines) + 1) if lines[k - 1] == "}"), None)
            if end is None:
                continue
            name = found[1]
            base = dict(corpus="rxjs", rel=rel, name_path=name, start=n, end=end)
            returns = [k for k in range(n + 1, end) if re.match(r"^\s+return [^;]*;$", lines[k - 1])]
            if returns:
                new = lines[returns[0] - 1] + " // edited"
                candidates["body"].append(Task(kind="body", line=returns[0], new_line=new, **base))
            if "..." not in found[3]:
                params = found[3] + (", extra?: unknown" if found[3].strip() else "extra?: unknown")
                new = row.replace(f"({found[3]})", f"({params})", 1)
                candidates["param"].append(Task(kind="param", line=n, new_line=new, **base))
            code = f"export function added_{name}(): void {{}}"
            candidates["insert"].append(Task(kind="insert", line=end, new_line=code, **base))
    return [t for kind in candidates.values() for t in rng.sample(kind, PER_KIND["rxjs"])]


# --- the two agents --------------------------------------------------------------------------


@dataclass
class Tally:
    calls: int = 0
    sent: int = 0
    received: int = 0
    reported_ok: list[bool] = field(default_factory=list)  # per edit call
    refusals: list[str] = field(default_factory=list)  # what refused calls said, for the report

    def record(self, arguments: dict, text: str, ok: bool | None = None) -> None:
        self.calls += 1
        self.sent += len(json.dumps(arguments, ensure_ascii=False))
        self.received += len(text)
        if ok is not None:
            self.reported_ok.append(ok)


def ours(root: Path, task: Task, tally: Tally) -> None:
    ctx = Context(Workspace([root]))

    def tool(name: str, **arguments) -> dict:
        answer = call(ctx, name, arguments)
        tally.record(arguments, answer["text"], None if name == "read" else "error" not in answer)
        return answer

    if task.kind == "insert":
        answer = tool(
            "edit_symbol", path=task.rel, symbol=task.name_path, action="insert_after", new_text=task.new_line
        )
        if answer.get("error", {}).get("code") == "ambiguous":  # overloads: the one whose lines it named
            k = occurrence_of(ctx, task)
            tool(
                "edit_symbol",
                path=task.rel,
                symbol=task.name_path,
                action="insert_after",
                new_text=task.new_line,
                occurrence=k,
            )
        return
    tool("read", path=task.rel, symbol=task.name_path)
    old = original_line(root, task)
    # the line as read showed it, in the symbol the agent read
    edit = {
        "path": task.rel,
        "old_text": old.strip(),
        "new_text": task.new_line.strip(),
        "symbol": task.name_path,
    }
    answer = tool("edit", **edit)
    if answer.get("error", {}).get("code") == "ambiguous":
        k = answer["occurrences"].index(task.line) + 1  # the listing gives each occurrence's line
        tool("edit", **edit, occurrence=k)


def occurrence_of(ctx: Context, task: Task) -> int:
    from lsp_agent.syntax.index import named

    path = ctx.workspace.resolve(task.rel)
    found = named(None, path, ctx.workspace.text(path), task.name_path)
    return next(k for k, s in enumerate(found, 1) if s.end_line == task.end)


def plain(root: Path, task: Task, tally: Tally) -> None:
    path = root / task.rel
    lines = path.read_text(encoding="utf-8").split("\n")
    shown = "\n".join(f"{n:6}\t{lines[n - 1]}" for n in range(task.start, task.end + 1))
    tally.record({"file_path": str(path), "offset": task.start, "limit": task.end - task.start + 1}, shown)
    if task.kind == "insert":
        first = task.end
        code = [task.indent + x if x else x for x in task.new_line.split("\n")]
        while True:
            old = "\n".join(lines[first - 1 : task.end])
            new = old + "\n\n" + "\n".join(code)
            if plain_edit(path, old, new, tally) or first <= task.start:
                return
            first -= 1
    first = task.line
    while True:
        old = "\n".join(lines[first - 1 : task.line])
        new = "\n".join([*lines[first - 1 : task.line - 1], task.new_line])
        if plain_edit(path, old, new, tally) or first <= task.start:
            return
        first -= 1  # not unique: one more line of context above


def plain_edit(path: Path, old: str, new: str, tally: Tally) -> bool:
    """An Edit tool as coding agents ship it: exact old_string, refused unless it occurs once."""
    content = path.read_text(encoding="utf-8")
    count = content.count(old)
    arguments = {"file_path": str(path), "old_string": old, "new_string": new}
    if count != 1:
        why = (
            "String to replace not found in file."
            if not count
            else (
                f"Found {count} matches of the string to replace, but replace_all is false. To replace only one "
                "occurrence, please provide more context to uniquely identify the instance."
            )
        )
        tally.record(arguments, why, False)
        return False
    at = content.index(old)
    path.write_text(content[:at] + new + content[at + len(old) :], encoding="utf-8")
    line = content[:at].count("\n") + 1
    after = (content[:at] + new + content[at + len(old) :]).split("\n")
    snippet = "\n".join(
        f"{n:6}\t{after[n - 1]}" for n in range(max(1, line - 2), min(len(after), line + new.count("\n") + 3))
    )
    tally.record(
        arguments,
        f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet:\n{snippet}",
        True,
    )
    return True


def original_line(root: Path, task: Task) -> str:
    return (root / task.rel).read_text(encoding="utf-8").split("\n")[task.line - 1]


def same(task: Task, got: str, want: str) -> bool:
    if task.kind == "insert":  # how many blank lines separate definitions is style, not placement
        squeeze: Callable[[str], str] = lambda s: re.sub(r"\n(\s*\n)+", "\n\n", s)  # noqa: E731
        return squeeze(got) == squeeze(want)
    return got == want


def run_task(
    corpus: Path, task: Task, agent: Callable[[Path, Task, Tally], None]
) -> tuple[Tally, bool, bool]:
    """(tally, right at the first try, a silent misapplication) of one agent on one task."""
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        (root / task.rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(corpus / task.rel, root / task.rel)
        original = (root / task.rel).read_text(encoding="utf-8")
        tally = Tally()
        agent(root, task, tally)
        right = same(task, (root / task.rel).read_text(encoding="utf-8"), task.expected(original))
        first = bool(tally.reported_ok) and tally.reported_ok[0] and right
        silent = any(tally.reported_ok) and not right
        return tally, first, silent


def main() -> None:
    rng = random.Random(SEED)
    corpora = {"django": django_tree(), "rxjs": rxjs_tree()}
    tasks = django_tasks(corpora["django"], rng) + rxjs_tasks(corpora["rxjs"], rng)
    report = Report(
        "edits",
        f"edits: {len(tasks)} edit tasks on Django 5.2.8 and rxjs 7.8.2, lsp-agent's edit tools against a plain "
        "old_string/new_string Edit",
        [
            "corpus",
            "task",
            "tasks",
            "toolset",
            "right at 1st try",
            "silent misapplied",
            "calls",
            "chars sent",
            "chars received",
        ],
    )
    totals = {"lsp-agent": [0, 0, 0, 0, 0, 0], "plain Edit": [0, 0, 0, 0, 0, 0]}
    failures: list[str] = []
    for corpus in corpora:
        for kind in ("body", "param", "insert"):
            group = [t for t in tasks if t.corpus == corpus and t.kind == kind]
            for name, agent in (("lsp-agent", ours), ("plain Edit", plain)):
                row = [0, 0, 0, 0, 0]
                for task in group:
                    tally, first, silent = run_task(corpora[corpus], task, agent)
                    row = [
                        row[0] + first,
                        row[1] + silent,
                        row[2] + tally.calls,
                        row[3] + tally.sent,
                        row[4] + tally.received,
                    ]
                    if not first:
                        failures.append(
                            f"{name} {kind} {task.rel} {task.name_path}: {'silent' if silent else 'retried'}"
                        )
                report.add(corpus, kind, len(group), name, *row)
                totals[name] = [a + b for a, b in zip(totals[name], [len(group), *row], strict=True)]
    for corpus in corpora:
        for kind, rows in run_across(corpus, corpora[corpus], rng, failures).items():
            for name, row in rows.items():
                report.add(corpus, kind, row[0], name, *row[1:])
                totals[name] = [a + b for a, b in zip(totals[name], row, strict=True)]
    for name, (n, first, silent, calls, sent, received) in totals.items():
        report.add("all", "all", n, name, first, silent, calls, sent, received)
    ours_total, plain_total = totals["lsp-agent"], totals["plain Edit"]
    report.note(
        f"\nright at the first try: lsp-agent {ours_total[1] / ours_total[0]:.1%}, plain {plain_total[1] / plain_total[0]:.1%}; "
        f"characters sent + received: lsp-agent {ours_total[4] + ours_total[5]:,}, plain {plain_total[4] + plain_total[5]:,} "
        f"(ratio {(ours_total[4] + ours_total[5]) / (plain_total[4] + plain_total[5]):.2f})."
    )
    for failure in failures[:40]:
        report.note(f"- {failure}")
    report.write()


def run_across(
    corpus: str, source: Path, rng: random.Random, failures: list[str]
) -> dict[str, dict[str, list[int]]]:
    """The cross-file tasks of one corpus: (kind -> toolset -> [tasks, right at the first try,
    silent, calls, sent, received]), each agent on one shared copy restored after each task."""
    out: dict[str, dict[str, list[int]]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        root = across.workspace(corpus, source, Path(scratch))
        suffix = ".py" if corpus == "django" else ".ts"
        original = across.snapshot(root, suffix)
        ctx = across.context(root)
        try:
            for kind in ("rename", "callers"):
                found = across.candidates(corpus, root, kind)
                tasks = rng.sample(found, min(ACROSS[corpus], len(found)))
                if tasks:
                    across.warm(ctx, tasks[0])
                out[kind] = {"lsp-agent": [0] * 6, "plain Edit": [0] * 6}
                for task in tasks:
                    want = task.expected(original)
                    for name in ("lsp-agent", "plain Edit"):
                        tally = Tally()
                        if name == "lsp-agent":
                            across.ours(ctx, task, tool_of(ctx, tally))
                        else:
                            across.plain(
                                root,
                                task,
                                tally.record,
                                partial(plain_edit, tally=tally),
                            )
                        right = across.snapshot(root, suffix) == want
                        first = bool(tally.reported_ok) and all(tally.reported_ok) and right
                        silent = any(tally.reported_ok) and not right
                        row = [1, first, silent, tally.calls, tally.sent, tally.received]
                        out[kind][name] = [a + b for a, b in zip(out[kind][name], row, strict=True)]
                        if not first:
                            said = f" ({tally.refusals[0]})" if tally.refusals else ""
                            failures.append(
                                f"{name} {kind} {task.rel} {task.name}: {'silent' if silent else 'retried or wrong'}{said}"
                            )
                        across.restore(ctx, root, original)
        finally:
            across.stop()
    return out


def tool_of(ctx: Context, tally: Tally) -> Callable[..., dict]:
    """Our tools as the agent calls them; a call that writes counts as an edit attempt."""

    def tool(name: str, **arguments) -> dict:
        answer = call(ctx, name, arguments)
        writes = name == "edit" or (name == "rename" and arguments.get("apply"))
        tally.record(arguments, answer["text"], ("error" not in answer) if writes else None)
        if "error" in answer:
            tally.refusals.append(f"{name}: {answer['text'][:160]}")
        return answer

    return tool
