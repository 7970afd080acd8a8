"""Confinement under a race: a thread swaps a workspace file (and a folder) between a real
one and a symlink out of the workspace while every path-taking tool is called on it. A path
checked and then opened again by name would follow the link in the window between the two;
no answer may ever hold the outside file's text or names.

`make test` runs a few hundred calls (`RACE_CALLS`, default 400); the acceptance run of
10,000 is `RACE_CALLS=10000 pytest tests/workspace/test_race_swap.py` (a few minutes, see
docs/reliability.md)."""

from __future__ import annotations

import json
import os
import threading
from collections import Counter
from pathlib import Path

import pytest

from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

SECRET = "OUTSIDE_SECRET_7731"
CALLS = int(os.environ.get("RACE_CALLS", "400"))


def file_swapper(path: Path, body: str, target: Path, stop: threading.Event) -> None:
    """`path` becomes a symlink to `target`, then a real file again, each by one rename."""
    spare_link, spare_file = path.with_name(".swap-link"), path.with_name(".swap-file")
    while not stop.is_set():
        spare_link.unlink(missing_ok=True)
        spare_link.symlink_to(target)
        os.rename(spare_link, path)
        spare_file.write_text(body)
        os.rename(spare_file, path)


def folder_swapper(folder: Path, target: Path, stop: threading.Event) -> None:
    """`folder` becomes a symlink to the folder `target`, then the real folder again."""
    parked, spare_link = folder.with_name(".parked"), folder.with_name(".swap-dir-link")
    while not stop.is_set():
        spare_link.unlink(missing_ok=True)
        spare_link.symlink_to(target, target_is_directory=True)
        os.rename(folder, parked)
        os.rename(spare_link, folder)
        os.unlink(folder)
        os.rename(parked, folder)


