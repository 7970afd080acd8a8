"""Serve Serena's tools, one call per line, for the task benchmark (benchmarks/bench_tasks.py).

Executed by the Python of Serena's own virtual environment (benchmarks/.cache/serena-venv),
never imported by lsp-agent. The first stdin line is {"root"}: the project, activated with
its language server (Serena starts and indexes it). Each next line is {"tool", "args"}; each
answer is one JSON line {"text"} (or {"error"}).
"""

import json
import logging
import os
import sys

if not os.environ.get("SERENA_LOG"):
    logging.disable(logging.CRITICAL)

from serena.agent import SerenaAgent
from serena.config.serena_config import SerenaConfig


def main() -> None:
    job = json.loads(sys.stdin.readline())
    config = SerenaConfig(gui_log_window=False, web_dashboard=False)
    agent = SerenaAgent(project=job["root"], serena_config=config)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        try:
            text = agent.get_tool_by_name(request["tool"]).apply_ex(**request["args"])
            print(json.dumps({"text": text}), flush=True)
        except Exception as exc:  # an answer the agent would see as an error
            print(json.dumps({"text": f"Error: {exc}"}), flush=True)
    agent.shutdown()


if __name__ == "__main__":
    main()
