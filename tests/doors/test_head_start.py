"""A one-shot command's head start (head_start.py): `search PATTERN` and `find-symbol NAME`
read from argv before the CLI is imported, search's rg started at once and taken over by the
engine. Run through the real entry point (`lsp_agent.__main__:main`, the console script's),
the answers are the CLI's own, byte for byte, and the parser is never built."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lsp_agent import ahead, head_start
from lsp_agent.config import Settings
from lsp_agent.search import ripgrep
from lsp_agent.search.ripgrep import Lines
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

# The console script's own code (pip writes it so), reporting the modules imported at exit.
ENTRY = """
import json, sys
report = sys.argv.pop(1)
from lsp_agent.__main__ import main
code = main()
with open(report, "w") as out:
    json.dump(sorted(sys.modules), out)
sys.exit(code)
"""
# The CLI without a head start: cli.main, as the tests of the CLI run it.
CLI = "import sys\nfrom lsp_agent.cli import main\nsys.exit(main())"


def project(root: Path) -> Path:
    root.mkdir(exist_ok=True)
    (root / "shop.py").write_text("class Cart:\n    def total(self):\n        return sum(self.items)\n")
    (root / "use.py").write_text(
        "from shop import Cart\n\n\ndef checkout(cart: Cart):\n    return cart.total()\n"
    )
    for name in ("shop.py", "use.py"):  # written long ago: their stat vouches for their records
        os.utime(root / name, (time.time() - 60, time.time() - 60))
    return root


def run(code: list[str], root: Path, *argv: str, **env: str) -> subprocess.CompletedProcess:
    environment = {**os.environ, "LSP_AGENT_NO_SERVER": "1", **env}
    return subprocess.run(
        [sys.executable, *code, *argv], cwd=root, env=environment, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "total"],
        ["search", "Cart", "use.py"],
        ["search", "Cart", "use.py", "missing.py"],
        ["search", "(unclosed"],
        ["find-symbol", "total"],
        ["find-symbol", "Cart/total", "shop.py"],
        ["find-symbol", "a", "b", "c"],  # misuse: one positional too many
        ["search", "total", "--root", "missing"],  # misuse: no such root
        ["search", "total", "-i"],  # a flag: the CLI's way
    ],
)
def test_a_head_start_answers_as_the_cli(tmp_path, index_cache, argv):
    root = project(tmp_path / "p")
    SymbolIndex(Workspace([root]), cache=index_cache).build()
    report = tmp_path / "modules.json"
    early = run(["-c", ENTRY, str(report)], root, *argv)
    plain = run(["-c", CLI], root, *argv)
    assert (early.returncode, early.stdout, early.stderr) == (plain.returncode, plain.stdout, plain.stderr)
    if early.returncode == 0 and "-i" not in argv:
        assert "argparse" not in json.loads(report.read_text())  # answered without the parser
    # the console script's entry: the process ends once the head start's answer is written
    script = run(["-m", "lsp_agent"], root, *argv)
    assert (script.returncode, script.stdout, script.stderr) == (plain.returncode, plain.stdout, plain.stderr)


# What a one-shot with no server to ask does without (each costs a start milliseconds):
# typing (imported by type checkers only), the socket a server would be asked through,
# tempfile (the temporary folder where a server's socket would be is found without it), and
# what inspect imports (dataclasses' import of it is put off: __main__.inspect_on_first_use).
NOT_IMPORTED = ("typing", "socket", "tempfile", "ast", "dis", "tokenize")


@pytest.mark.parametrize("argv", [["search", "total"], ["find-symbol", "total"]])
def test_a_one_shot_with_no_server_to_ask_imports_only_what_it_uses(tmp_path, index_cache, argv):
    root = project(tmp_path / "p")
    SymbolIndex(Workspace([root]), cache=index_cache).build()
    runtime = tmp_path / "runtime"  # where a server of the roots would listen: it holds none
    runtime.mkdir(mode=0o700)
    report = tmp_path / "modules.json"
    environment = {k: v for k, v in os.environ.items() if k != "LSP_AGENT_NO_SERVER"}
    early = subprocess.run(
        [sys.executable, "-c", ENTRY, str(report), *argv],
        cwd=root,
        env={**environment, "XDG_RUNTIME_DIR": str(runtime)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    plain = run(["-c", CLI], root, *argv)
    assert (early.returncode, early.stdout) == (0, plain.stdout) and "total" in early.stdout
    modules = set(json.loads(report.read_text()))
    assert "lsp_agent.local" in modules  # it looked for a server
    assert [m for m in NOT_IMPORTED if m in modules] == []


def test_the_rg_started_ahead_is_the_one_taken_over(tmp_path, index_cache):
    root = project(tmp_path / "p")
    ctx = Context(Workspace([root]))
    expected = call(ctx, "search", {"pattern": "total"})
    ahead.search_ahead("total", str(root))
    assert len(ahead.STARTED) == 1
    assert call(ctx, "search", {"pattern": "total"}) == expected
    assert ahead.STARTED == []  # taken over: the search started no rg of its own


def test_an_rg_started_for_another_search_is_not_taken_and_is_reaped(tmp_path, index_cache):
    root = project(tmp_path / "p")
    ctx = Context(Workspace([root]))
    expected = call(ctx, "search", {"pattern": "Cart", "ignore_case": True})
    ahead.search_ahead("Cart", str(root))
    (started,) = ahead.STARTED
    assert call(ctx, "search", {"pattern": "Cart", "ignore_case": True}) == expected
    assert [started] == ahead.STARTED  # other flags: another rg
    ahead.discard()
    assert ahead.STARTED == []
    with pytest.raises(ChildProcessError):
        os.waitpid(started.pid, os.WNOHANG)  # reaped


def test_an_rg_started_ahead_is_freed_from_a_fifo(tmp_path, index_cache):
    """A FIFO named .gitignore stops rg until someone opens it for writing: the engine
    frees the rg it takes over as it frees its own (walk.free_from_fifos)."""
    root = project(tmp_path / "p")
    (root / "sub").mkdir()
    (root / "sub" / "a.py").write_text("def walked():\n    return 'total'\n")
    os.mkfifo(root / "sub" / ".gitignore")
    ahead.search_ahead("total", str(root))
    answer = call(Context(Workspace([root])), "search", {"pattern": "total"})
    assert ahead.STARTED == [] and answer["total_matches"] == 3


def test_a_server_is_sent_the_clis_budget():
    assert Settings.max_chars == head_start.MAX_CHARS


def test_a_common_pattern_taken_over_is_counted_as_the_search_counts_it(tmp_path, index_cache):
    """Past what a page can show, the match lines of the output taken over are skipped a
    run at a time (ripgrep.Lines): the counts are the ones of rg's own run."""
    root = project(tmp_path / "p")
    for n in range(30):
        # every other line: each match a run of its own, too many for a page to show
        (root / f"m{n}.py").write_text("".join(f"x{i} = 'needle'\ny = 1\n" for i in range(400 + n)))
    ctx = Context(Workspace([root]))
    expected = call(ctx, "search", {"pattern": "needle"})
    ahead.search_ahead("needle", str(root))
    assert call(ctx, "search", {"pattern": "needle"}) == expected
    assert ahead.STARTED == [] and expected["total_matches"] == sum(400 + n for n in range(30))
    assert expected["locations"] is None  # counts only: the details were dropped midway


