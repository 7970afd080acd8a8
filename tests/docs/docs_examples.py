"""The command examples of README.md and docs/*.md, run for real.

An example is a fenced block whose language is `console`: each line starting with `$ ` is a
command, run by bash in the docs' project (a copy of tests/fixtures/docs, with some of the
grammars' own fixtures in its src/ and the generated messages.py, and tests/fixtures/navigation
beside it; `make docs-project` builds the same in build/docs/ for a reader to run the examples
in) with this Python's scripts first on PATH; the lines after it, up to the next command, are
what it prints (stdout and stderr, as a terminal shows them). The workspace's absolute path is
shown as /home/me/project, so the docs read the same everywhere. A block right under the
comment `<!-- console: repository -->` runs in this repository instead (shown as
/home/me/lsp-agent). A page says where its examples run before the first one: that sentence
names `make docs-project` (tests/docs/test_docs.py checks it).

An editor example is a fenced block right under a comment `<!-- nvim: STEPS -->`: STEPS,
separated by ` | `, are typed into one headless Neovim (tests/support/nvim_editor.py) with the plugin
set up as `{ init_options = { max_chars = 600 } }` and the real server on PATH, in the same
project, which it finds by its .git: `:cmd` is an Ex command (a `:LspAgent…` one waits for its
answer, an `:edit` for the server to attach), anything else keys typed in normal mode (waiting
for the window they open, as `gO` opens the location list). The block shows the lines of the
window left current (the answer's buffer, `:copen`'s list, …) without leading or trailing
empty lines. Each example starts from one window and no buffers, so none depends on another.

`tests/docs/test_docs.py` checks every example (sybil finds them); `make docs`
(`python -m tests.docs.docs_examples`) rewrites the shown outputs after a deliberate change.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from sybil import Document, Example, Region, Sybil
from sybil.parsers.markdown.lexers import FencedCodeBlockLexer

from tests.support.nvim_editor import Editor

REPO = Path(__file__).resolve().parents[2]
DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
FIXTURE = REPO / "tests" / "fixtures" / "docs"
SHOWN_ROOT = "/home/me/project"
# Grammar fixtures (tests/fixtures/grammars/) that the docs show in src/, one language each.
FROM_GRAMMARS = [
    "python/shapes.py",
    "rust/geometry.rs",
    "csharp/Inventory.cs",
    "ruby/account.rb",
    "cpp/shapes.cpp",
]
PROMPT = "$ "
# A console block right under this comment needs real language servers: `make test-servers`
# checks it (with the servers it installs on PATH), `make test` leaves it out.
SERVERS_MARK = "<!-- servers -->\n"
SERVERS = os.environ.get("LSP_AGENT_TEST_SERVERS")


def server_path() -> str:
    """PATH with the language servers `make test-servers` installs first."""
    folder = Path(SERVERS or ".")
    bins = [folder / "py" / "bin", folder / "node" / "node_modules" / ".bin"]
    return os.pathsep.join(str(b) for b in bins)
# The comment above a console block that runs in this repository rather than the docs' project.
IN_REPOSITORY = "<!-- console: repository -->"
SHOWN_REPOSITORY = "/home/me/lsp-agent"
# Where `make docs-project` builds the docs' project for a reader, and what pages say about it.
READERS_PROJECT = REPO / "build" / "docs"
SAYS_WHERE = "make docs-project"


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
        shutil.copy(REPO / "tests" / "fixtures" / "grammars" / fixture, root / "src")
    (root / "messages.py").write_text(messages_py())
    (root / ".git").mkdir()  # what makes it a project to Neovim (the plugin's root markers)
    # the navigation docs' small projects (one per language), a workspace of their own
    shutil.copytree(REPO / "tests" / "fixtures" / "navigation", parent / "navigation")
    shutil.copytree(REPO / "tests" / "fixtures" / "semantic", parent / "semantic")
    return root


def run(command: str, root: Path, shown_as: str = SHOWN_ROOT, servers: bool = False) -> str:
    first = f"{server_path()}{os.pathsep}" if servers else ""
    env = os.environ | {
        "PATH": f"{first}{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "100",  # argparse wraps help to the terminal's width
        "PYTHONIOENCODING": "utf-8",
    }
    done = subprocess.run(
        ["bash", "-c", command], cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    output = done.stdout.decode("utf-8").replace(str(root), shown_as)
    return output if output.endswith("\n") or not output else output + "\n"


def commands(block: str) -> list[str]:
    return [line[len(PROMPT) :] for line in block.splitlines() if line.startswith(PROMPT)]


def session(block: str, root: Path, shown_as: str = SHOWN_ROOT, servers: bool = False) -> str:
    """The block as it should read: each command followed by what it prints now."""
    return "".join(f"{PROMPT}{command}\n{run(command, root, shown_as, servers)}" for command in commands(block))


@dataclass
class Shown:
    """A block's text as the docs show it, and how to get what a real run shows now."""

    text: str
    real: Callable[[], str]
    problem: str | None = None  # why the block cannot be run at all
    in_repository: bool = False  # run in this repository, not in the docs' project


def evaluate(example: Example) -> str | None:
    shown: Shown = example.parsed
    if shown.problem:
        return shown.problem
    actual = shown.real()
    if actual == shown.text:
        return None
    return f"the shown output differs from a real run (`make docs` rewrites it):\n--- shown\n{shown.text}--- real\n{actual}"


