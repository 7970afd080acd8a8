"""Edits under faults: a symlink swapped in between the check and the write, a target that
vanished or changed, a full or read-only disk, a killed writer, two clients at once. Each is
a refusal saying what happened, and the file is exactly the old text or exactly the new."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from lsp_agent.errors import Refusal
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace, content_version
from lsp_agent.writer import TEMPORARY_PREFIX, write_file

IN_CI = os.environ.get("CI") == "true"


@pytest.fixture
def arena(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("OUTSIDE\n")
    root = tmp_path / "ws"
    (root / "sub").mkdir(parents=True)
    (root / "sub" / "f.txt").write_text("inside\n")
    return root, outside


def refused(code: str, fn, *args, **kwargs) -> Refusal:
    with pytest.raises(Refusal) as caught:
        fn(*args, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value


def test_a_folder_swapped_for_a_link_after_the_check_is_not_followed(arena):
    root, outside = arena
    path = root / "sub" / "f.txt"  # checked (resolved) before the swap
    version = content_version(path.read_bytes())
    shutil.rmtree(root / "sub")
    (root / "sub").symlink_to(outside, target_is_directory=True)
    refused("outside_workspace", write_file, root, path, b"written\n", expected=version, shown="sub/f.txt")
    assert (outside / "f.txt").read_text() == "OUTSIDE\n"
    assert not [p for p in outside.iterdir() if p.name.startswith(TEMPORARY_PREFIX)]


def test_a_file_swapped_for_a_link_after_the_check_is_refused(arena):
    root, outside = arena
    path = root / "sub" / "f.txt"
    version = content_version(path.read_bytes())
    path.unlink()
    path.symlink_to(outside / "f.txt")
    refused("outside_workspace", write_file, root, path, b"written\n", expected=version, shown="sub/f.txt")
    assert (outside / "f.txt").read_text() == "OUTSIDE\n" and path.is_symlink()


def test_a_vanished_or_changed_target_is_refused_and_left_alone(arena):
    root, _ = arena
    path = root / "sub" / "f.txt"
    version = content_version(path.read_bytes())
    path.write_text("someone else\n")
    refusal = refused("stale", write_file, root, path, b"mine\n", expected=version, shown="sub/f.txt")
    assert refusal.fields["current_version"] == content_version(b"someone else\n")
    assert path.read_text() == "someone else\n"
    path.unlink()
    refused("vanished", write_file, root, path, b"mine\n", expected=version, shown="sub/f.txt")
    assert not path.exists()
    refused("is_directory", write_file, root, root / "sub", b"x", expected=version, shown="sub")


def test_a_swapping_thread_never_gets_an_edit_outside(arena):
    """A thread swaps the folder between the real one and a link out while edits run."""
    root, outside = arena
    (outside / "f.txt").write_text("inside\n")  # the same text: only confinement can refuse it
    stop = threading.Event()
    swaps = []

    def place(source: Path, name: Path) -> None:
        """Rename, first clearing a folder create_file made at `name` in the meantime."""
        while True:
            try:
                os.rename(source, name)
                return
            except OSError:
                shutil.rmtree(name, ignore_errors=True)

    def swap() -> None:
        folder, parked, link = root / "sub", root / ".parked", root / ".link"
        while not stop.is_set():
            link.unlink(missing_ok=True)
            link.symlink_to(outside, target_is_directory=True)
            os.rename(folder, parked)
            place(link, folder)
            os.unlink(folder)
            place(parked, folder)
            swaps.append(1)

    swapper = threading.Thread(target=swap)
    swapper.start()
    ctx = Context(Workspace([root]))
    try:
        for n in range(200):
            call(ctx, "edit", {"path": "sub/f.txt", "old_text": "inside", "new_text": "inside"})
            call(ctx, "create_file", {"path": f"sub/new{n}.txt", "content": "x\n"})
    finally:
        stop.set()
        swapper.join()
    assert swaps, "the swapper ran"
    assert sorted(p.name for p in outside.iterdir()) == ["f.txt"]
    assert (outside / "f.txt").read_text() == "inside\n"


def test_two_clients_editing_one_version_one_applies_the_other_is_stale(tmp_path):
    (tmp_path / "f.py").write_text("x = 0\n")
    version = content_version(b"x = 0\n")
    for _ in range(20):
        (tmp_path / "f.py").write_text("x = 0\n")
        barrier = threading.Barrier(2)
        answers: dict[int, dict] = {}

        def client(n: int, barrier: threading.Barrier = barrier, answers: dict = answers) -> None:
            ctx = Context(Workspace([tmp_path]))  # a server of its own
            ctx.workspace.text(ctx.workspace.resolve("f.py"))
            barrier.wait()
            arguments = {"path": "f.py", "start": 1, "end": 1, "new_text": f"x = {n}", "if_version": version}
            answers[n] = call(ctx, "edit", arguments)

        threads = [threading.Thread(target=client, args=(n,)) for n in (1, 2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        applied = [n for n, a in answers.items() if "error" not in a]
        assert len(applied) == 1, answers
        [loser] = [a for a in answers.values() if "error" in a]
        assert loser["error"]["code"] == "stale" and "nothing was" in loser["text"]
        assert (tmp_path / "f.py").read_text() == f"x = {applied[0]}\n"


KILLED_WRITER = """
import sys
from pathlib import Path
from lsp_agent.workspace import content_version
from lsp_agent.writer import write_file
root, a, b = Path(sys.argv[1]), Path(sys.argv[2]).read_bytes(), Path(sys.argv[3]).read_bytes()
path = root / "big.txt"
current = path.read_bytes()
print("ready", flush=True)
while True:
    new = b if current == a else a
    write_file(root, path, new, expected=content_version(current), shown="big.txt")
    current = new
