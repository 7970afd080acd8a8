"""A language server that misbehaves on purpose, for the semantic source's fault tests.

`python fault_server.py MODE LOG`: answers initialize, then for every navigation request
behaves as MODE says — crash (exit 3), hang (never answer), garbage (an answer that is no
location), outside (locations outside the workspace, one inside), noise (bytes that are not
LSP), ok (one location inside), slow and brisk (as ok, after SLOW or BRISK seconds), busy (as ok, after
beginning work it never ends: `$/progress` titled "loading"). Each message it receives is appended to LOG as a JSON line,
so a test can wait for a request to arrive or a cancel to come.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

MODE, LOG = sys.argv[1], Path(sys.argv[2])
SLOW, BRISK = 0.6, 0.01
NAVIGATION = {"textDocument/references", "textDocument/definition", "textDocument/implementation",
              "textDocument/prepareCallHierarchy"}  # fmt: skip


def read() -> dict | None:
    length = 0
    while True:
        line = sys.stdin.buffer.readline()
        if not line:
            return None
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    return json.loads(sys.stdin.buffer.read(length))


def send(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def answer(message: dict) -> object:
    uri = message["params"]["textDocument"]["uri"]
    here = {"uri": uri, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 1}}}
    if MODE == "crash":
        sys.exit(3)
    if MODE in ("slow", "brisk"):
        time.sleep(SLOW if MODE == "slow" else BRISK)
    if MODE == "garbage":
        return {"uri": 42, "range": "everywhere"}
    if MODE == "noise":
        sys.stdout.buffer.write(b"this is not a frame\r\n\r\n")
        sys.stdout.buffer.flush()
        return None
    if MODE == "outside":
        far = {**here, "uri": "file:///etc/passwd"}
        up = {**here, "uri": Path(uri[len("file://") :]).parents[3].as_uri() + "/secret.py"}
        return [far, up, {**here, "uri": "untitled:x"}, here]
    return [here]


def main() -> None:
    while (message := read()) is not None:
        with LOG.open("a") as log:
            log.write(json.dumps(message) + "\n")
        method = message.get("method")
        if method == "initialize":
            send(
                {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "result": {"capabilities": {"referencesProvider": True}},
                }
            )
        elif method == "initialized" and MODE == "busy":
            begin = {"kind": "begin", "title": "loading"}
            send({"jsonrpc": "2.0", "method": "$/progress", "params": {"token": "load", "value": begin}})
        elif method == "exit":
            return
        elif method in NAVIGATION and MODE == "hang":
            continue
        elif method in NAVIGATION:
            send({"jsonrpc": "2.0", "id": message["id"], "result": answer(message)})
        elif "id" in message:
            send({"jsonrpc": "2.0", "id": message["id"], "result": None})


if __name__ == "__main__":
    main()
