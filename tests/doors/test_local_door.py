"""One-shot commands answered by a running server of the same roots (local.py): the same
answer as alone, without loading the index; alone again when no server answers."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent import local
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.raw_rpc import RawClient

IMPORTED = """
import contextlib, io, json, sys
from lsp_agent.cli import main
with contextlib.redirect_stdout(io.StringIO()) as out:
    code = main(sys.argv[1:])
print(json.dumps({"code": code, "text": out.getvalue(), "modules": sorted(sys.modules)}))
"""

# The console script's way in (head_start.py first), reporting the modules it imported.
ENTRY = """
import json, sys
from lsp_agent.__main__ import main
code = main()
print(json.dumps({"modules": sorted(sys.modules)}), file=sys.stderr)
sys.exit(code)
"""


@pytest.fixture
def runtime(tmp_path_factory, monkeypatch):
    """Sockets in a folder of this test's (short: a socket's path is at most ~100 bytes)."""
    folder = tmp_path_factory.mktemp("run")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    return folder


def one_shot(root: Path, *argv: str, alone: bool = False) -> dict:
    env = {**os.environ} | ({"LSP_AGENT_NO_SERVER": "1"} if alone else {})
    done = subprocess.run(
        [sys.executable, "-c", IMPORTED, *argv, "--root", str(root)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout)


def head_shot(root: Path, *argv: str) -> dict:
    """A command through the console script's entry: its code, text and modules."""
    done = subprocess.run(
        [sys.executable, "-c", ENTRY, *argv, "--root", str(root)], capture_output=True, text=True, check=False
    )
    return {"code": done.returncode, "text": done.stdout, **json.loads(done.stderr.splitlines()[-1])}


def project(root: Path) -> Path:
    (root / "shop.py").write_text("class Cart:\n    def total(self):\n        return sum(self.items)\n")
    (root / "use.py").write_text(
        "from shop import Cart\n\n\ndef checkout(cart: Cart):\n    return cart.total()\n"
    )
    return root


async def wait_for(condition, timeout: float = 60) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.05)


def test_commands_ask_a_running_server_of_the_same_roots(tmp_path, index_cache, runtime):
    root = project_dir(tmp_path)
    listening = Path(local.socket_path(Workspace([root]).roots))

    async def scenario() -> None:
        client = await RawClient.start()
        try:
            await client.initialize(root)
            await wait_for(listening.exists)  # bound once the index is built
            for argv in (
                ["find-symbol", "total"],
                ["search", "Cart"],
                ["references", "Cart"],
                ["read", "use.py"],
            ):
                asked = await asyncio.to_thread(one_shot, root, *argv)
                alone = await asyncio.to_thread(one_shot, root, *argv, alone=True)
                assert asked["code"] == alone["code"] == 0
                assert asked["text"] == alone["text"], argv
                # the server answered: the command loaded no index and imported no tool
                assert "lsp_agent.syntax.store" not in asked["modules"], argv
                assert "lsp_agent.syntax.store" in alone["modules"] or argv[0] in ("references", "read")
            for argv in (["find-symbol", "total"], ["search", "Cart"], ["search", "Cart", "use.py"]):
                # the head start asks before the CLI's imports: neither the tools nor the settings
                ahead = await asyncio.to_thread(head_shot, root, *argv)
                alone = await asyncio.to_thread(one_shot, root, *argv, alone=True)
                assert (ahead["code"], ahead["text"]) == (alone["code"], alone["text"]), argv
                assert not {"lsp_agent.tools", "lsp_agent.config", "argparse"} & set(ahead["modules"]), argv
            # a setting of its own: the command answers alone (the server has its settings)
            own = await asyncio.to_thread(one_shot, root, "search", "Cart", "--default-max-chars", "300")
            assert "lsp_agent.syntax.store" in own["modules"]
            # a file open in the server (an editor's buffer): the command answers alone, from the disk
            uri = (root / "shop.py").as_uri()
            text = "class Basket:\n    pass\n"
            client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})  # fmt: skip
            await client.call(
                "textDocument/documentSymbol", {"textDocument": {"uri": uri}}
            )  # the buffer is in
            opened = await asyncio.to_thread(one_shot, root, "search", "Cart")
            assert "lsp_agent.syntax.store" in opened["modules"] and "shop.py" in opened["text"]
        finally:
            await client.finish()
        assert not listening.exists()  # removed at shutdown

    asyncio.run(scenario())


def project_dir(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    root.mkdir()
    return project(root)


def test_a_listener_answers_through_its_function_and_only_its_user(tmp_path, runtime):
    root = project_dir(tmp_path)
    ws = Workspace([root])
    listener = local.Listener(lambda name, arguments: call(Context(ws), name, arguments))
    listener.listen(ws.roots)
    try:
        path = Path(local.socket_path(ws.roots))
        assert path.exists() and local.private(str(path.parent))
        answer = local.ask(ws.roots, "find_symbol", {"name_path": "total", "max_chars": 20_000})
        assert answer == call(Context(ws), "find_symbol", {"name_path": "total"})
        assert local.ask([root / "elsewhere"], "find_symbol", {"name_path": "total"}) is None
    finally:
        listener.close()
    assert not path.exists()
    assert local.ask(ws.roots, "find_symbol", {"name_path": "total"}) is None  # nobody listens


def test_a_socket_left_behind_or_a_shared_folder_is_not_asked(tmp_path, runtime):
    root = project_dir(tmp_path)
    roots = Workspace([root]).roots
    path = Path(local.socket_path(roots))
    assert local.private(str(path.parent), make=True)
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(str(path))  # bound, never listening: a server that died
    left.close()
    assert local.ask(roots, "read", {"path": "shop.py"}) is None
    path.parent.chmod(0o755)  # others may enter: not this user's private folder
    assert not local.private(str(path.parent))
    assert local.ask(roots, "read", {"path": "shop.py"}) is None


def test_a_malformed_request_gets_no_answer_and_the_listener_goes_on(tmp_path, runtime):
    root = project_dir(tmp_path)
    ws = Workspace([root])
    listener = local.Listener(lambda name, arguments: call(Context(ws), name, arguments))
    listener.listen(ws.roots)
    try:
        for junk in (b"not json\n", b'{"arguments": {}}\n', b"[1, 2]\n"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:
                raw.connect(local.socket_path(ws.roots))
                raw.sendall(junk)
                raw.shutdown(socket.SHUT_WR)
                assert local.read_all(raw, None) == b""
        answer = local.ask(ws.roots, "read", {"path": "shop.py", "max_chars": 20_000})
        assert answer is not None and "class Cart" in answer["text"]
    finally:
        listener.close()


@pytest.mark.parametrize(
    ("environment", "folder"),
    [
        ({"TMPDIR": "/var/tmp/x"}, "/var/tmp/x"),
        ({"TEMP": "/srv/t"}, "/srv/t"),
        ({"TMPDIR": "", "TMP": "/srv/u"}, "/srv/u"),
        ({"TMPDIR": "relative"}, None),  # made absolute, from where the command runs
        ({}, "/tmp"),
    ],
)
def test_without_a_runtime_folder_the_socket_is_in_the_temporary_folder(monkeypatch, environment, folder):
    """As tempfile.gettempdir names it (which a one-shot does not import)."""
    for name in ("XDG_RUNTIME_DIR", "TMPDIR", "TEMP", "TMP"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    path = local.socket_path([Path("/some/root")])
    assert os.path.dirname(os.path.dirname(path)) == (folder or os.path.abspath("relative"))
    assert os.path.basename(os.path.dirname(path)) == f"lsp-agent-{os.getuid()}"