"""


@pytest.mark.parametrize("delay_ms", [0, 3, 7, 15, 30, 60])
def test_a_killed_write_leaves_the_old_or_the_new_file(tmp_path, delay_ms):
    root = tmp_path / "ws"
    root.mkdir()
    a, b = b"a" * 3_000_000 + b"\n", b"b\n" * 1_000_000
    (tmp_path / "a").write_bytes(a)
    (tmp_path / "b").write_bytes(b)
    (root / "big.txt").write_bytes(a)
    writer = subprocess.Popen(
        [sys.executable, "-c", KILLED_WRITER, str(root), str(tmp_path / "a"), str(tmp_path / "b")],
        stdout=subprocess.PIPE,
    )
    assert writer.stdout is not None and writer.stdout.readline() == b"ready\n"
    threading.Event().wait(delay_ms / 1000)  # the point of the kill, not a wait for a result
    writer.kill()
    writer.wait()
    assert (root / "big.txt").read_bytes() in (a, b)


FULL_AND_READ_ONLY = """
set -e
mount -t tmpfs -o size=256k tmpfs "$1"
printf 'small = 1\\n' > "$1/f.py"
"$2" - "$1" <<'PY'
import json, sys
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
ctx = Context(Workspace([sys.argv[1]]))
full = call(ctx, "edit", {"path": "f.py", "old_text": "small = 1", "new_text": "big = '" + "x" * 400_000 + "'"})
created = call(ctx, "create_file", {"path": "g.py", "content": "y" * 400_000})
print(json.dumps({"full": full.get("error"), "text": open(sys.argv[1] + "/f.py").read(), "created": created.get("error")}))
PY
mount -o remount,ro "$1"
"$2" - "$1" <<'PY'
import json, sys
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
ctx = Context(Workspace([sys.argv[1]]))
ro = call(ctx, "edit", {"path": "f.py", "old_text": "small = 1", "new_text": "small = 2"})
print(json.dumps({"ro": ro.get("error"), "text": open(sys.argv[1] + "/f.py").read()}))
PY
"""


def test_a_full_or_read_only_disk_is_refused_and_the_file_unchanged(tmp_path):
    """A real full and read-only file system: a tmpfs mounted in a user namespace."""
    unshare = shutil.which("unshare")
    probe = subprocess.run([unshare or "unshare", "-rm", "true"], capture_output=True) if unshare else None
    if probe is None or probe.returncode != 0:
        if IN_CI:
            pytest.fail("unshare -rm (user and mount namespaces) is needed for the disk-fault test")
        pytest.skip("no user namespaces here")
    mount = tmp_path / "disk"
    mount.mkdir()
    script = tmp_path / "faults.sh"
    script.write_text(FULL_AND_READ_ONLY)
    out = subprocess.run(
        ["unshare", "-rm", "sh", str(script), str(mount), sys.executable], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    full, ro = (json.loads(line) for line in out.stdout.splitlines())
    assert full["full"]["code"] == "disk_full" and "unchanged" in full["full"]["message"]
    assert full["created"]["code"] == "disk_full"
    assert full["text"] == "small = 1\n"
    assert ro["ro"]["code"] == "read_only" and ro["text"] == "small = 1\n"


def test_writer_leaves_no_temporary_file_after_a_refusal(arena):
    root, _ = arena
    path = root / "sub" / "f.txt"
    refused("stale", write_file, root, path, b"x", expected="00000000", shown="sub/f.txt")
    assert sorted(p.name for p in path.parent.iterdir()) == ["f.txt"]
    assert Path(path).read_text() == "inside\n"


def test_a_file_where_a_folder_should_be_is_said_so(arena):
    root, _ = arena
    ctx = Context(Workspace([root]))
    answer = call(ctx, "create_file", {"path": "sub/f.txt/inner.py", "content": "x\n"})
    assert answer["error"]["code"] == "not_a_folder"
    assert (root / "sub" / "f.txt").read_text() == "inside\n"
