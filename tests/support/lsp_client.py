"""A pytest-lsp client for end-to-end tests: the real server over stdio, custom requests
answered as plain dicts (the same converter the server uses)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_agent.server import plain_converter

SERVER = [sys.executable, "-m", "lsp_agent", "serve"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def initialize_params(
    root: Path, options: dict | None = None, capabilities: types.ClientCapabilities | None = None
) -> types.InitializeParams:
    return types.InitializeParams(
        capabilities=capabilities
        or types.ClientCapabilities(window=types.WindowClientCapabilities(work_done_progress=True)),
        workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        initialization_options=options,
    )


async def stop(client: LanguageClient) -> None:
    """Stop the client and its server. pygls' `stop` waits for the server to exit, which it
    does only after `exit`: a test that failed before shutdown_session would wait forever."""
    server = client._server
    if server is not None and server.returncode is None:
        try:
            await asyncio.wait_for(server.wait(), 5)
        except TimeoutError:
            server.kill()
    await client.stop()


async def request(client: LanguageClient, tool: str, **arguments) -> dict:
    """Call a tool through its custom request `lspAgent/<tool>`."""
    return await client.protocol.send_request_async(f"lspAgent/{tool}", arguments)


async def command(client: LanguageClient, tool: str, **arguments) -> dict:
    """Call a tool through `workspace/executeCommand` `lspAgent.<tool>`."""
    return await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=f"lspAgent.{tool}", arguments=[arguments])
    )
