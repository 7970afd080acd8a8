"""`lsp-agent index scip`: run the installed SCIP indexers for a folder's languages.

Each indexer writes `index.<language>.scip` in the folder (through a temporary name, so a
reader never sees half an index), which the SCIP source finds there (scip.py). The index
is then read back with the same reader navigation uses, so a run that succeeds wrote an
index navigation can load.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .scip_format import Damaged, Document, read_index

SKIP = {"node_modules", ".git", ".venv", "venv", "__pycache__", "dist", "build"}


@dataclass(frozen=True)
class Indexer:
    language: str
    program: str  # found on PATH or in the folders given
    suffixes: tuple[str, ...]
    markers: tuple[str, ...]  # files at the root that say the language is there

    def command(self, root: Path, output: str, program: str, only: str | None = None) -> list[str]:
        if self.language == "python":
            name = root.name or "project"
            limit = ["--target-only", only] if only else []  # imports still resolve from the root
            return [program, "index", "--cwd", str(root), "--project-name", name,
                    "--project-version", "0", "--output", output, *limit]  # fmt: skip
        command = [program, "index", "--cwd", str(root), "--output", output, "--no-progress-bar"]
        return command + ([] if (root / "tsconfig.json").exists() else ["--infer-tsconfig"])


INDEXERS = (
    Indexer("python", "scip-python", (".py",), ("pyproject.toml", "setup.py", "setup.cfg")),
    Indexer(
        "typescript", "scip-typescript", (".ts", ".tsx", ".js", ".jsx"), ("tsconfig.json", "package.json")
    ),
)


def languages(root: Path, most: int = 5000) -> list[Indexer]:
    """The indexers whose language the folder holds (a marker file, or a source file among
    the first `most` files outside dependency and hidden folders)."""
    wanted = {i.language for i in INDEXERS if any((root / m).exists() for m in i.markers)}
    seen = 0
    for _folder, subfolders, files in os.walk(root):
        subfolders[:] = [s for s in subfolders if s not in SKIP and not s.startswith(".")]
        for name in files:
            seen += 1
            wanted |= {i.language for i in INDEXERS if name.endswith(i.suffixes)}
        if seen >= most or len(wanted) == len(INDEXERS):
            break
    return [i for i in INDEXERS if i.language in wanted]


def find_program(name: str, folders: list[str]) -> str | None:
    for folder in folders:
        candidate = Path(folder) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name)


def run(root: Path, folders: list[str], report: Callable[[str], None], only: str | None = None) -> int:
    """Index `root` with every indexer its languages need (scip-python only the folder `only`
    of it, when given: a project's tests may be too much for it); 0 when all wrote a readable
    index, 1 when one failed, 2 when none is installed or no language was found."""
    wanted = languages(root)
    if not wanted:
        report(
            f"no language with a SCIP indexer in {root} (Python: scip-python; TypeScript, JavaScript: scip-typescript)"
        )
        return 2
    failed = missing = 0
    for indexer in wanted:
        program = find_program(indexer.program, folders)
        if program is None:
            report(
                f"{indexer.language}: {indexer.program} is not installed (npm install @sourcegraph/{indexer.program})"
            )
            missing += 1
            continue
        failed += not index_one(root, indexer, program, report, only)
    if missing == len(wanted):
        return 2
    return 1 if failed or missing else 0


def index_one(
    root: Path, indexer: Indexer, program: str, report: Callable[[str], None], only: str | None = None
) -> bool:
    # scip-python's paths are relative to the folder it was limited to: the index goes there
    folder = root / only if only and indexer.language == "python" else root
    final = f"index.{indexer.language}.scip"
    partial = str(folder / f".{final}.{os.getpid()}.partial")
    started = time.monotonic()
    report(f"{indexer.language}: {indexer.program} indexing {root}")
    inferred = not (root / "tsconfig.json").exists()  # --infer-tsconfig leaves one behind
    process = subprocess.Popen(
        indexer.command(root, partial, program, only), cwd=root, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        if line.strip():
            report(f"  {indexer.program}: {line.rstrip()[:300]}")
    code = process.wait()
    if indexer.language == "typescript" and inferred:
        (root / "tsconfig.json").unlink(missing_ok=True)
    written = Path(partial)
    if code != 0 or not written.is_file():
        written.unlink(missing_ok=True)
        report(f"{indexer.language}: {indexer.program} failed (exit status {code}); no index written")
        return False
    try:
        documents, occurrences = count(written)
    except Damaged as exc:
        written.unlink(missing_ok=True)
        report(f"{indexer.language}: {indexer.program} wrote something that is not SCIP ({exc}); removed")
        return False
    os.replace(written, folder / final)
    report(
        f"{indexer.language}: wrote {(folder / final).relative_to(root)} ({documents} documents, {occurrences} occurrences, "
        f"{(folder / final).stat().st_size // 1024} KiB) in {time.monotonic() - started:.0f} s"
    )
    return True


def count(path: Path) -> tuple[int, int]:
    documents = occurrences = 0
    for entry in read_index(path.read_bytes()):
        if isinstance(entry, Document):
            documents += 1
            occurrences += len(entry.occurrences)
    return documents, occurrences
