"""tasks: navigation tasks on Django 5.2.8 and rxjs 7.8.2, each solved three ways by a scripted
agent — through lsp-agent's tools, through a plain Read/Grep/Glob toolset (emulated with
ripgrep and line ranges, with the limits coding agents ship: Read 2,000 lines a call, Grep
250 result lines a call, Glob 100 files), and through Serena 2.1's tools — counting calls
and the characters each toolset returned.

Each agent follows only what the answers give it: our `next` (the arguments the text says
to call with), a Grep hit's path and line, the offset of the rest. A task is reached when
the facts it asks for (found independently: Python's ast on Django, plain text on rxjs)
all appear in what the agent was shown.

Corpora come from the registries (PyPI's sdist of Django, npm's rxjs package) into
benchmarks/.cache; Serena runs in its own virtual environment with its language servers
(benchmarks/serena_tasks_runner.py). `SERENA=0` leaves Serena out.
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from lsp_agent.search import find_rg
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

from .common import CACHE, Report, django_tree, rxjs_tree

BUDGET = 20_000  # our default max_chars; Serena's default max_answer_chars is larger
GREP_LINES = 250
GLOB_FILES = 100
READ_LINES = 2000
READ_LINE_WIDTH = 2000


# --- the three toolsets ------------------------------------------------------------------------


@dataclass
class Toolset:
    root: Path
    calls: int = 0
    chars: int = 0
    seen: list[str] = field(default_factory=list)

    def record(self, text: str) -> str:
        self.calls += 1
        self.chars += len(text)
        self.seen.append(text)
        return text

    def reset(self) -> None:
        self.calls, self.chars, self.seen = 0, 0, []


class Ours(Toolset):
    name = "lsp-agent"

    def __init__(self, root: Path):
        super().__init__(root)
        self.ctx = Context(Workspace([root]))

    def __call__(self, tool: str, **arguments) -> dict:
        answer = call(self.ctx, tool, arguments)
        self.record(answer["text"])
        return answer

    def follow(self, tool: str, **arguments) -> list[dict]:
        """Call, then call again with each answer's `next` until there is none."""
        answers = [self(tool, **arguments)]
        while answers[-1].get("next"):
            answers.append(self(tool, **{**arguments, **answers[-1]["next"]}))
        return answers


class Plain(Toolset):
    """Read, Grep and Glob as coding agents ship them, emulated with ripgrep."""

    name = "Read/Grep/Glob"

    def rg(self, *args: str) -> list[str]:
        done = subprocess.run([find_rg() or "rg", *args], cwd=self.root, capture_output=True, text=True)
        return done.stdout.splitlines()

    def grep(
        self, pattern: str, path: str = ".", mode: str = "content", after: int = 0, offset: int = 0
    ) -> str:
        args = ["--sort", "path", "-e", pattern, path]
        if mode == "content":
            args = ["-n", "-H", "--no-heading", *(["-A", str(after)] if after else []), *args]
        elif mode == "files":
            args = ["-l", *args]
        else:
            args = ["-c", *args]
        lines = self.rg(*args)
        shown = lines[offset : offset + GREP_LINES]
        text = "\n".join(shown) if shown else "No matches found"
        if mode == "files":
            text = f"Found {len(lines)} files\n" + text
        if offset + GREP_LINES < len(lines):
            text += f"\n[Showing results with pagination = limit: {GREP_LINES}, offset: {offset}]"
        return self.record(text)

    def grep_all(self, pattern: str, path: str = ".") -> list[str]:
        """Grep, then the next pages while the answer says there are more."""
        hits: list[str] = []
        offset = 0
        while True:
            text = self.grep(pattern, path, offset=offset)
            hits += [h for h in text.splitlines() if not h.startswith("[Showing")]
            if "[Showing results" not in text:
                return hits
            offset += GREP_LINES

    def glob(self, pattern: str, path: str = ".") -> str:
        files = self.rg("--files", "--sort", "path", "--glob", pattern, path)
        text = "\n".join(files[:GLOB_FILES]) or "No files found"
        if len(files) > GLOB_FILES:
            text += "\n(Results are truncated. Consider using a more specific path or pattern.)"
        return self.record(text)

    def read(self, path: str, offset: int = 1, limit: int = READ_LINES) -> str:
        lines = (self.root / path).read_text(errors="replace").splitlines()
        chosen = lines[offset - 1 : offset - 1 + min(limit, READ_LINES)]
        return self.record(
            "\n".join(f"{offset + i:6}\t{line[:READ_LINE_WIDTH]}" for i, line in enumerate(chosen))
        )