@pytest.fixture
def arena(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.py").write_text(f"def {SECRET}():\n    return inside()  # {SECRET}\n")
    (outside / "mod.py").write_text(f"def {SECRET}():\n    return inside()  # {SECRET}\n")
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    body = "def inside():\n    return 'INSIDE'\n"
    (root / "f.py").write_text(body)
    (root / "pkg" / "mod.py").write_text(body)
    return root, outside, body


def calls() -> list[tuple[str, dict]]:
    return [
        ("read", {"path": "f.py"}),
        ("symbols", {"path": "f.py"}),
        ("find_symbol", {"name_path": "SECRET_77", "substring": True, "path": "f.py", "include_body": True}),
        ("find_symbol", {"name_path": "inside", "path": "f.py", "include_body": True}),
        ("search", {"pattern": "return", "paths": ["f.py"]}),
        ("references", {"path": "f.py", "line": 1, "column": 5}),
        ("references", {"name": "inside", "paths": ["pkg", "f.py"]}),
        ("overview", {"path": "f.py"}),
        ("read", {"path": "pkg/mod.py"}),
        ("symbols", {"path": "pkg"}),
        ("find_symbol", {"name_path": "SECRET_77", "substring": True, "path": "pkg", "include_body": True}),
        ("search", {"pattern": "return", "paths": ["pkg"]}),
        ("search", {"pattern": "return"}),
        ("list_files", {"path": "pkg"}),
        ("symbols", {"path": "pkg/mod.py"}),
        ("overview", {"path": "pkg"}),
        ("definition", {"path": "f.py", "line": 2, "column": 12}),
        ("definition", {"name": "inside"}),
        ("read", {"path": "f.py", "paths": ["pkg/mod.py"]}),
    ]


def no_leaks_while_swapped(ctx: Context, plan: list[tuple[str, dict]], swappers: list[tuple]) -> None:
    """CALLS calls of the plan, in turn, while each swapper (function, arguments) runs in a
    thread of its own: every one answered, none with the outside file's text or names."""
    stop = threading.Event()
    threads = [threading.Thread(target=swap, args=(*arguments, stop)) for swap, *arguments in swappers]
    for thread in threads:
        thread.start()
    leaks, answered = [], 0
    try:
        for n in range(CALLS):
            tool, arguments = plan[n % len(plan)]
            answer = call(ctx, tool, arguments)
            answered += 1
            if SECRET in json.dumps(answer):
                leaks.append((tool, arguments, answer["text"][:200]))
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert answered == CALLS
    by_tool = Counter(f"{tool} {sorted(arguments.items())}" for tool, arguments, _ in leaks)
    assert leaks == [], f"{len(leaks)} leaks in {CALLS} calls: {dict(by_tool)}; first: {leaks[:2]}"


def test_no_tool_reads_outside_while_a_file_and_a_folder_are_swapped(arena):
    root, outside, body = arena
    swappers = [
        (file_swapper, root / "f.py", body, outside / "f.py"),
        (folder_swapper, root / "pkg", outside),
    ]
    no_leaks_while_swapped(Context(Workspace([root])), calls(), swappers)


def nested_calls(root: Path) -> list[tuple[str, dict]]:
    pkg, mod = str(root / "pkg"), str(root / "pkg" / "mod.py")
    return [
        ("search", {"pattern": "return"}),
        ("search", {"pattern": "return", "paths": [str(root)]}),
        ("search", {"pattern": "return", "paths": [pkg]}),
        ("read", {"path": mod}),
        ("symbols", {"path": pkg}),
        ("find_symbol", {"name_path": "SECRET_77", "substring": True, "include_body": True}),
        ("find_symbol", {"name_path": "inside", "path": pkg, "include_body": True}),
        ("references", {"name": "inside"}),
        ("list_files", {"path": pkg}),
        ("overview", {"path": pkg}),
        ("definition", {"name": "inside"}),
    ]


def test_no_tool_reads_outside_while_a_root_inside_another_is_swapped(arena):
    """Roots [ws/pkg, ws]: the inner root is opened beneath the outer one, one name at a
    time (Workspace.confining_root), never by its own path, which the swap leads out."""
    root, outside, _ = arena
    ctx = Context(Workspace([root / "pkg", root]))
    no_leaks_while_swapped(ctx, nested_calls(root), [(folder_swapper, root / "pkg", outside)])


PASS_THROUGH = """
import json, sys
from pathlib import Path
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
ws = Path(sys.argv[1]); pkg = ws / "locked" / "pkg"
ctx = Context(Workspace([pkg, ws]))
answers = [call(ctx, tool, arguments)["text"] for tool, arguments in (
    ("search", {"pattern": "x ="}),
    ("read", {"path": str(pkg / "a.py")}),
    ("list_files", {"path": str(pkg)}),
    ("edit", {"path": str(pkg / "a.py"), "old_text": "x = 1", "new_text": "x = 5"}),
)]
print(json.dumps(answers))
"""


def test_a_root_inside_another_behind_a_folder_one_may_only_pass_through():
    """Roots [ws/locked/pkg, ws], `locked` mode 0111 (a home folder often is, to others): its
    files are reached through the outer root, and a folder on the way is only passed through
    (O_PATH), as a path opened by its name needs. Run as a user the modes bind (root is not)."""
    import shutil
    import subprocess
    import sys

    as_user: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("running as root, with no setpriv to run as another user")
        as_user = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="pass-through-"))  # not pytest's folder: root's alone
    base.chmod(0o755)
    ws = base / "ws"
    (ws / "locked" / "pkg").mkdir(parents=True)
    (ws / "locked" / "pkg" / "a.py").write_text("x = 1\n")
    (ws / "b.py").write_text("x = 2\n")
    if as_user:
        for folder, _, files in os.walk(base):
            os.chown(folder, 65534, 65534)
            for name in files:
                os.chown(os.path.join(folder, name), 65534, 65534)
    (ws / "locked").chmod(0o111)
    try:
        done = subprocess.run(
            [*as_user, sys.executable, "-c", PASS_THROUGH, str(ws)],
            capture_output=True, text=True, timeout=120, cwd=base,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
        )  # fmt: skip
    finally:
        (ws / "locked").chmod(0o755)
        answer_file = (ws / "locked" / "pkg" / "a.py").read_text()
        shutil.rmtree(base)
    assert done.returncode == 0, done.stderr
    search, read, listed, edit = json.loads(done.stdout)
    assert "pkg/a.py" in search and "b.py" in search
    assert "x = 1" in read and "pkg/a.py" in listed and "written" in edit
    assert answer_file == "x = 5\n"
