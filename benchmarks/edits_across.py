"""The cross-file tasks of BENCH=edits: rename a function, and add a first parameter to a
function and update every call — on a part of Django (django/utils, core, http) with
basedpyright and on rxjs's src with typescript-language-server (from `make test-servers`).

Tasks are functions whose every whole-word occurrence is code (Python's tokenize; for
TypeScript, outside comments and strings by a small lexer), defined once, used in more than
one file, never re-exported (`export {…}`), never a shorthand property, and (for the
parameter) only ever called. The expected files are computed from the original by those
occurrences alone: the new name at each, or `None, ` / `undefined, ` after each call's `(`.

Our agent renames with `rename` (a preview, then apply with its version); adds the
parameter with `edit` on the definition, `references` from it (the server's uses) and one
`edit` per call line, by its text in its enclosing symbol. The plain agent is careful: it
greps the name as a word (rg -n output, all of it), then changes each line with the plain
Edit (old_string widened by a line above while not unique) — knowing exactly which
occurrences are code, its best case.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import tokenize
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL, Semantic
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

DJANGO_PARTS = ("django/utils", "django/core", "django/http")
TSCONFIG = '{ "compilerOptions": { "target": "ES2020", "module": "ES2020", "strict": true, "lib": ["es2020", "dom"] }, "include": ["**/*.ts"] }\n'


@dataclass
class Across:
    corpus: str
    kind: str  # rename | callers
    name: str
    rel: str  # the definition's file
    line: int  # the definition's line
    spans: dict[str, list[tuple[int, int]]] = field(
        default_factory=dict
    )  # file -> (line, column) of each code use

    def expected(self, texts: dict[str, str]) -> dict[str, str]:
        out = dict(texts)
        for rel, spans in self.spans.items():
            lines = texts[rel].split("\n")
            for line, column in sorted(spans, reverse=True):
                row = lines[line - 1]
                end = column + len(self.name)
                if self.kind == "rename":
                    row = row[:column] + self.name + "_renamed" + row[end:]
                elif (rel, line, column) == (self.rel, self.line, def_column(self, row)):
                    row = row[:end] + add_parameter(self.corpus, row[end:])
                elif row[end:].startswith("("):  # a call (an import stays as it is)
                    row = row[:end] + with_argument(self.corpus, row[end:])
                lines[line - 1] = row
            out[rel] = "\n".join(lines)
        return out


def with_argument(corpus: str, rest: str) -> str:
    """`(a, b)…` of a call with a first argument added (`(None, ` / `(undefined, `; at the end
    of a line, `(None,`)."""
    arg = "None" if corpus == "django" else "undefined"
    after = rest[1:]
    return "(" + arg + ("" if after.startswith(")") else "," if not after.strip() else ", ") + after


def def_column(task: Across, row: str) -> int:
    return row.index(task.name)


def add_parameter(corpus: str, rest: str) -> str:
    """`(a, b)…` of a definition with a first parameter added."""
    extra = "extra" if corpus == "django" else "extra: unknown"
    generic = re.match(r"<[^()]*>", rest)
    head = generic.group(0) if generic else ""
    rest = rest[len(head) :]
    after = rest[1:]
    return head + "(" + extra + ("" if after.startswith(")") else "," if not after.strip() else ", ") + after


# --- finding tasks ---------------------------------------------------------------------------


def python_uses(text: str, name: str) -> list[tuple[int, int]] | None:
    """(line, column) of each NAME token `name`; None when the word also occurs elsewhere
    (a string, a comment)."""
    words = [m.start() for m in re.finditer(rf"\b{re.escape(name)}\b", text)]
    if not words:
        return []
    try:
        tokens = [
            t
            for t in tokenize.generate_tokens(io.StringIO(text).readline)
            if t.type == tokenize.NAME and t.string == name
        ]
    except (tokenize.TokenError, SyntaxError):
        return None
    return [t.start for t in tokens] if len(tokens) == len(words) else None


TS_TEXT = re.compile(r"//[^\n]*|/\*.*?\*/|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`(?:[^`\\]|\\.)*`", re.S)


def ts_uses(text: str, name: str) -> list[tuple[int, int]] | None:
    words = [m.start() for m in re.finditer(rf"\b{re.escape(name)}\b", text)]
    if not words:
        return []
    blank = TS_TEXT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
    code = [m.start() for m in re.finditer(rf"\b{re.escape(name)}\b", blank)]
    if len(code) != len(words) or ("`" in text and name in "".join(re.findall(r"`[^`]*`", text, re.S))):
        return None
    starts = [0, *(m.end() for m in re.finditer("\n", text))]
    out = []
    for at in code:
        line = max(n for n, s in enumerate(starts) if s <= at)
        out.append((line + 1, at - starts[line]))
    return out


def candidates(corpus: str, root: Path, kind: str) -> list[Across]:
    files = sorted(root.rglob("*.py" if corpus == "django" else "*.ts"))
    texts = {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in files}
    definition = re.compile(r"^def (\w{6,})\(" if corpus == "django" else r"^export function (\w{6,})\b")
    found = []
    for rel, text in texts.items():
        for n, row in enumerate(text.split("\n"), 1):
            m = definition.match(row)
            if m and (task := qualify(corpus, kind, m.group(1), rel, n, texts)) is not None:
                found.append(task)
    return found


def qualify(corpus: str, kind: str, name: str, rel: str, line: int, texts: dict[str, str]) -> Across | None:
    uses = python_uses if corpus == "django" else ts_uses
    task = Across(corpus, kind, name, rel, line)
    for other, text in texts.items():
        if name not in text:
            continue
        spans = uses(text, name)
        if spans is None:
            return None
        if spans:
            task.spans[other] = spans
    total = sum(len(s) for s in task.spans.values())
    if len(task.spans) < 2 or not 3 <= total <= 12:
        return None
    if (
        sum(
            1
            for t in texts.values()
            for _ in re.finditer(rf"^(?:export )?(?:async )?(?:def|function) {name}\b", t, re.M)
        )
        != 1
    ):
        return None
    for other, spans in task.spans.items():
        rows = texts[other].split("\n")
        for n, column in spans:
            row = rows[n - 1]
            after = row[column + len(name) :]
            if re.match(r"\s*export\s*\{", row) or (
                re.search(rf"[{{,]\s*{name}\s*[,}}]", row) and "import" not in row
            ):
                return None
            if corpus == "django" and re.search(rf"\.\s*{name}\b", row[: column + len(name)]):
                return None  # module.name: a use our lexer cannot tell from another thing's attribute
            if (
                kind == "callers"
                and (other, n) != (rel, line)
                and not after.startswith("(")
                and (
                    not re.match(r"\s*(import|from)\b", row)
                    and "import {" not in row
                    and not row.lstrip().startswith(("from ", "import "))
                )
            ):
                return None  # a use that is not a call
    return task


# --- the two agents --------------------------------------------------------------------------


def servers() -> dict:
    folder = Path(
        os.environ.get("LSP_AGENT_TEST_SERVERS", Path.home() / ".cache" / "lsp-agent-ci" / "servers")
    )
    py = folder / "py" / "bin" / "basedpyright-langserver"
    ts = folder / "node" / "node_modules" / ".bin" / "typescript-language-server"
    if not py.exists() or not ts.exists():
        raise SystemExit(f"BENCH=edits needs the language servers of `make test-servers` in {folder}")
    return {"python": [str(py), "--stdio"], "typescript": [str(ts), "--stdio"]}


def ours(ctx: Context, task: Across, tool: Callable[..., dict]) -> None:
    if task.kind == "rename":
        asked = {
            "path": task.rel,
            "line": task.line,
            "column": column_of(ctx, task) + 1,
            "new_name": task.name + "_renamed",
        }
        preview = tool("rename", **asked)
        if "error" not in preview:
            tool("rename", **asked, apply=True, if_version=preview["version"])
        return
    root = ctx.workspace.roots[0]
    row = (root / task.rel).read_text(encoding="utf-8").split("\n")[task.line - 1]
    end = column_of(ctx, task) + len(task.name)
    tool(
        "edit",
        path=task.rel,
        old_text=row.strip(),
        new_text=(row[:end] + add_parameter(task.corpus, row[end:])).strip(),
    )
    found = tool("references", path=task.rel, line=task.line, column=column_of(ctx, task) + 1, roles=["call"])
    for use in found.get("references", []):
        if use["role"] != "call" or use["source"] == "name":
            continue
        text = (root / use["path"]).read_text(encoding="utf-8").split("\n")[use["line"] - 1]
        at = use["column"] - 1 + len(task.name)
        new = text[:at] + with_argument(task.corpus, text[at:])
        # the line's text, on the line references named (that is the guard: no version needed)
        tool("edit", path=use["path"], old_text=text.strip(), new_text=new.strip(), start=use["line"])


def column_of(ctx: Context, task: Across) -> int:
    row = (ctx.workspace.roots[0] / task.rel).read_text(encoding="utf-8").split("\n")[task.line - 1]
    return row.index(task.name, row.index("def " if task.corpus == "django" else "function "))


def plain(root: Path, task: Across, record: Callable, edit: Callable[[Path, str, str], bool]) -> None:
    """grep, then one Edit per line (widened while not unique), the lines changed as the
    expected files change them."""
    hits = []
    for rel in sorted(task.spans):
        for n, row in enumerate((root / rel).read_text(encoding="utf-8").split("\n"), 1):
            if re.search(rf"\b{task.name}\b", row):
                hits.append(f"{root / rel}:{n}:{row}")
    record(
        {"pattern": rf"\b{task.name}\b", "path": str(root), "output_mode": "content", "-n": True},
        "\n".join(hits),
    )
    texts = {rel: (root / rel).read_text(encoding="utf-8") for rel in task.spans}
    wanted = task.expected(texts)
    for rel in sorted(task.spans):
        old_lines, new_lines = texts[rel].split("\n"), wanted[rel].split("\n")
        for n in sorted({line for line, _ in task.spans[rel]}):
            first = n
            while True:
                current = (root / rel).read_text(encoding="utf-8").split("\n")
                old = "\n".join(current[first - 1 : n])
                new = "\n".join([*current[first - 1 : n - 1], new_lines[n - 1]])
                if old_lines[n - 1] == new_lines[n - 1] or edit(root / rel, old, new) or first <= 1:
                    break
                first -= 1


# --- running ---------------------------------------------------------------------------------


def workspace(corpus: str, source: Path, scratch: Path) -> Path:
    root = scratch / corpus
    if corpus == "django":
        for part in DJANGO_PARTS:
            shutil.copytree(source / part, root / part)
        shutil.copy(source / "django" / "__init__.py", root / "django" / "__init__.py")
    else:
        shutil.copytree(source, root, ignore=shutil.ignore_patterns("*.scip", "tsconfig*.json"))
        (root / "tsconfig.json").write_text(TSCONFIG)
    return root


def snapshot(root: Path, suffix: str) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob(f"*{suffix}"))}


def restore(ctx: Context, root: Path, original: dict[str, str]) -> None:
    """Every file back as it was (and the servers told), for the next task."""
    changed = []
    for rel, text in original.items():
        if (root / rel).read_text(encoding="utf-8") != text:
            (root / rel).write_text(text, encoding="utf-8")
            changed.append(root / rel)
    Semantic(ctx.workspace, ctx.settings).written(changed)


def context(root: Path) -> Context:
    settings = Settings().replace(semantic_servers=servers(), semantic_timeout=60.0)
    return Context(Workspace([root]), settings)


def warm(ctx: Context, task: Across) -> None:
    """Start the server and wait until it no longer says it may be incomplete."""
    for _ in range(240):
        answer = call(
            ctx, "references", {"path": task.rel, "line": task.line, "column": column_of(ctx, task) + 1}
        )
        if (
            not answer.get("semantic", {}).get("partial")
            and "semantic" in answer
            and "unavailable" not in answer["semantic"]
        ):
            return
        ctx.cancel_event.wait(0.5)


def stop() -> None:
    POOL.stop_all()
