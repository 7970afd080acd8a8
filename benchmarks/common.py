"""Shared benchmark plumbing: corpora from the registries (downloaded once into
benchmarks/.cache, never committed), timing, and a report (table on stdout, Markdown and a
chart under benchmarks/out/)."""

from __future__ import annotations

import statistics
import subprocess
import sys
import sysconfig
import tarfile
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
CACHE = HERE / ".cache"
OUT = HERE / "out"


def django_tree() -> Path:
    """Django 5.2.8's source distribution from PyPI, unpacked (about 2,800 Python files)."""
    target = CACHE / "Django-5.2.8"
    if not target.is_dir():
        CACHE.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-binary",
                ":all:",
                "--no-deps",
                "--dest",
                str(CACHE),
                "django==5.2.8",
            ],
            check=True,
        )
        archive = next(CACHE.glob("[dD]jango-5.2.8.tar.gz"))
        with tarfile.open(archive) as tar:
            tar.extractall(CACHE, filter="data")
        found = next(p for p in CACHE.iterdir() if p.is_dir() and p.name.lower() == "django-5.2.8")
        if found != target:
            found.rename(target)
    return target


def typescript_js() -> Path:
    """TypeScript 5.9.3's lib/typescript.js from npm: one 9 MB file of about 200,000 lines."""
    target = CACHE / "typescript-5.9.3" / "package" / "lib" / "typescript.js"
    if not target.is_file():
        folder = CACHE / "typescript-5.9.3"
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "pack", "--silent", "typescript@5.9.3"], cwd=folder, check=True, stdout=subprocess.DEVNULL
        )
        with tarfile.open(next(folder.glob("typescript-5.9.3.tgz"))) as tar:
            tar.extractall(folder, filter="data")
    return target


def stdlib() -> Path:
    """The Python standard library of this interpreter."""
    return Path(sysconfig.get_paths()["stdlib"])


def timed(fn: Callable[[], object], repeat: int = 5, warmup: int = 1) -> list[float]:
    """Wall-clock seconds of `repeat` runs of fn, after `warmup` untimed runs."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return times


def median(times: list[float]) -> float:
    return statistics.median(times)


class Report:
    """Rows of figures: printed as a table, written as Markdown, charted as bars."""

    def __init__(self, name: str, title: str, columns: list[str]):
        self.name, self.title, self.columns = name, title, columns
        self.rows: list[list[object]] = []
        self.notes: list[str] = []

    def add(self, *row: object) -> None:
        self.rows.append(list(row))

    def note(self, text: str) -> None:
        self.notes.append(text)

    def table(self) -> str:
        cells = [self.columns] + [[fmt(c) for c in row] for row in self.rows]
        widths = [max(len(str(r[i])) for r in cells) for i in range(len(self.columns))]
        lines = ["  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=False)) for r in cells]
        lines.insert(1, "  ".join("-" * w for w in widths))
        return "\n".join(lines)

    def write(self, chart: tuple[str, str] | None = None) -> Path:
        """Print the table and write out/NAME.md; chart=(label column, value column) adds
        a bar chart out/NAME.png of that value per row."""
        print(f"\n{self.title}\n")
        print(self.table())
        for note in self.notes:
            print(note)
        OUT.mkdir(parents=True, exist_ok=True)
        md = [f"# {self.title}", "", "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        md += ["| " + " | ".join(fmt(c) for c in row) + " |" for row in self.rows]
        md += ["", *self.notes]
        if chart:
            png = self.chart(*chart)
            if png:
                md += ["", f"![{self.title}]({png.name})"]
        path = OUT / f"{self.name}.md"
        path.write_text("\n".join(md) + "\n")
        print(f"\nreport: {path}")
        return path

    def chart(self, label: str, value: str) -> Path | None:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("(matplotlib missing: no chart; `pip install -e '.[bench]'`)")
            return None
        li, vi = self.columns.index(label), self.columns.index(value)
        labels = [str(r[li]) for r in self.rows]
        values = [float(r[vi]) for r in self.rows]
        fig, ax = plt.subplots(figsize=(max(6, len(labels) * 0.9), 4))
        ax.bar(labels, values, color="#4a7ab5")
        ax.set_ylabel(value)
        ax.set_title(self.title)
        plt.xticks(rotation=30, ha="right")
        fig.tight_layout()
        png = OUT / f"{self.name}.png"
        fig.savefig(png, dpi=110)
        plt.close(fig)
        return png


def fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.4g}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def npm_package(spec: str) -> Path:
    """An npm package (`name@version`) packed from the registry and unpacked: its `package/` folder."""
    folder = CACHE / spec.replace("/", "_").replace("@", "-", 1).lstrip("-")
    target = folder / "package"
    if not target.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(["npm", "pack", "--silent", spec], cwd=folder, check=True, stdout=subprocess.DEVNULL)
        with tarfile.open(next(folder.glob("*.tgz"))) as tar:
            tar.extractall(folder, filter="data")
    return target
