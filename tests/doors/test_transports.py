"""The same server over TCP and websocket: `lsp-agent serve --tcp PORT` / `--ws PORT`."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import subprocess
import sys

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from lsp_agent.server import plain_converter


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("transport", ["--tcp", "--ws"])
async def test_read_over_network_transport(tmp_path, transport):
    (tmp_path / "a.txt").write_text("alpha\nbeta\n")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", transport, str(port)], stderr=subprocess.PIPE
    )
    client = LanguageClient("test", "1", converter_factory=plain_converter)
    try:
        connect = client.start_tcp if transport == "--tcp" else client.start_ws
        for _attempt in range(100):  # until the server listens (a probe would be its one client)
            try:
                await connect("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            )
        )
        answer = await client.protocol.send_request_async("lspAgent/read", {"path": "a.txt"})
        assert answer["text"].split("\n")[1:] == ["1:alpha", "2:beta"]
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        try:  # `exit` ends the server; a client stops only once its connection is closed
            server.wait(timeout=5 if transport == "--tcp" else 0.5)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        with contextlib.suppress(ConnectionError):
            await client.stop()
    if transport == "--tcp":  # one client over TCP: its `exit` ends the server (websocket serves on)
        assert server.returncode == 0
        assert server.stderr is not None and "Traceback" not in server.stderr.read().decode()  # quietly


async def test_a_port_probe_is_not_the_tcp_servers_one_client(tmp_path):
    (tmp_path / "a.txt").write_text("alpha\n")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve", "--tcp", str(port)], stderr=subprocess.PIPE
    )
    try:
        for _attempt in range(3):  # probes, as a health check or a wait-for-port does, say nothing and go
            while server.poll() is None:
                with socket.socket() as probe:
                    if probe.connect_ex(("127.0.0.1", port)) == 0:
                        break
                await asyncio.sleep(0.05)
        client = LanguageClient("test", "1", converter_factory=plain_converter)
        await client.start_tcp("127.0.0.1", port)  # refused if a probe had ended the server
        folders = [types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")]
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), workspace_folders=folders)
        )
        answer = await client.protocol.send_request_async("lspAgent/read", {"path": "a.txt"})
        assert answer["text"].split("\n")[1:] == ["1:alpha"]
        await client.shutdown_async(None)
        client.exit(None)
        assert server.wait(timeout=10) == 0
        with contextlib.suppress(ConnectionError):
            await client.stop()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
