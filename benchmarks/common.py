"""Shared benchmark plumbing: corpora from the registries (downloaded once into
benchmarks/.cache, never committed), timing, a report (table on stdout, Markdown and a
chart under benchmarks/out/), and a JSON-RPC client that drives the real server over stdio."""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import time
from collections.abc import Callable
from datetime import datetime, timezone
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


def npm_package(name: str, version: str) -> Path:
    """The unpacked `package/` folder of an npm package (`npm pack`, downloaded once)."""
    folder = CACHE / f"{name}-{version}"
    if not (folder / "package").is_dir():
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            ["npm", "pack", "--silent", f"{name}@{version}"],
            cwd=folder,
            check=True,
            stdout=subprocess.DEVNULL,
        )
        with tarfile.open(next(folder.glob(f"{name}-{version}.tgz"))) as tar:
            tar.extractall(folder, filter="data")
    return folder / "package"


def typescript_js() -> Path:
    """TypeScript 5.9.3's lib/typescript.js from npm: one 9 MB file of about 200,000 lines."""
    return npm_package("typescript", "5.9.3") / "lib" / "typescript.js"


def rxjs_tree() -> Path:
    """rxjs 7.8.2 from npm: its TypeScript sources (about 250 files) under package/src."""
    return npm_package("rxjs", "7.8.2") / "src"


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


# --- a client over LSP stdio ------------------------------------------------------------------


class Client:
    """JSON-RPC over a server's stdio: requests by id, and the server's progress."""

    def __init__(self, process: asyncio.subprocess.Process):
        self.process = process
        self.ids = iter(range(1, 10**9))
        self.pending: dict[int, asyncio.Future] = {}
        self.indexed = asyncio.Event()
        self.tabled = asyncio.Event()  # the use tables made after the index (references)
        self.titles: dict[object, str] = {}
        self.reader = asyncio.ensure_future(self.read())

    @classmethod
    async def start(
        cls, root: Path, cache: str, code: Path | None = None, options: dict | None = None,
        module: str = "lsp_agent",
    ) -> Client:  # fmt: skip
        """A server on `root` persisting its index in `cache`; run from the source tree `code`
        (another commit's, see source_tree) instead of this one's when given; `options` its
        initializationOptions; `module` what `python -m` runs (one of the benchmarks' own,
        found beside this file, or lsp-agent)."""
        env = {**os.environ, "LSP_AGENT_CACHE_DIR": cache}
        if code is not None:
            env["PYTHONPATH"] = str(code)  # found before the installed (editable) package
        elif module.startswith("benchmarks."):
            env["PYTHONPATH"] = os.pathsep.join(
                filter(None, [str(HERE.parent), os.environ.get("PYTHONPATH")])
            )
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", module, "serve",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env=env, cwd=code,
        )  # fmt: skip
        client = cls(process)
        capabilities = {"window": {"workDoneProgress": True}, "general": {"positionEncodings": ["utf-16"]}}
        initialize = {"processId": None, "rootUri": root.as_uri(), "capabilities": capabilities}
        await client.request(
            "initialize", initialize | ({"initializationOptions": options} if options else {})
        )
        client.notify("initialized", {})
        return client

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def notify(self, method: str, params: object) -> None:
        self.send({"method": method, "params": params})

    async def request(self, method: str, params: object) -> object:
        n = next(self.ids)
        answer = self.pending[n] = asyncio.get_running_loop().create_future()
        self.send({"id": n, "method": method, "params": params})
        try:
            return await answer
        finally:
            del self.pending[n]

    def cpu_seconds(self) -> float:
        """CPU the server process has used, with its reaped children (rg): /proc/PID/stat."""
        with open(f"/proc/{self.process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        utime, stime, cutime, cstime = (int(f) for f in fields[11:15])
        return (utime + stime + cutime + cstime) / os.sysconf("SC_CLK_TCK")

    async def timed(self, method: str, params: object) -> float:
        started = time.perf_counter()
        await self.request(method, params)
        return time.perf_counter() - started

    async def read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            header = await stream.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            message = json.loads(await stream.readexactly(length))
            if "method" in message and "id" in message:  # the server asks: progress tokens, registrations
                self.send({"id": message["id"], "result": None})
            elif message.get("method") == "$/progress":
                value = message["params"]["value"]
                if value.get("kind") == "begin":
                    self.titles[message["params"]["token"]] = value.get("title", "")
                elif value.get("kind") == "end" and "indexing" in self.titles.get(
                    message["params"]["token"], ""
                ):
                    self.indexed.set()
                elif value.get("kind") == "end" and "use tables" in self.titles.get(
                    message["params"]["token"], ""
                ):
                    self.tabled.set()
            elif "id" in message and message["id"] in self.pending:
                if "error" in message:
                    self.pending[message["id"]].set_exception(RuntimeError(message["error"]))
                else:
                    self.pending[message["id"]].set_result(message.get("result"))

    async def stop(self) -> None:
        await self.request("shutdown", None)
        self.notify("exit", None)
        await asyncio.wait_for(self.process.wait(), 30)
        self.reader.cancel()


def source_tree(commit: str, folder: Path) -> Path:
    """This repository's package at `commit`, written into `folder` to run from (Client.start's
    `code`): lsp_agent with its grammars, as an installed package lays them out."""
    archive = subprocess.run(
        ["git", "archive", commit, "lsp_agent", "grammars"], cwd=HERE.parent, capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    (folder / "lsp_agent" / "grammars").symlink_to(folder / "grammars", target_is_directory=True)
    found = subprocess.run(
        [sys.executable, "-c", "import lsp_agent.grammars as g; print(g.__file__)"],
        cwd=folder, env={**os.environ, "PYTHONPATH": str(folder)}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not Path(found.stdout.strip()).is_relative_to(folder):
        raise RuntimeError(f"{commit}: the package imported from {found.stdout.strip()}, not {folder}")
    return folder


def the_run() -> str:
    """When, on what and under which load: a figure is quoted with its run."""
    commit = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True, text=True)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    return (
        f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC, commit {commit.stdout.strip() or '?'}, "
        f"`uptime`: {load.split('load average:')[-1].strip()}"
    )
