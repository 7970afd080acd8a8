"""`make demo` runs against this repository and shows every agent tool of the catalog."""

from __future__ import annotations

import re
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


def test_the_demo_shows_every_stage_of_the_search_chain_it_names():
    """Each search shown is titled with the stage its own header names, and together they
    are the whole chain, from full matches to the summary."""
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent.demo"], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    shown = re.findall(r"^=== search [^(]*\(stage (\d): [^)]*\)\n--> [^\n]*\n    ([^\n]*)", done.stdout, re.M)
    stages = [int(stage) for stage, _ in shown]
    assert stages == list(range(1, 8)), stages
    for stage, header in shown[1:]:  # the first fits: its header has no stage
        assert f"stage {stage}/7" in header, header
