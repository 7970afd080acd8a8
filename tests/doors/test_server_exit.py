"""The server exits promptly on shutdown + exit, even while it is still indexing a large
workspace in the background or running a long tool."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

from tests.support.lsp_client import initialize_params, make_client


async def test_exit_during_background_indexing(tmp_path):
    for package in range(40):
        folder = tmp_path / f"pkg{package}"
        folder.mkdir()
        for module in range(50):  # 2,000 files: indexing takes seconds
            (folder / f"m{module}.py").write_text(
                "".join(f"class C{i}:\n    def method_{i}(self):\n        return {i}\n\n" for i in range(30))
            )
    client = make_client()  # answers window/workDoneProgress/create, so progress flows
    await client.start_io(sys.executable, "-m", "lsp_agent", "serve")
    server: subprocess.Process = client._server
    await client.initialize_session(initialize_params(tmp_path))  # sends initialized: indexing starts
    for _ in range(100):
        if any(client.progress_reports.values()):
            break
        await asyncio.sleep(0.05)
    assert any(client.progress_reports.values()), "indexing reported no progress"
    started = time.monotonic()
    await client.shutdown_session()
    await asyncio.wait_for(server.wait(), timeout=10)
    assert time.monotonic() - started < 5
    assert server.returncode == 0
    await client.stop()
