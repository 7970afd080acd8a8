"""Which language server answers a language, and how it is started.

A server comes from the `semantic_servers` setting (per language: a command, or false to
use none), else from PATH or the folder of lsp-agent's own Python (a pip-installed
basedpyright lands there). typescript-language-server also needs a TypeScript 5.x
`tsserver.js` (7.x ships none): the one installed beside it, or the setting's `tsserver`.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Spec:
    name: str  # the server, as answers name it: "basedpyright"
    family: str  # the languages one process answers: "python", "typescript" (JS and TS)
    command: tuple[str, ...]
    language_ids: dict[str, str]  # file extension -> LSP languageId
    # Seconds after start-up during which answers may be partial (basedpyright answers from
    # part of the workspace for about 20 s on Django's package).
    warmup: float = 0.0
    initialization_options: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)  # answers to workspace/configuration
    # Whether the work the server reports ($/progress it begins itself) is loading that its
    # answers may miss (tsserver's "Initializing JS/TS language features"). pyright's is its
    # checker at work on the open files, which its answers do not wait on, and which it never
    # ends for a client that pulls diagnostics until that client pulls them.
    progress_is_loading: bool = True


PYTHON_IDS = {".py": "python", ".pyi": "python"}
TS_IDS = {
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescriptreact",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascriptreact",
}  # fmt: skip
GO_IDS = {".go": "go"}
C_IDS = {".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp"}
RUST_IDS = {".rs": "rust"}

# family -> (server name, executable, arguments, extensions, warm-up seconds)
KNOWN: dict[str, tuple[str, str, tuple[str, ...], dict[str, str], float]] = {
    "python": ("basedpyright", "basedpyright-langserver", ("--stdio",), PYTHON_IDS, 25.0),
    "typescript": ("typescript-language-server", "typescript-language-server", ("--stdio",), TS_IDS, 5.0),
    "go": ("gopls", "gopls", (), GO_IDS, 5.0),
    "c": ("clangd", "clangd", (), C_IDS, 5.0),
    "rust": ("rust-analyzer", "rust-analyzer", (), RUST_IDS, 30.0),
}
PYTHON_SETTINGS = {
    # answer references from the whole workspace, not only the open files
    "python": {"analysis": {"diagnosticMode": "openFilesOnly", "autoSearchPaths": True}},
    "basedpyright": {"analysis": {"diagnosticMode": "openFilesOnly", "typeCheckingMode": "standard"}},
}


# pyright answers references (and implementation) after cancelling the previous one's token
# source; a request cancelled before it was dispatched leaves a source vscode-jsonrpc's
# CancellationTokenSource cannot cancel twice ("this._token.cancel is not a function"), and
# from then on every references request fails until a restart. Its file-based cancellation
# strategy's sources can: asked for on the command line (the folder is never made, so no
# file is written; $/cancelRequest still cancels as before).
PYRIGHTS = ("basedpyright-langserver", "pyright-langserver")
CANCEL_RECEIVE = "--cancellationReceive"


def is_pyright(command: Sequence[str]) -> bool:
    return Path(command[0]).stem in PYRIGHTS


def launch_command(spec: Spec) -> list[str]:
    """The command a session runs for `spec`: a pyright given its file-based cancellation."""
    command = list(spec.command)
    if is_pyright(command) and not any(a.startswith(CANCEL_RECEIVE) for a in command):
        command.append(f"{CANCEL_RECEIVE}=file:lsp-agent-{os.getpid()}")
    return command


def family_of(path: Path) -> str | None:
    suffix = path.suffix.lower()
    return next((f for f, known in KNOWN.items() if suffix in known[3]), None)


def find_executable(name: str) -> str | None:
    """On PATH, else beside lsp-agent's own Python (its virtual environment's bin)."""
    found = shutil.which(name)
    if found is None:
        beside = Path(sys.executable).parent / name
        found = str(beside) if beside.is_file() and os.access(beside, os.X_OK) else None
    return found


# Executables that may be a stand-in that cannot run the server (rustup's proxy for a
# rust-analyzer component not installed): asked for --version once before being trusted.
PROBED = frozenset({"rust-analyzer", "gopls", "clangd"})


@functools.cache
def runs(executable: str) -> bool:
    try:
        done = subprocess.run([executable, "--version"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def tsserver_beside(executable: str) -> tuple[str | None, str]:
    """(path of a TypeScript 5.x tsserver.js installed with typescript-language-server, why
    not). npm puts both in one node_modules: .bin/typescript-language-server links there."""
    real = Path(executable).resolve()
    for folder in real.parents:
        if folder.name == "node_modules":
            package = folder / "typescript" / "package.json"
            try:
                version = json.loads(package.read_text(encoding="utf-8")).get("version", "")
            except (OSError, ValueError):
                return None, f"no typescript package in {folder}"
            if not str(version).startswith("5."):
                return None, f"typescript {version} in {folder} ships no tsserver (5.x needed)"
            return str(folder / "typescript" / "lib" / "tsserver.js"), ""
    return None, f"no node_modules above {real}"


# Seconds a language's server, once looked for, is taken as found: looking walks PATH and
# reads tsserver's package.json (0.3 ms, twice a question); a server installed since, or
# PATH changed, is found after that.
SPEC_KEPT = 5.0
_FOUND: dict[tuple[str, str, str], tuple[float, tuple[Spec | None, str]]] = {}


def spec_for(family: str, configured: dict[str, Any]) -> tuple[Spec | None, str]:
    """(the server for a language family, or None and why not)."""
    entry = json.dumps(configured.get(family), sort_keys=True, default=repr)
    key, now = (family, entry, os.environ.get("PATH", "")), time.monotonic()
    kept = _FOUND.get(key)
    if kept is not None and now - kept[0] < SPEC_KEPT:
        return kept[1]
    found = _FOUND[key] = (now, look_for(family, configured))
    return found[1]


def look_for(family: str, configured: dict[str, Any]) -> tuple[Spec | None, str]:
    name, executable, arguments, ids, warmup = KNOWN[family]
    entry = configured.get(family)
    if entry is False:
        return None, f"semantic_servers.{family} is false"
    tsserver = None
    if isinstance(entry, dict):
        command = list(entry.get("command") or [])
        tsserver = entry.get("tsserver")
    elif isinstance(entry, list) and entry:
        command = list(entry)
    else:
        found = find_executable(executable)
        if found is None:
            return None, f"{executable} is not on PATH (install it, or set semantic_servers.{family})"
        if executable in PROBED and not runs(found):
            return None, f"{found} --version fails (a stand-in without the server?)"
        command = [found, *arguments]
    if not command:
        return None, f"semantic_servers.{family} has no command"
    if isinstance(entry, (dict, list)) and entry:
        name = Path(command[0]).name.removesuffix("-langserver")
    if isinstance(entry, dict):
        name = str(entry.get("name", name))
        warmup = float(entry.get("warmup", warmup))
    options: dict = {}
    settings: dict = {}
    if family == "python":
        settings = PYTHON_SETTINGS
    if family == "typescript":
        if tsserver is None:
            tsserver, why = tsserver_beside(shutil.which(command[0]) or command[0])
            if tsserver is None:
                return None, why
        options = {"tsserver": {"path": tsserver}, "hostInfo": "lsp-agent"}
    loading = not is_pyright(command)  # pyright's progress is its checker (see Spec)
    spec = Spec(name, family, tuple(command), ids, warmup, options, settings, progress_is_loading=loading)
    return spec, " ".join(command)