class Serena(Toolset):
    """Serena's tools served by benchmarks/serena_tasks_runner.py in Serena's own venv."""

    name = "Serena"

    def __init__(self, root: Path, corpus: str):
        super().__init__(root)
        from .bench_search import serena_python

        python = serena_python()
        copy = CACHE / "serena-projects" / corpus
        if not copy.is_dir():  # Serena writes a .serena folder into its project
            shutil.copytree(root, copy)
            project = root.parent / "tsconfig.json"
            if project.is_file():  # the package's TypeScript project, for the sources alone
                (copy / "tsconfig.json").write_text(project.read_text().replace("./src/", "./"))
        env = {
            **os.environ,
            "PATH": f"{python.parent}{os.pathsep}{os.environ['PATH']}",
            "UVX": str(uvx_shim(python)),
            "SSL_CERT_FILE": "/etc/ssl/certs/ca-certificates.crt",
            "UV_SYSTEM_CERTS": "1",
        }
        self.process = subprocess.Popen(
            [str(python), str(Path(__file__).with_name("serena_tasks_runner.py"))],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        self.send({"root": str(copy)})

    def send(self, message: dict) -> dict:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()
        return json.loads(self.process.stdout.readline())

    def __call__(self, tool: str, **arguments) -> str:
        return self.record(self.send({"tool": tool, "args": arguments})["text"])

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:  # its language servers can keep it waiting
            self.process.kill()
            self.process.wait()


def uvx_shim(python: Path) -> Path:
    """Serena runs its Python language server (pyright) with `uvx -p 3.13`, and uv would
    download that interpreter from GitHub, which this machine cannot reach: the shim runs
    it with the Python of Serena's venv instead."""
    shim = CACHE / "uvx-shim"
    shim.write_text(f'#!/bin/sh\n[ "$1" = "-p" ] && shift 2\nexec {python.parent}/uvx -p {python} "$@"\n')
    shim.chmod(0o755)
    return shim


# --- facts found independently ---------------------------------------------------------------


@dataclass
class Definition:
    path: str
    line: int
    end: int
    first: str  # its first line, stripped
    last: str  # its last line, stripped


def python_definitions(root: Path, path: str) -> dict[str, Definition]:
    """Name path -> definition, from Python's ast."""
    source = (root / path).read_text()
    lines = source.splitlines()
    found: dict[str, Definition] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = prefix + child.name
                end = child.end_lineno or child.lineno
                found[name] = Definition(
                    path, child.lineno, end, lines[child.lineno - 1].strip(), lines[end - 1].strip()
                )
                visit(child, name + "/")

    visit(ast.parse(source), "")
    return found


def python_calls(root: Path, name: str) -> list[tuple[str, int, str]]:
    """(path, line, enclosing function) of every call of `name` (bare or as an attribute)."""
    calls = []
    for file in sorted(root.rglob("*.py")):
        rel = file.relative_to(root).as_posix()
        try:
            tree = ast.parse(file.read_text())
        except (SyntaxError, UnicodeDecodeError):
            continue

        def visit(node: ast.AST, owner: str, rel: str) -> None:
            for child in ast.iter_child_nodes(node):
                inner = (
                    child.name
                    if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                    else owner
                )
                if isinstance(child, ast.Call):
                    func = child.func
                    called = (
                        func.attr
                        if isinstance(func, ast.Attribute)
                        else func.id
                        if isinstance(func, ast.Name)
                        else None
                    )
                    if called == name:
                        calls.append((rel, func.end_lineno or child.lineno, owner))
                visit(child, inner, rel)

        visit(tree, "", rel)
    return sorted(set(calls))


def python_subclasses(root: Path, base: str, folder: str) -> set[str]:
    """Classes under `folder` inheriting from `base`, directly or through each other."""
    bases: dict[str, set[str]] = {}
    for file in (root / folder).rglob("*.py"):
        for node in ast.walk(ast.parse(file.read_text())):
            if isinstance(node, ast.ClassDef):
                names = {b.attr if isinstance(b, ast.Attribute) else getattr(b, "id", "") for b in node.bases}
                bases.setdefault(node.name, set()).update(names)
    found, frontier = set(), {base}
    while frontier:
        new = {c for c, b in bases.items() if b & frontier} - found
        found |= new
        frontier = new
    return found


TS_CLASS = re.compile(r"class\s+(\w+)(?:<[^{]*?>)?\s+extends\s+(\w+)")


def ts_subclasses(root: Path, base: str) -> set[str]:
    pairs = [m.groups() for f in root.rglob("*.ts") for m in TS_CLASS.finditer(f.read_text())]
    found, frontier = set(), {base}
    while frontier:
        new = {c for c, b in pairs if b in frontier} - found
        found |= new
        frontier = new
    return found


def ts_calls(root: Path, name: str) -> list[tuple[str, int]]:
    """(path, line) of each call of `name` in code (not its definition, comments or imports)."""
    call_re = re.compile(rf"(?<![\w$.]){re.escape(name)}\s*(?:<[^()]*>)?\(|\.{re.escape(name)}\s*\(")
    found = []
    for file in sorted(root.rglob("*.ts")):
        rel = file.relative_to(root).as_posix()
        for n, line in enumerate(file.read_text().splitlines(), 1):
            code = line.split("//")[0]
            if code.lstrip().startswith(("*", "/*")) or re.search(rf"function\s+{re.escape(name)}\b", code):
                continue
            if call_re.search(code):
                found.append((rel, n))
    return found


def ts_definition(root: Path, path: str, header: str, which: int = 0) -> Definition:
    """The definition starting with the (which-th) line matching `header`, to its closing
    brace (which=-1: the last, an overloaded function's implementation)."""
    lines = (root / path).read_text().splitlines()
    start = [n for n, line in enumerate(lines) if re.search(header, line)][which]
    depth, seen = 0, False
    for n in range(start, len(lines)):
        depth += lines[n].count("{") - lines[n].count("}")
        seen = seen or "{" in lines[n]
        if seen and depth <= 0:  # its last line that says more than a closing brace
            last = next(lines[k].strip() for k in range(n, start, -1) if lines[k].strip().strip("});"))
            return Definition(path, start + 1, n + 1, lines[start].strip(), last)
    raise ValueError(header)


def use_line(root: Path, path: str, name: str) -> tuple[int, int, str]:
    """(line, column, text) of the first use of `name` in `path` that is not its import."""
    for n, line in enumerate((root / path).read_text().splitlines(), 1):
        if re.search(rf"\b{name}\(", line) and "import" not in line:
            return n, line.index(name) + 1, line
    raise ValueError(name)


def mentions(seen: list[str], *facts: str) -> bool:
    text = "\n".join(seen)
    return all(fact in text for fact in facts)


def line_mentioned(seen: list[str], path: str, line: int) -> bool:
    """A path and a line number of it appear together: `path:12:`, a heading then `12 `, or JSON."""
    text = "\n".join(seen)
    if f"{path}:{line}:" in text or f"{path}:{line}-" in text:
        return True
    at = text.find(path)
    while at != -1:
        window = text[at : at + 60_000]
        block = window.split("\n\n")[0] if "\n\n" in window else window
        if re.search(rf"(?m)^\s*{line}\b|\b{line}(?:, |\s|$)|> *{line - 1}:", block):  # Serena counts from 0
            return True
        at = text.find(path, at + 1)
    return False


# --- the tasks -----------------------------------------------------------------------------------


@dataclass
class Task:
    corpus: str
    name: str
    ask: str
    ours: Callable[[Ours], None]
    plain: Callable[[Plain], None]
    serena: Callable[[Serena], None]
    reached: Callable[[list[str]], bool]


def first_hit(text: str) -> tuple[str, int]:
    path, line, _ = text.splitlines()[0].split(":", 2)
    return path, int(line)


def body_task(corpus: str, name_path: str, path: str, fact: Definition, header: str) -> Task:
    def plain(t: Plain) -> None:
        hit_path, line = first_hit(t.grep(header, path))
        t.read(hit_path, offset=line)

    return Task(
        corpus, f"body {name_path}", f"Show the source of {name_path} in {path}.",
        lambda t: t.follow("find_symbol", name_path=name_path, path=path, include_body=True),
        plain,
        lambda t: t("find_symbol", name_path_pattern=name_path, relative_path=path, include_body=True),
        lambda seen: mentions(seen, fact.first, fact.last),
    )  # fmt: skip


def definition_task(corpus: str, root: Path, path: str, name: str, fact: Definition, keyword: str) -> Task:
    line, column, text = use_line(root, path, name)
    # Serena's find_declaration wants a regex matching once: the line before and the use's
    # line (a file may repeat a line), the name a group
    before = (root / path).read_text().splitlines()[line - 2].strip()
    use = re.escape(text.strip()).replace(re.escape(name), f"({re.escape(name)})", 1)
    regex = rf"{re.escape(before)}\s*{use}"

    def plain(t: Plain) -> None:
        hits = [h for h in t.grep(rf"{keyword}\s+{name}\b").splitlines() if h.count(":") >= 2]
        if len(hits) > 1:  # several: the file's import says which module to look in
            imported = t.grep(rf"import.*\b{name}\b", path).splitlines()[0].split(":", 2)[-1]
            words = set(re.findall(r"\w+", imported.split("import")[0] + imported.rsplit("from", 1)[-1])) - {
                "from",
                "import",
            }
            hits.sort(key=lambda h: -sum(w in h.split(":", 1)[0] for w in words))
        hit_path, hit_line = first_hit(hits[0])
        t.read(hit_path, offset=hit_line)

    return Task(
        corpus, f"definition {name}", f"{name} used at {path}:{line}: show its definition.",
        lambda t: t.follow("definition", path=path, line=line, column=column),
        plain,
        lambda t: t("find_declaration", relative_path=path, regex=regex, include_body=True),
        lambda seen: mentions(seen, fact.path, fact.first, fact.last),
    )  # fmt: skip


def callers_task(
    corpus: str, name: str, def_path: str, owner: str | None, calls: list[tuple], enclosing: str
) -> Task:
    def plain(t: Plain) -> None:
        hits = t.grep_all(rf"\b{name}\(")
        for path in dict.fromkeys(h.split(":", 1)[0] for h in hits if ":" in h):
            t.grep_all(enclosing, path)  # the definitions of the file, to place each call

    def serena(t: Serena) -> None:
        t("find_referencing_symbols", name_path=f"{owner}/{name}" if owner else name, relative_path=def_path)

    return Task(
        corpus, f"callers {name}", f"Every call of {name} in code, with its enclosing function.",
        lambda t: t.follow("references", name=f"{owner}/{name}" if owner else name, roles=["call"]),
        plain,
        serena,
        lambda seen: all(line_mentioned(seen, c[0], c[1]) for c in calls)
        and all(mentions(seen, c[2]) for c in calls if len(c) > 2 and c[2]),
    )  # fmt: skip


def subclasses_task(
    corpus: str, base: str, folder: str, expected: set[str], pattern: Callable[[set[str]], str]
) -> Task:
    def rounds(search: Callable[[str], str]) -> None:
        known: set[str] = set()
        frontier = {base}
        while frontier:
            text = search(pattern(frontier))
            found = set(re.findall(r"class\s+(\w+)", text)) - known - {base}
            known |= found
            frontier = found

    return Task(
        corpus, f"subclasses {base}", f"Every class under {folder} inheriting from {base}, directly or not.",
        lambda t: t.follow("find_symbol", extends=base, path=folder),
        lambda t: rounds(lambda p: t.grep(p, folder)),
        lambda t: rounds(lambda p: t("search_for_pattern", substring_pattern=p, relative_path=folder)),
        lambda seen: mentions(seen, *(f"class {c}" for c in expected)),
    )  # fmt: skip


def files_task(corpus: str, root: Path, folder: str) -> Task:
    counts = {
        f.relative_to(root).as_posix(): len(f.read_text(errors="replace").splitlines())
        for f in (root / folder).rglob("*")
        if f.is_file()
    }
    longest = max(counts, key=lambda p: counts[p])
    return Task(
        corpus, f"files {folder}", f"The files under {folder} with their line counts; the longest.",
        lambda t: t.follow("list_files", path=folder),
        lambda t: t.grep("^", folder, mode="count"),
        lambda t: t("list_dir", relative_path=folder, recursive=True),
        lambda seen: mentions(seen, *(p for p, n in counts.items() if n))
        and (mentions(seen, f"{longest}:{counts[longest]}") or mentions(seen, f"{longest}  {counts[longest]:,} lines")),
    )  # fmt: skip


def read_task(corpus: str, root: Path, paths: list[str]) -> Task:
    heads = [line.strip() for p in paths for line in (root / p).read_text().splitlines()[:40] if line.strip()]
    return Task(
        corpus, f"read {len(paths)} files", f"Read the beginning (40 lines) of {', '.join(paths)}.",
        lambda t: t("read", path=paths[0], paths=paths[1:]),
        lambda t: [t.read(p) for p in paths],
        lambda t: [t("read_file", relative_path=p) for p in paths],
        lambda seen: mentions(seen, *heads),
    )  # fmt: skip


def plain_text(seen: list[str]) -> str:
    """What the agent was shown, with Markdown escapes and line breaks taken out."""
    return " ".join(re.sub(r"\\+_", "_", "\n".join(seen)).split())


def signature_task(corpus: str, name: str, params: list[str], doc: str, keyword: str) -> Task:
    return Task(
        corpus, f"signature {name}", f"The parameters of {name} and the first line of its doc.",
        lambda t: t("definition", name=name, body=False),
        lambda t: t.grep(rf"{keyword}\s+{name}\b", after=4),
        lambda t: t("find_symbol", name_path_pattern=name, include_info=True),
        lambda seen: all(word in plain_text(seen) for word in [name, *params, doc]),
    )  # fmt: skip


PY_ENCLOSING = r"^\s*(?:async\s+)?(?:def|class)\s+\w+"
TS_ENCLOSING = r"^\s*(?:export\s+)?(?:function|class)\s+\w+|^\s+(?:public\s+|protected\s+|private\s+)?\w+\(.*\)\s*(?::.*)?\{"


def django_tasks(root: Path) -> list[Task]:
    base = python_definitions(root, "django/db/models/base.py")
    query = python_definitions(root, "django/db/models/query.py")
    shortcuts = python_definitions(root, "django/shortcuts.py")
    urls = python_definitions(root, "django/urls/base.py")
    py_class = lambda names: r"class\s+\w+\((?:[^)]*[,\s.])?(?:" + "|".join(sorted(names)) + r")\b"  # noqa: E731
    return [
        body_task("django", "get_object_or_404", "django/shortcuts.py", shortcuts["get_object_or_404"], r"def get_object_or_404\b"),
        body_task("django", "Model/full_clean", "django/db/models/base.py", base["Model/full_clean"], r"def full_clean\b"),
        body_task("django", "QuerySet/filter", "django/db/models/query.py", query["QuerySet/filter"], r"def filter\b"),
        definition_task("django", root, "django/contrib/flatpages/views.py", "get_object_or_404", shortcuts["get_object_or_404"], "def"),
        definition_task("django", root, "django/contrib/admin/models.py", "reverse", urls["reverse"], "def"),
        callers_task("django", "full_clean", "django/db/models/base.py", "Model", python_calls(root, "full_clean"), PY_ENCLOSING),
        callers_task("django", "clean_fields", "django/db/models/base.py", "Model", python_calls(root, "clean_fields"), PY_ENCLOSING),
        callers_task("django", "get_object_or_404", "django/shortcuts.py", None, python_calls(root, "get_object_or_404"), PY_ENCLOSING),
        subclasses_task("django", "Field", "django/db/models", python_subclasses(root, "Field", "django/db/models"), py_class),
        subclasses_task("django", "BaseCommand", "django/core", python_subclasses(root, "BaseCommand", "django/core"), py_class),
        files_task("django", root, "django/db/backends/sqlite3"),
        read_task("django", root, ["django/shortcuts.py", "django/urls/base.py"]),
        signature_task("django", "slugify", ["value", "allow_unicode"], "Convert to ASCII if 'allow_unicode' is False", "def"),
    ]  # fmt: skip


def rxjs_tasks(root: Path) -> list[Task]:
    ts_class = lambda names: r"class\s+\w+(?:<[^{]*?>)?\s+extends\s+(?:" + "|".join(sorted(names)) + r")\b"  # noqa: E731
    merge_map = ts_definition(
        root, "internal/operators/mergeMap.ts", r"^export function mergeMap<T, R, O", which=-1
    )
    operate = ts_definition(root, "internal/util/lift.ts", r"^export function operate")
    create = ts_definition(
        root, "internal/operators/OperatorSubscriber.ts", r"^export function createOperatorSubscriber"
    )
    subject_next = ts_definition(root, "internal/Subject.ts", r"^  next\(value: T\)")
    return [
        body_task("rxjs", "mergeMap", "internal/operators/mergeMap.ts", merge_map, r"function mergeMap\b"),
        body_task("rxjs", "Subject/next", "internal/Subject.ts", subject_next, r"^\s+next\("),
        definition_task("rxjs", root, "internal/operators/map.ts", "operate", operate, "function"),
        definition_task("rxjs", root, "internal/operators/filter.ts", "createOperatorSubscriber", create, "function"),
        callers_task("rxjs", "createOperatorSubscriber", "internal/operators/OperatorSubscriber.ts", None, ts_calls(root, "createOperatorSubscriber"), TS_ENCLOSING),
        callers_task("rxjs", "isFunction", "internal/util/isFunction.ts", None, ts_calls(root, "isFunction"), TS_ENCLOSING),
        subclasses_task("rxjs", "Subject", ".", ts_subclasses(root, "Subject"), ts_class),
        subclasses_task("rxjs", "Subscriber", ".", ts_subclasses(root, "Subscriber"), ts_class),
        files_task("rxjs", root, "internal/scheduler"),
        read_task("rxjs", root, ["internal/operators/map.ts", "internal/operators/filter.ts"]),
        signature_task("rxjs", "pipe", ["...fns: Array<UnaryFunction<any, any>>"], "UnaryFunction<any, any>", "function"),
    ]  # fmt: skip


# --- the acceptance checks on Django ---------------------------------------------------


def code_lines(root: Path, name: str) -> set[tuple[str, int]]:
    """Lines `rg -w NAME` finds where Python's tokenizer sees the name as code (a NAME token,
    not inside a comment or a string)."""
    import io
    import tokenize

    found = subprocess.run(
        [find_rg() or "rg", "-w", "-n", "--no-heading", name], cwd=root, capture_output=True, text=True
    ).stdout.splitlines()
    lines = {(p, int(n)) for p, n, _ in (row.split(":", 2) for row in found) if p.endswith(".py")}
    code = set()
    for path in {p for p, _ in lines}:
        tokens = tokenize.generate_tokens(io.StringIO((root / path).read_text()).readline)
        code |= {(path, t.start[0]) for t in tokens if t.type == tokenize.NAME and t.string == name}
    return lines & code


def acceptance(root: Path) -> list[str]:
    ours = Ours(root)
    refs = ours("references", name="full_clean", max_chars=10**7)["references"]
    found = {(r["path"], r["line"]) for r in refs if r["role"] not in ("comment", "string")}
    missing = code_lines(root, "full_clean") - found
    top_level = [r for r in refs if r["role"] not in ("comment", "string", "text") and not r["symbol"]]
    line, column, _ = use_line(root, "django/contrib/flatpages/views.py", "get_object_or_404")
    target = ours("definition", path="django/contrib/flatpages/views.py", line=line, column=column)
    lands = target["definitions"][0]["path"] if target["definitions"] else None
    return [
        f"acceptance: references full_clean finds every code line `rg -w full_clean` finds "
        f"({'met' if not missing else f'MISSED {len(missing)}'}: {len(found)} code uses), each with its enclosing "
        f"symbol ({len(found) - len(top_level)} inside a definition, {len(top_level)} at module level, shown as <module>)",
        f"acceptance: definition of get_object_or_404 from django/contrib/flatpages/views.py:{line} lands on "
        f"{lands} ({'met' if lands == 'django/shortcuts.py' else 'MISSED'})",
    ]


# --- running and reporting ---------------------------------------------------------------------


def run(task: Task, toolset: Toolset, solve: Callable) -> tuple[bool, int, int]:
    toolset.reset()
    try:
        solve(toolset)
    except Exception as exc:  # a scripted agent that cannot go on has not reached the task
        toolset.seen.append(f"(agent stopped: {exc})")
        return False, toolset.calls, toolset.chars
    return task.reached(toolset.seen), toolset.calls, toolset.chars


def main() -> None:
    with_serena = os.environ.get("SERENA", "1") != "0"
    corpora = {"django": (django_tree(), django_tasks), "rxjs": (rxjs_tree(), rxjs_tasks)}
    columns = ["task", "ours: reached", "calls", "chars", "plain: reached", "calls", "chars"]
    if with_serena:
        columns += ["serena: reached", "calls", "chars"]
    report = Report("tasks", "tasks: navigation tasks, calls and characters per toolset", columns)
    totals = {"ours": [0, 0, 0], "plain": [0, 0, 0], "serena": [0, 0, 0]}
    fewer_calls = 0
    count = 0
    for corpus, (root, make) in corpora.items():
        tasks = make(root)
        ours, plain = Ours(root), Plain(root)
        serena = Serena(root, corpus) if with_serena else None
        for task in tasks:
            count += 1
            row: list[object] = [f"{corpus}: {task.name}"]
            results = {"ours": run(task, ours, task.ours), "plain": run(task, plain, task.plain)}
            if serena is not None:
                results["serena"] = run(task, serena, task.serena)
            for key, (ok, calls, chars) in results.items():
                row += ["yes" if ok else "NO", calls, chars]
                totals[key][0] += ok
                totals[key][1] += calls
                totals[key][2] += chars
            fewer_calls += results["ours"][1] < results["plain"][1]
            report.add(*row)
        if serena is not None:
            serena.close()
    total_row: list[object] = ["total"]
    for key in ("ours", "plain", "serena") if with_serena else ("ours", "plain"):
        total_row += [f"{totals[key][0]}/{count}", totals[key][1], totals[key][2]]
    report.add(*total_row)
    ratio = totals["ours"][2] / max(totals["plain"][2], 1)
    report.note(
        f"goal: every task reached ({'met' if totals['ours'][0] == count else 'MISSED'}: {totals['ours'][0]}/{count}); "
        f"fewer calls than the plain toolset on every task ({'met' if fewer_calls == count else 'MISSED'}: {fewer_calls}/{count}); "
        f"at most 0.6× its characters in total ({'met' if ratio <= 0.6 else 'MISSED'}: {ratio:.2f}×)"
    )
    report.note(
        f"plain toolset: Read {READ_LINES:,} lines a call, Grep {GREP_LINES} result lines a call, Glob {GLOB_FILES} files; "
        f"ours at the default budget of {BUDGET:,} characters; Serena 2.1 at its defaults, with its language servers."
    )
    for line in acceptance(corpora["django"][0]):
        report.note(line)
    report.write()


if __name__ == "__main__":
    main()
