"""search: speed against plain `rg --json` (the floor) and Serena's `search_for_pattern`, and
how many matches each answer locates with its enclosing symbol at the same budget.

    python -m benchmarks.bench_search        (or: make bench BENCH=search)

Corpora: Django 5.2.8's sdist (PyPI) and a copy of this interpreter's standard library
(Serena writes a .serena folder into the project it searches, so it gets a copy). Serena
(PyPI `serena-agent`) is installed into its own virtual environment under
benchmarks/.cache and its tool class is called directly, with no language server
(benchmarks/serena_runner.py). Each figure is the median of REPEAT runs after one warm-up.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.common import CACHE, OUT, Report, django_tree, median, stdlib, timed
from lsp_agent.search import Query, Target, find_rg, run_search
from lsp_agent.search.chain import MIN_WIDTH, Search, render
from lsp_agent.tools import Context, call
from lsp_agent.tools.search import symbol_provider
from lsp_agent.workspace import Workspace

REPEAT = 5
SERENA_REPEAT = 3
BUDGET = 20_000  # the default max_chars, and Serena's max_answer_chars in the comparison
SERENA_VENV = CACHE / "serena-venv"
PATTERNS = {
    "django": [("rare", "get_deferred_fields"), ("common", "queryset"), ("very common", "self")],
    "stdlib": [("rare", "getpreferredencoding"), ("common", "import os"), ("very common", "self")],
}


def stdlib_copy() -> Path:
    target = CACHE / "stdlib"
    if not target.is_dir():
        shutil.copytree(
            stdlib(), target, ignore=shutil.ignore_patterns("site-packages", "__pycache__"), symlinks=True
        )
    return target


def serena_python() -> Path:
    python = SERENA_VENV / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(SERENA_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", "serena-agent==2.1.0"], check=True)
    return python


def run_serena(root: Path, patterns: list[str]) -> dict[str, dict]:
    job = {"root": str(root), "budget": BUDGET, "patterns": patterns, "repeat": SERENA_REPEAT + 1}
    done = subprocess.run(
        [str(serena_python()), str(Path(__file__).with_name("serena_runner.py"))],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        check=True,
    )
    answers = {}
    for line in done.stdout.splitlines():
        result = json.loads(line)
        result["seconds"] = result["seconds"][1:]  # the first call also gathers its ignore rules
        answers[result["pattern"]] = result
    return answers


def plain_rg(root: Path, pattern: str) -> None:
    subprocess.run(
        [find_rg(), "--json", pattern, "./"],
        cwd=root,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def ours(root: Path, pattern: str) -> dict:
    return call(Context(Workspace([root])), "search", {"pattern": pattern, "max_chars": BUDGET})


# --- what an answer locates ---------------------------------------------------------------------


NOTES = ("more:", "binary files", "left out:", "no matches", "(hidden files")
MATCH = re.compile(r"(\d+)(?:-\d+)?(?: ([^:\s]+))?(?::.*)?", re.DOTALL)  # "12[ Symbol][:text]"
RUN = re.compile(r"(\S+): (\d+(?:-\d+)?(?:, \d+(?:-\d+)?)*)$")  # stage 5 "path: 3, 7-9"


def count(numbers: str) -> int:
    total = 0
    for n in numbers.split(", "):
        a, _, b = n.partition("-")
        total += int(b or a) - int(a) + 1
    return total


def located(text: str, stage: int) -> tuple[int, int]:
    """(matches placed inside a named definition, matches given a line number) by an answer.
    Stages 1-4 write a match `LINE[ SYMBOL][:TEXT]`, the symbol named when it changes."""
    with_symbol = lines = 0
    label = None
    for line in text.split("\n")[1:]:  # after the header
        if line.startswith(NOTES):
            continue
        if stage <= 4 and (m := MATCH.fullmatch(line)):
            label = m.group(2) or label
            lines += 1
            with_symbol += label not in (None, "<module>")
        elif stage == 5 and (m := RUN.fullmatch(line)):
            lines += count(m.group(2))
        elif not re.match(r"\d+-|--$", line):
            label = None  # a file heading: its first matches are outside every symbol
    return with_symbol, lines


def serena_located(text: str) -> tuple[str, int]:
    """(which of Serena's shortenings, matches it gives a line number for)."""
    if text.startswith("The answer is too long"):
        text = text.split("\n", 1)[1]  # the notice before a shortened answer
    if text.startswith("Found "):
        return "summary", 0
    data = json.loads(text[text.index("{") :])
    if "Match counts per file" in text:
        return "counts per file", 0
    if "Match lines per file" in text:
        return "line numbers", sum(len(v) for v in data.values())
    if "truncated" in text.split("\n", 1)[0]:
        return "first lines, cut", sum(len(v) for v in data.values())
    if text.startswith("Matched lines per file"):
        return "first lines", sum(len(v) for v in data.values())
    return "full matches", sum(
        1 for v in data.values() for block in v for line in block.split("\n") if line.startswith("  >")
    )


# --- the Message777 figures (README) ----------------------------------------------------------------


def message_figures(root: Path) -> list[tuple[int, int, int]]:
    """(stage, characters, matches located with their symbol per 10,000 characters) for the
    overflow case: 1,300 classes MessageN each holding the same matched line."""
    lines = []
    for n in range(1, 1301):
        lines += [
            f"class Message{n}:",
            "    def __init__(self):",
            f"        self.id = {n}",
            "",
            "    def to_dict(self):",
            '        return {"id": self.id, "kind": "message"}',
            "",
            "",
        ]
    root.mkdir(parents=True, exist_ok=True)
    (root / "messages.py").write_text("\n".join(lines))
    ws = Workspace([root])
    pattern = 'return {"id": self.id'
    found = run_search(ws, Query(pattern, fixed_strings=True), [Target(ws.roots[0], [""])])
    s = Search(found, symbol_provider(ws))
    rows = []
    for stage in range(1, 8):
        text = render(s, stage, MIN_WIDTH if stage == 3 else None)[0]
        rows.append((stage, len(text), round(located(text, stage)[0] / len(text) * 10_000)))
    return rows


def chart(rows: list[tuple[str, float, float, float]]) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib missing: no chart; `pip install -e '.[bench]'`)")
        return None
    labels = [r[0] for r in rows]
    fig, ax = plt.subplots(figsize=(10, 5.2))
    width = 0.27
    for i, (name, color) in enumerate(
        (("rg --json", "#999999"), ("lsp-agent search", "#4a7ab5"), ("Serena search_for_pattern", "#d08040"))
    ):
        ax.bar(
            [x + (i - 1) * width for x in range(len(rows))],
            [r[i + 1] * 1000 for r in rows],
            width,
            label=name,
            color=color,
        )
    ax.set_yscale("log")
    ax.set_ylabel("median milliseconds (log scale)")
    ax.set_xticks(range(len(rows)), labels, rotation=20, ha="right")
    ax.set_title(f"search at a {BUDGET:,}-character budget: Django 5.2.8 and the Python stdlib")
    ax.legend(ncol=3, loc="upper center", bbox_to_anchor=(0.5, -0.32), frameon=False)
    fig.tight_layout()
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / "search.png"
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main() -> None:
    if find_rg() is None:
        raise SystemExit("no rg found: install the ripgrep wheel (make venv)")
    corpora = {"django": django_tree(), "stdlib": stdlib_copy()}
    speed = Report(
        "search",
        f"search: median seconds, plain rg --json vs lsp-agent vs Serena (budget {BUDGET:,} characters)",
        [
            "corpus",
            "pattern",
            "kind",
            "matches",
            "rg",
            "ours",
            "ours cold",
            "ours/rg",
            "serena",
            "serena/ours",
            "target",
        ],
    )
    where = Report(
        "search_located",
        f"search: matches each answer locates at a {BUDGET:,}-character budget",
        [
            "corpus",
            "pattern",
            "matches",
            "our stage",
            "ours: with symbol",
            "ours: line",
            "serena's stage",
            "serena: line",
            "serena: with symbol",
        ],
    )
    bars = []
    for corpus, root in corpora.items():
        patterns = PATTERNS[corpus]
        serena = run_serena(root, [p for _, p in patterns])
        for kind, pattern in patterns:
            started = time.perf_counter()
            answer = ours(root, pattern)  # the first call parses the files it shows symbols for
            cold = time.perf_counter() - started
            rg_s = median(timed(lambda root=root, pattern=pattern: plain_rg(root, pattern), REPEAT))
            ours_s = median(timed(lambda root=root, pattern=pattern: ours(root, pattern), REPEAT))
            serena_s = median(serena[pattern]["seconds"])
            ratio = ours_s / rg_s
            limit = {"rare": 1.5, "very common": 3.0}.get(kind)
            target = "n/a" if limit is None else f"≤{limit}× rg: {'met' if ratio <= limit else 'MISSED'}"
            target += f"; ≥10× Serena: {'met' if serena_s / ours_s >= 10 else 'MISSED'}"
            speed.add(
                corpus,
                pattern,
                kind,
                answer["total_matches"],
                rg_s,
                ours_s,
                cold,
                round(ratio, 2),
                serena_s,
                round(serena_s / ours_s, 1),
                target,
            )
            stage, text = answer["stage"], answer["text"]
            serena_stage, serena_lines = serena_located(serena[pattern]["text"])
            with_symbol, lines = located(text, stage)
            where.add(
                corpus,
                pattern,
                answer["total_matches"],
                f"{stage}: {answer['stage_name']}",
                with_symbol,
                lines,
                serena_stage,
                serena_lines,
                0,
            )
            bars.append((f"{corpus}: {pattern}", rg_s, ours_s, serena_s))
    speed.note(
        f"{REPEAT} runs each after a warm-up (Serena: {SERENA_REPEAT}); 'ours cold' is the first call, "
        "which also parses the files whose symbols it shows. Machine: 2 shared cores."
    )
    png = chart(bars)
    if png:
        speed.note(f"![search timings]({png.name})")
    speed.write()
    where.note(
        "'with symbol': matches the answer places inside a named definition (Class/method); Serena's answers "
        "never name one. 'line': matches given a line number."
    )
    where.write()
    figures = Report(
        "search_message777",
        "The overflow case: 1,300 classes MessageN holding the same matched line",
        ["stage", "characters", "located with symbol per 10,000 chars"],
    )
    for row in message_figures(CACHE / "message777"):
        figures.add(*row)
    figures.write()


if __name__ == "__main__":
    main()
