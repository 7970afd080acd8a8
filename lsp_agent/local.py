"""One-shot commands answered by a running server of the same roots (issue 28).

A language server, once its symbol index is built, listens on a Unix socket that only its
user can reach; `lsp-agent search` and the other commands that only read ask it first, and
so pay neither the imports of the tools nor the loading of the index: the server answers
from what it holds warm. Without such a server (or with LSP_AGENT_NO_SERVER=1 set) the
command answers alone, as it always did.

The socket is in a folder of the user's own ($XDG_RUNTIME_DIR, else the temporary folder),
named after the user and the roots; a server checks each peer's user id as well where the
system tells it. One call per connection: a JSON line {"name", "arguments"} in, the answer
as one JSON line out, or {"invalid": message} for arguments the server refuses (the command
then answers alone, in its own words).
"""

from __future__ import annotations

import os
import stat
import struct

from .errors import logger

# json, socket and tempfile are imported where used: a command with no server to ask (the
# usual case) checks a path and goes on, without their milliseconds
TYPE_CHECKING = False  # typing's own import is a command's milliseconds
if TYPE_CHECKING:
    import socket
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

try:  # hashlib's blake2b, without hashlib's import of OpenSSL: a one-shot's first milliseconds
    from _blake2 import blake2b
except ImportError:
    from hashlib import blake2b

MAX_REQUEST = 16 << 20  # a call's JSON (a model's whole reply to run_calls fits)
CONNECT_TIMEOUT = 1.0  # seconds to reach a server that is there; a call takes what it takes


def socket_path(roots: list[Path] | list[str]) -> str:
    """The socket of a server of these roots (absolute and resolved, as Workspace has them)."""
    base = os.environ.get("XDG_RUNTIME_DIR") or temporary_folder()
    key = "\n".join(map(str, roots)).encode("utf-8", "surrogatepass")
    name = f"{blake2b(key, digest_size=12).hexdigest()}.sock"
    return os.path.join(base, f"lsp-agent-{os.getuid()}", name)


def temporary_folder() -> str:
    """The temporary folder as tempfile.gettempdir finds it on a Unix, without its check that
    the folder is writable: a server that cannot make its folder there does not listen, and
    a command then finds no socket to ask."""
    for name in ("TMPDIR", "TEMP", "TMP"):
        if folder := os.environ.get(name):
            return os.path.abspath(folder)
    return "/tmp"


def private(folder: str, *, make: bool = False) -> bool:
    """Whether `folder` is the user's own and no one else may enter it (made so if asked)."""
    try:
        if make:
            try:
                os.mkdir(folder, 0o700)
            except FileExistsError:
                pass
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def peer_is_me(connection: socket.socket) -> bool:
    """Whether the other end runs as this user (True where the system cannot say: the
    folder's permissions already keep others out)."""
    import socket

    if not hasattr(socket, "SO_PEERCRED"):
        return True
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", credentials)[1] == os.getuid()


def listening(roots: list[Path] | list[str]) -> bool:
    """Whether a server of these roots may be listening: its socket is there, in a folder of
    the user's own (LSP_AGENT_NO_SERVER set: none is asked)."""
    path = socket_path(roots)
    return (
        not os.environ.get("LSP_AGENT_NO_SERVER") and os.path.exists(path) and private(os.path.dirname(path))
    )


def ask(roots: list[Path] | list[str], name: str, arguments: dict) -> dict | None:
    """A running server's answer to the call, or None (no server, or it did not answer)."""
    if not listening(roots):
        return None
    import json
    import socket

    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(CONNECT_TIMEOUT)
            connection.connect(socket_path(roots))
            connection.settimeout(None)
            if not peer_is_me(connection):
                return None
            connection.sendall(json.dumps({"name": name, "arguments": arguments}).encode() + b"\n")
            connection.shutdown(socket.SHUT_WR)
            reply = read_all(connection, None)
        answer = json.loads(reply)
    except (OSError, ValueError):  # gone, refused, or cut off midway: answer alone
        return None
    return answer if isinstance(answer, dict) and "invalid" not in answer else None


def read_all(connection: socket.socket, limit: int | None) -> bytes:
    chunks, size = [], 0
    while chunk := connection.recv(1 << 16):
        chunks.append(chunk)
        size += len(chunk)
        if limit is not None and size > limit:
            raise ValueError("too large")
    return b"".join(chunks)


class Listener:
    """A server's socket for the commands of its roots. `answer(name, arguments)` runs a
    call (in the server's lanes) and returns its answer, or {"invalid": message}."""

    def __init__(self, answer: Callable[[str, Any], dict]):
        self.answer = answer
        self.sock: socket.socket | None = None
        self.path: str | None = None
        self.inode = -1  # the socket file's, to remove it on close only if still this one

    def listen(self, roots: list[Path]) -> None:
        """Listen for the commands of these roots (instead of any others before)."""
        self.close()
        import socket
        import threading

        path = socket_path(roots)
        if not roots or not private(os.path.dirname(path), make=True):
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            try:  # a server gone without closing, or an older one: the newest answers
                os.unlink(path)
            except FileNotFoundError:
                pass
            sock.bind(path)
            sock.listen(16)
            self.inode = os.stat(path).st_ino
        except OSError as exc:
            sock.close()
            logger(__name__).info("not answering commands on %s: %s", path, exc)
            return
        self.sock, self.path = sock, path
        threading.Thread(target=self.accept, args=(sock,), name="lsp-agent commands", daemon=True).start()

    def accept(self, sock: socket.socket) -> None:
        while True:
            try:
                connection, _ = sock.accept()
            except OSError:  # closed
                return
            import threading

            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection: socket.socket) -> None:
        import json

        with connection:
            try:
                if not peer_is_me(connection):
                    return
                request = json.loads(read_all(connection, MAX_REQUEST))
                answer = self.answer(request["name"], request.get("arguments", {}))
                connection.sendall(json.dumps(answer).encode() + b"\n")
            except Exception as exc:  # a peer gone, a request not of this shape: its command answers alone
                logger(__name__).info("a command's call was not answered: %s", exc)

    def close(self) -> None:
        if self.sock is None:
            return
        try:
            if self.path is not None and os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass
        self.sock.close()
        self.sock = self.path = None
