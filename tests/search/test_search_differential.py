"""Our search answers against `rg --json` run directly, as a user would run it in the workspace:
seeded random trees of nested .gitignore/.ignore/.rgignore files (hostile lines included),
a few hundred patterns (agent-style, random, invalid), random paths, globs and open editor
buffers (compared with rg run on a copy of the tree holding the buffers' text on disk)."""

from __future__ import annotations

import base64
import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.search import find_rg
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

SEED = 14
TREES = 30
CASES_PER_TREE = 10  # 300 patterns in all

FOLDERS = ["src", "lib", "build", "docs", "a", "b", ".hidden", "node_modules"]
FILES = ["x.py", "y.txt", "z.log", "keep.log", "notes.md", "w.js", ".env", "README"]
LINES = [
    "foo bar",
    "def foo(x):",
    "    return foo(x) + bar  # foo",
    "FOO = 1",
    "naïve café ÉCOLE",
    "ABC DEF GHI",
    "class Thing:",
    "",
    "x\ty:",
    "Σίσυφος foo_bar",
    "foo foo foo",
    "end…",
    "a{1,3} (literal)",
    "trailing spaces   ",
    "0123 456",
]
RULES = [
    "*.log",
    "!keep.log",
    "build/",
    "/a",
    "docs/*.md",
    "node_modules",
    "*.py",
    "!*.py",
    "b/",
    "**/x.py",
    "!/src",
    "*.{md,txt}",
    "#comment",
    "",
    "   ",
    "!",
    "\\",
    "a\\",
    "[z-a]",
    "!.hidden",
    "y.*",
    "lib/**/w.js",
]
ATOMS = [
    "foo",
    "bar",
    "FOO",
    r"\bfoo\b",
    r"^\s*def ",
    r":\s*$",
    "[A-Z]{3,}",
    r"\w+é",
    r"caf\w",
    "(?i)école",
    "[[:upper:]]+",
    r"\d+",
    "f.o",
    "o",
    "^$",
    "(?m)^foo",
    "a{1, 3}",
    r"\p{Greek}+",
    "[^a-z ]+",
    "…",
    r"(foo|bar)\W",
    "e$",
    r"\s+",
    "x",
]
INVALID = ["foo(", "(?=foo)", "[c-.]", r"(a)\1", "a{2", "*a"]


def rg_direct(root: Path, pattern: str, arguments: dict) -> dict:
    """`rg --json` run in the workspace as a user would: records, counts, or its refusal."""
    args = [find_rg(), "--json", "--no-config", "--no-require-git", "--no-ignore-global"]
    args += ["-i"] * bool(arguments.get("ignore_case")) + ["-F"] * bool(arguments.get("fixed_strings"))
    args += [f"--glob={g}" for g in arguments.get("glob", [])]
    args += ["-e", pattern, "--", *arguments.get("paths", ["./"])]
    proc = subprocess.run(args, cwd=root, capture_output=True, check=False)
    if proc.returncode == 2 and b'"type":"summary"' not in proc.stdout:
        return {"error": proc.stderr.decode()}
    files: dict[str, tuple[list, dict]] = {}  # path -> (records, stats); a path searched twice once
    records: list = []
    for raw in proc.stdout.splitlines():
        message = json.loads(raw)
        data = message["data"]
        if message["type"] == "begin":
            records = []
        elif message["type"] == "match":
            path = text_of(data["path"]).removeprefix("./")
            raw_line = raw_of(data["lines"])
            first = data["submatches"][0]
            line = raw_line.decode("utf-8", errors="replace").split("\n")[0].removesuffix("\r")
            column = len(raw_line[: first["start"]].decode("utf-8", errors="replace")) + 1
            records.append((path, data["line_number"], line[:200], column))
        elif message["type"] == "end" and data["binary_offset"] is None:
            files.setdefault(text_of(data["path"]).removeprefix("./"), (records, data["stats"]))
    kept = sorted(r for found, _ in files.values() for r in found)
    lines = sum(stats["matched_lines"] for _, stats in files.values())
    matches = sum(stats["matches"] for _, stats in files.values())
    return {"records": kept, "files": len(files), "lines": lines, "matches": matches}


def text_of(field: dict) -> str:
    return field["text"] if "text" in field else base64.b64decode(field["bytes"]).decode("utf-8", "replace")


def raw_of(field: dict) -> bytes:
    return field["text"].encode() if "text" in field else base64.b64decode(field["bytes"])


