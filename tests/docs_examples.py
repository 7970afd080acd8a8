"""The command examples of README.md and docs/*.md, run for real.

An example is a fenced block whose language is `console`: each line starting with `$ ` is a
command, run by bash in a copy of tests/fixtures/docs (the small project the docs show, with
some of the grammars' own fixtures in its src/ and the generated messages.py) with this Python's scripts first on PATH; the lines after it, up to
the next command, are what it prints (stdout and stderr, as a terminal shows them). The
workspace's absolute path is shown as /home/me/project, so the docs read the same everywhere.

`tests/test_docs.py` checks every example (sybil finds them); `make docs`
(`python -m tests.docs_examples`) rewrites the shown outputs after a deliberate change.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

REPO = Path(__file__).resolve().parent.parent
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FIXTURE = REPO / "tests" / "fixtures" / "docs"
SHOWN_ROOT = "/home/me/project"
# Fixtures of grammars/ that the docs show in src/, one language each.
FROM_GRAMMARS = [
    "python/shapes.py",
    "rust/geometry.rs",
    "csharp/Inventory.cs",
    "ruby/account.rb",
    "cpp/shapes.cpp",
]
PROMPT = "$ "


def messages_py() -> str:
    """1,300 classes that each hold the same line: the search docs' overflow case."""
    return "".join(
        f'class Message{n}:\n    def __init__(self):\n        self.id = {n}\n\n    def to_dict(self):\n        return {{"id": self.id, "kind": "message"}}\n\n\n'
        for n in range(1, 1301)
    )


def make_workspace(parent: Path) -> Path:
    root = parent / "project"
    shutil.copytree(FIXTURE, root)
    for fixture in FROM_GRAMMARS:
        shutil.copy(REPO / "grammars" / fixture, root / "src")
    (root / "messages.py").write_text(messages_py())
    return root


def run(command: str, root: Path) -> str:
    env = os.environ | {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "100",  # argparse wraps help to the terminal's width
        "PYTHONIOENCODING": "utf-8",
    }
    done = subprocess.run(
        ["bash", "-c", command], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output = done.stdout.decode("utf-8").replace(str(root), SHOWN_ROOT)
    return output if output.endswith("\n") or not output else output + "\n"


def commands(block: str) -> list[str]:
    return [line[len(PROMPT) :] for line in block.splitlines() if line.startswith(PROMPT)]


def session(block: str, root: Path) -> str:
    """The block as it should read: each command followed by what it prints now."""
    return "".join(f"{PROMPT}{command}\n{run(command, root)}" for command in commands(block))


class ConsoleParser:
    """sybil parser: one example per ```console block, evaluated in `root`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.lexer = FencedCodeBlockLexer("console")

    def __call__(self, document: Document) -> Iterator[Region]:
        for lexed in self.lexer(document):
            source = lexed.lexemes["source"]
            start = lexed.start + source.offset
            yield Region(start, start + len(source), parsed=str(source), evaluator=self.evaluate)

    def evaluate(self, example: Example) -> str | None:
        expected = example.parsed
        if not commands(expected) or not expected.startswith(PROMPT):
            return "a console block must start with a `$ ` command line"
        actual = session(expected, self.root)
        if actual == expected:
            return None
        return f"the shown output differs from a real run (`make docs` rewrites it):\n--- shown\n{expected}--- real\n{actual}"


def examples(root: Path, paths: list[Path] = DOCS) -> Iterator[tuple[Path, Example]]:
    sybil = Sybil(parsers=[ConsoleParser(root)], path=str(REPO))
    for path in paths:
        for example in sybil.parse(path):
            yield path, example


def rewrite(path: Path, root: Path) -> bool:
    """Put the real output of every example of `path` into it; True if that changed it."""
    text = path.read_text(encoding="utf-8")
    new = text
    for _, example in reversed(list(examples(root, [path]))):
        region = example.region
        new = new[: region.start] + session(example.parsed, root) + new[region.end :]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        root = make_workspace(Path(scratch))
        for path in DOCS:
            if rewrite(path, root):
                print(f"rewrote {path.relative_to(REPO)}")


if __name__ == "__main__":
    main()
