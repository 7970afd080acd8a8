"""`lsp-agent mcp` with two extra tools, for the cancellation, progress and defect tests (run
as a script: python tests/support/mcp_slow_tool.py --root DIR).

`wait_for_cancel` reports progress every few milliseconds until its call is cancelled, then
writes the file `cancelled` in the first root (atomically), so the test can see the tool itself stopped.
`defect` raises, as a tool with a bug would.
"""

import sys
import time

from lsp_agent.cli import main
from lsp_agent.errors import Cancelled
from lsp_agent.tools import tool


@tool(
    "wait_for_cancel",
    "Wait",
    "Test tool: wait until cancelled.",
    {"type": "object", "additionalProperties": False},
)
def wait_for_cancel(ctx):
    for step in range(1, 400):  # 20 s at most
        ctx.progress(f"waiting, step {step}", every=0)
        try:
            ctx.check_cancelled()
        except Cancelled:
            # Written whole, then renamed: the test polls for the file and reads it at once.
            partial = ctx.workspace.roots[0] / "cancelled.part"
            partial.write_text(f"cancelled at step {step}")
            partial.replace(ctx.workspace.roots[0] / "cancelled")
            raise
        time.sleep(0.05)
    return {"text": "never cancelled"}


@tool("defect", "Defect", "Test tool: raises.", {"type": "object", "additionalProperties": False})
def defect(ctx):
    raise RuntimeError("a defect on purpose")


raise SystemExit(main(["mcp", *sys.argv[1:]]))