def random_tree(rng: random.Random, root: Path) -> list[str]:
    """A tree of folders, files and ignore files; its folders (root-relative)."""
    folders = [""]
    for _ in range(rng.randint(2, 6)):
        parent = rng.choice(folders)
        if parent.count("/") < 2:
            folders.append(f"{parent}/{rng.choice(FOLDERS)}".lstrip("/"))
    folders = sorted(set(folders))
    for folder in folders:
        (root / folder).mkdir(parents=True, exist_ok=True)
        for name in rng.sample(FILES, rng.randint(1, 4)):
            body = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 8)))
            ending = rng.choice(["\n", "\r\n", ""])
            (root / folder / name).write_bytes(body.replace("\n", ending or "\n").encode() + ending.encode())
        if rng.random() < 0.2:
            (root / folder / "data.bin").write_bytes(b"\x00foo binary\n")
        for ignore in (".gitignore", ".ignore", ".rgignore"):
            if rng.random() < 0.35:
                (root / folder / ignore).write_text("\n".join(rng.sample(RULES, rng.randint(1, 5))) + "\n")
    return folders


def random_pattern(rng: random.Random) -> str:
    if rng.random() < 0.05:
        return rng.choice(INVALID)
    atoms = [rng.choice(ATOMS) for _ in range(rng.randint(1, 2))]
    return rng.choice(["", "|", ".*"]).join(atoms)


def random_arguments(rng: random.Random, root: Path, folders: list[str]) -> dict:
    arguments: dict = {}
    if rng.random() < 0.4:
        candidates = [f for f in folders if f] + [
            str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and rng.random() < 0.1
        ]
        if candidates:
            arguments["paths"] = sorted(set(rng.sample(candidates, min(len(candidates), rng.randint(1, 2)))))
    if rng.random() < 0.15:
        arguments["glob"] = [rng.choice(["*.py", "!*.txt", "*.log", "src/**", ".env", "*.{md,js}"])]
    if rng.random() < 0.2:
        arguments["ignore_case"] = True
    if rng.random() < 0.1:
        arguments["fixed_strings"] = True
    return arguments


def ours(ws: Workspace, pattern: str, arguments: dict) -> dict:
    return call(Context(ws, Settings()), "search", {"pattern": pattern, "max_chars": 1_000_000, **arguments})


def assert_same(answer: dict, direct: dict, case: str) -> None:
    if "error" in direct:
        assert answer.get("error", {}).get("code") == "invalid_regex", case
        return
    assert "error" not in answer, (case, answer.get("text"))
    got = [(loc["path"], loc["line"], loc["text"], loc["column"]) for loc in answer["locations"]]
    assert got == direct["records"], case
    assert (answer["total_lines"], answer["total_matches"]) == (direct["lines"], direct["matches"]), case
    assert answer["total_files"] == direct["files"], case


@pytest.fixture
def base(tmp_path):
    for folder in tmp_path.parents:  # rg run directly reads ignore files above the workspace too
        if any((folder / name).exists() for name in (".gitignore", ".ignore", ".rgignore")):
            pytest.skip(f"{folder} has an ignore file; a direct rg run would read it")
    return tmp_path


def test_answers_equal_ripgreps_own_on_random_trees(base):
    rng = random.Random(SEED)
    compared = refused = 0
    for t in range(TREES):
        root = base / f"tree{t}"
        folders = random_tree(rng, root)
        for _ in range(CASES_PER_TREE):
            pattern, arguments = random_pattern(rng), random_arguments(rng, root, folders)
            case = f"tree{t} {pattern!r} {arguments}"
            direct = rg_direct(root, pattern, arguments)
            assert_same(ours(Workspace([root]), pattern, arguments), direct, case)
            compared += 1
            refused += "error" in direct
    assert compared == TREES * CASES_PER_TREE and 0 < refused < compared / 4


def test_open_buffers_equal_ripgrep_on_their_text_saved(base):
    """Buffers at random paths (existing files, new files, in ignored or hidden folders) give
    the answers rg gives with their text saved to disk."""
    rng = random.Random(SEED + 1)
    for t in range(TREES):
        root = base / f"tree{t}" / "ws"
        folders = random_tree(rng, root)
        ws = Workspace([root])
        saved = base / f"tree{t}" / "saved"
        shutil.copytree(root, saved, symlinks=True)
        for _ in range(rng.randint(1, 3)):
            rel = f"{rng.choice(folders)}/{rng.choice([*FILES, 'new.py'])}".lstrip("/")
            text = "\n".join(rng.choice(LINES) for _ in range(rng.randint(1, 5))) + "\n"
            ws.open_document(root / rel, text)
            (saved / rel).parent.mkdir(parents=True, exist_ok=True)
            (saved / rel).write_text(text)
        for _ in range(3):
            pattern, arguments = random_pattern(rng), random_arguments(rng, root, folders)
            case = f"tree{t} {pattern!r} {arguments} buffers={sorted(map(str, ws.open_documents()))}"
            assert_same(ours(ws, pattern, arguments), rg_direct(saved, pattern, arguments), case)