KINDS = st.sampled_from(["begin", "match", "context", "end", "summary"])


def record(kind: str, text: str) -> str:
    return json.dumps({"type": kind, "data": {"text": text}}, separators=(",", ":"))


def kinds_read(data: bytes, context: bool) -> list[list[str]]:
    """The record kinds each way of reading `data` sees (whole, and from a pipe in chunks of
    1, 7 and 1 MiB bytes), match lines counted by Lines.skip_matches after the first."""
    seen_all = []
    for size in (1, 7, 1 << 20):
        read, write = os.pipe()
        os.write(write, data)  # a few KiB at most: within the pipe's buffer
        os.close(write)
        ripgrep.READ, before = size, ripgrep.READ
        try:
            for stream in (Lines(data, context=context), Lines(fd=read, context=context)):
                seen = []
                for raw in stream:
                    if raw.startswith(b'{"type":"match"'):
                        seen += ["match"] * (1 + stream.skip_matches())
                    else:
                        seen.append(json.loads(raw)["type"])
                seen_all.append(seen)
        finally:
            ripgrep.READ = before
            os.close(read)
    return seen_all


@given(st.lists(st.tuples(KINDS, st.text(alphabet='ab"\\{}: \n', max_size=6)), max_size=30), st.booleans())
def test_skipping_match_lines_counts_them_all(records, ended):
    """Lines.skip_matches skips exactly the match lines a line-by-line reading would see
    next, whatever the strings inside them hold, wherever the chunks read from a pipe end."""
    lines = [record(kind, text) for kind, text in records]
    data = "\n".join(lines).encode() + (b"\n" if ended and lines else b"")
    assert all(seen == [kind for kind, _ in records] for seen in kinds_read(data, context=True))


TEXT = st.text(alphabet='ab"\\{}: \n', max_size=6)


