"""`make demo` runs against this repository and shows every agent tool of the catalog."""

from __future__ import annotations

import subprocess
import sys

from lsp_agent.tools import catalog


def test_the_demo_shows_every_agent_tool():
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent.demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    shown = {line.split()[1] for line in done.stdout.splitlines() if line.startswith("--> lspAgent/")}
    missing = {f"lspAgent/{tool['name']}" for tool in catalog()} - shown
    assert not missing, f"the demo does not show {missing}"
    assert "Traceback" not in done.stderr