class ConsoleParser:
    """sybil parser: one example per ```console block, evaluated in `root`."""

    def __init__(self, root: Path, servers: bool | None = False) -> None:
        self.root = root
        self.lexer = FencedCodeBlockLexer("console")
        self.servers = servers  # only blocks that need servers (True), only others (False), all (None)

    def __call__(self, document: Document) -> Iterator[Region]:
        for lexed in self.lexer(document):
            needs = document.text[: lexed.start].endswith(SERVERS_MARK)
            if self.servers is not None and needs != self.servers:
                continue
            source = lexed.lexemes["source"]
            start = lexed.start + source.offset
            text = str(source)
            problem = None
            if not commands(text) or not text.startswith(PROMPT):
                problem = "a console block must start with a `$ ` command line"
            here = document.text[: lexed.start].endswith(IN_REPOSITORY + "\n")
            root, shown_as = (REPO, SHOWN_REPOSITORY) if here else (self.root, SHOWN_ROOT)
            real = lambda text=text, root=root, shown_as=shown_as, needs=needs: session(text, root, shown_as, needs)  # noqa: E731
            shown = Shown(text, real, problem, in_repository=here)
            yield Region(start, start + len(source), parsed=shown, evaluator=evaluate)


# The Neovim the editor examples run in, set up as the docs say (`lsp-agent` from PATH).
NVIM_SETUP = "{ init_options = { max_chars = 600 } }"
NVIM_EXAMPLE = re.compile(r"^<!-- nvim: (?P<steps>.+?) -->\n```[^\n]*\n(?P<shown>.*?)^```$", re.S | re.M)
SHOWN_HOME = str(Path(SHOWN_ROOT).parent)
SHOWN_SCRIPTS = f"{SHOWN_HOME}/lsp-agent/.venv/bin"  # where the docs' lsp-agent is installed


class Neovim:
    """One headless Neovim for every editor example, started at the first one."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.editor: Editor | None = None

    def start(self) -> Editor:
        home = self.root.parent / "nvim"
        home.mkdir(exist_ok=True)
        xdg = ("XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME")
        env = {name: str(home / name.lower()) for name in xdg}
        env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
        with mock.patch.dict(os.environ, env):  # Neovim (and so the server) inherits them
            return Editor(self.root, home, NVIM_SETUP)

    def shows(self, steps: list[str]) -> str:
        """What Neovim shows after `steps`, typed from one window and no buffers."""
        self.editor = self.editor or self.start()
        ed = self.editor
        ed.nvim.command("cclose | lclose | only! | silent! %bwipeout!")
        for step in steps:
            if step.startswith(":LspAgent"):
                ed.run(step[1:])
            elif step.startswith(":"):
                ed.nvim.command(step[1:])
                if step.startswith(":edit ") and ed.lua("return require('lsp_agent').root(0) ~= nil"):
                    ed.wait_attached()
            else:
                window = ed.nvim.current.window.handle
                ed.nvim.feedkeys(ed.nvim.replace_termcodes(step), "mx")  # typed: mappings apply
                ed.wait(f"vim.api.nvim_get_current_win() ~= {window}")
        text = "\n".join(ed.nvim.current.buffer[:]).strip("\n")
        text = text.replace(str(self.root), SHOWN_ROOT).replace(str(self.root.parent), SHOWN_HOME)
        return text.replace(str(Path(sys.executable).parent), SHOWN_SCRIPTS) + "\n"

    def close(self) -> None:
        if self.editor:
            self.editor.close()
            self.editor = None


class NvimParser:
    """sybil parser: one example per fenced block under `<!-- nvim: steps -->`."""

    def __init__(self, neovim: Neovim) -> None:
        self.neovim = neovim

    def __call__(self, document: Document) -> Iterator[Region]:
        for match in NVIM_EXAMPLE.finditer(document.text):
            steps = [step.strip() for step in match["steps"].split(" | ")]
            shown = Shown(match["shown"], lambda steps=steps: self.neovim.shows(steps))
            yield Region(match.start("shown"), match.end("shown"), parsed=shown, evaluator=evaluate)


def examples(
    root: Path, neovim: Neovim, paths: list[Path] = DOCS, servers: bool | None = False
) -> Iterator[tuple[Path, Example]]:
    parsers = [ConsoleParser(root, servers)] + ([NvimParser(neovim)] if servers is not True else [])
    sybil = Sybil(parsers=parsers, path=str(REPO))
    for path in paths:
        for example in sybil.parse(path):
            yield path, example


def rewrite(path: Path, root: Path, neovim: Neovim) -> bool:
    """Put the real output of every example of `path` into it; True if that changed it."""
    text = path.read_text(encoding="utf-8")
    new = text
    servers = None if SERVERS else False  # without the servers, their examples stay as they are
    for _, example in reversed(list(examples(root, neovim, [path], servers))):
        region = example.region
        new = new[: region.start] + example.parsed.real() + new[region.end :]
    if new != text:
        path.write_text(new, encoding="utf-8")
    return new != text


def build_readers_project() -> None:
    """`make docs-project`: the docs' project in build/docs/, where pages say to run them."""
    shutil.rmtree(READERS_PROJECT, ignore_errors=True)
    READERS_PROJECT.mkdir(parents=True)
    root = make_workspace(READERS_PROJECT)
    print(f"the docs' project: cd {root.relative_to(REPO)} (and ../navigation beside it)")


def main() -> None:
    if sys.argv[1:] == ["--project"]:
        return build_readers_project()
    with tempfile.TemporaryDirectory() as scratch:
        root = make_workspace(Path(scratch))
        neovim = Neovim(root)
        try:
            for path in DOCS:
                if rewrite(path, root, neovim):
                    print(f"rewrote {path.relative_to(REPO)}")
        finally:
            neovim.close()


if __name__ == "__main__":
    main()