@given(st.lists(st.tuples(TEXT, st.lists(TEXT, max_size=8)), max_size=8), st.booleans())
def test_without_context_match_lines_are_skipped_to_their_file_s_end(files, summary):
    """Without context lines (no -A/-B), rg writes each file's matches between its begin and
    end records: skipped up to the end record's bytes, the counts are a line-by-line reading's."""
    kinds, lines = [], []
    for path, matches in files:
        kinds += ["begin", *["match"] * len(matches), "end"]
        lines += [record("begin", path), *(record("match", m) for m in matches), record("end", path)]
    if summary:
        kinds.append("summary")
        lines.append(record("summary", ""))
    data = ("\n".join(lines) + "\n").encode() if lines else b""
    assert all(seen == kinds for seen in kinds_read(data, context=False))


def rg_record(kind: str, path: str, text: str = "") -> str:
    """A record in ripgrep's own shape, which names its file (an end record: its stats too)."""
    data: dict = {"path": {"text": path}}
    if kind == "match":
        data |= {"lines": {"text": text + "\n"}, "line_number": 1, "absolute_offset": 0, "submatches": []}
    elif kind == "end":
        data |= {"binary_offset": None, "stats": {"matched_lines": 1, "matches": 1}}
    return json.dumps({"type": kind, "data": data}, separators=(",", ":"))


PATHS = st.text(alphabet='ab./"\\', min_size=1, max_size=4)


@given(st.lists(st.tuples(PATHS, st.lists(TEXT, max_size=8)), max_size=8))
def test_a_files_end_is_found_by_its_path_whatever_the_paths(files):
    """A file's end record is looked for by its path (end_of) where its begin record is in the
    usual shape: files whose paths share a start, or hold quotes and backslashes (escaped: the
    plain needle then), and matches that quote a path, are skipped as a line-by-line reading
    sees them."""
    kinds, lines = [], []
    for path, matches in files:
        kinds += ["begin", *["match"] * len(matches), "end"]
        lines += [rg_record("begin", path), *(rg_record("match", path, m + path) for m in matches), rg_record("end", path)]  # fmt: skip
    data = ("\n".join(lines) + "\n").encode() if lines else b""
    assert all(seen == kinds for seen in kinds_read(data, context=False))


@pytest.mark.parametrize("name", ["total", "Cart"])
def test_find_symbols_rg_started_ahead_is_taken_over(tmp_path, index_cache, name):
    root = project(tmp_path / "p")
    SymbolIndex(Workspace([root]), cache=index_cache).build()
    expected = call(Context(Workspace([root])), "find_symbol", {"name_path": name})
    from lsp_agent.oneshot import tool_context

    assert head_start.start(["find-symbol", name, "--root", str(root)]) is None
    assert len(ahead.STARTED) == 1
    assert (
        call(tool_context("find_symbol", [str(root)], Settings()), "find_symbol", {"name_path": name})
        == expected
    )
    assert ahead.STARTED == []


def test_a_name_path_of_parts_gets_no_head_start(tmp_path, monkeypatch):
    monkeypatch.setenv("LSP_AGENT_NO_SERVER", "1")
    root = project(tmp_path / "p")
    for name in ("Cart/total", "shop.Cart", "a b"):
        assert head_start.start(["find-symbol", name, "--root", str(root)]) is None
        assert ahead.STARTED == [], name


def test_inspect_put_off_is_the_module_itself_on_first_use():
    """The stand-in __main__ puts in inspect's place answers every name from the module
    itself, loaded on the first name asked; a dataclass with no docstring still gets its
    signature as one; importers after that get the module itself."""
    code = """
import sys
from lsp_agent import __main__
stand_in = sys.modules["inspect"]
import dataclasses, inspect
assert inspect is stand_in and "ast" not in sys.modules
@dataclasses.dataclass
class Point:
    x: int
    y: int = 0
assert Point.__doc__ == "Point(x: int, y: int = 0)", Point.__doc__
import inspect as again
assert again is not stand_in and again is sys.modules["inspect"] and "ast" in sys.modules
assert stand_in.signature is again.signature and str(again.signature(Point)) == "(x: int, y: int = 0) -> None"
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def test_inspect_used_while_its_first_use_imports_it_does_not_hang():
    """Code using inspect in the thread whose first use is importing it (a signal handler, a
    finalizer; here an import hook, so that it comes at that very moment) meets the module as
    Python leaves any module mid-import, and never waits on the import it interrupted."""
    code = """
import sys
from lsp_agent import __main__
import inspect as stand_in
met = []
class Meddler:
    def find_spec(self, name, path=None, target=None):
        if name == "inspect" and not met:
            met.append("during")
            try:
                met.append(stand_in.isfunction(len))
            except AttributeError:  # not defined yet: the module is mid-import
                met.append("mid-import")
        return None
sys.meta_path.insert(0, Meddler())
stand_in.signature
assert met[0] == "during" and stand_in.isfunction(len) is False, met
assert sys.modules["inspect"] is not stand_in
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
