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

import hashlib
import json
import logging
import os
import socket
import stat
import struct
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

MAX_REQUEST = 16 << 20  # a call's JSON (a model's whole reply to run_calls fits)
CONNECT_TIMEOUT = 1.0  # seconds to reach a server that is there; a call takes what it takes


def socket_path(roots: list[Path]) -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    key = "\n".join(map(str, roots)).encode("utf-8", "surrogatepass")
    return (
        Path(base) / f"lsp-agent-{os.getuid()}" / f"{hashlib.blake2b(key, digest_size=12).hexdigest()}.sock"
    )


def private(folder: Path, *, make: bool = False) -> bool:
    """Whether `folder` is the user's own and no one else may enter it (made so if asked)."""
    try:
        if make:
            folder.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(folder)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077


def peer_is_me(connection: socket.socket) -> bool:
    """Whether the other end runs as this user (True where the system cannot say: the
    folder's permissions already keep others out)."""
    if not hasattr(socket, "SO_PEERCRED"):
        return True
    credentials = connection.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", credentials)[1] == os.getuid()


def ask(roots: list[Path], name: str, arguments: dict) -> dict | None:
    """A running server's answer to the call, or None (no server, or it did not answer)."""
    path = socket_path(roots)
    if os.environ.get("LSP_AGENT_NO_SERVER") or not path.exists() or not private(path.parent):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(CONNECT_TIMEOUT)
            connection.connect(str(path))
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
        self.path: Path | None = None
        self.inode = -1  # the socket file's, to remove it on close only if still this one

    def listen(self, roots: list[Path]) -> None:
        """Listen for the commands of these roots (instead of any others before)."""
        self.close()
        path = socket_path(roots)
        if not roots or not private(path.parent, make=True):
            return
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            path.unlink(missing_ok=True)  # a server gone without closing, or an older one: the newest answers
            sock.bind(str(path))
            sock.listen(16)
            self.inode = os.stat(path).st_ino
        except OSError as exc:
            sock.close()
            log.info("not answering commands on %s: %s", path, exc)
            return
        self.sock, self.path = sock, path
        threading.Thread(target=self.accept, args=(sock,), name="lsp-agent commands", daemon=True).start()

    def accept(self, sock: socket.socket) -> None:
        while True:
            try:
                connection, _ = sock.accept()
            except OSError:  # closed
                return
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                if not peer_is_me(connection):
                    return
                request = json.loads(read_all(connection, MAX_REQUEST))
                answer = self.answer(request["name"], request.get("arguments", {}))
                connection.sendall(json.dumps(answer).encode() + b"\n")
            except Exception as exc:  # a peer gone, a request not of this shape: its command answers alone
                log.info("a command's call was not answered: %s", exc)

    def close(self) -> None:
        if self.sock is None:
            return
        try:
            if self.path is not None and os.stat(self.path).st_ino == self.inode:
                self.path.unlink()
        except OSError:
            pass
        self.sock.close()
        self.sock = self.path = None
