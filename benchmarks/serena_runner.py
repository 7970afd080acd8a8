"""Run Serena's `search_for_pattern` tool class directly, with no language server.

Executed by the Python of Serena's own virtual environment (benchmarks/.cache/serena-venv),
never imported by lsp-agent. Reads JSON lines on stdin: first {"root", "budget"}, then one
{"pattern"} per call; answers each call with one JSON line {"seconds", "cpu", "text"} (wall and
CPU seconds of this process, its search threads included), so the benchmark can interleave
Serena's calls with the other tools' in the same rounds.
"""

import json
import logging
import sys
import time

logging.disable(logging.CRITICAL)

from serena.config.serena_config import ProjectConfig, SerenaConfig  # noqa: E402
from serena.project import Project  # noqa: E402
from serena.tools.file_tools import SearchForPatternTool  # noqa: E402
from solidlsp.ls_config import LanguageServerId  # noqa: E402


class Agent:
    """The two things the tool asks of its agent: the configuration and the active project."""

    def __init__(self, serena_config, project):
        self.serena_config = serena_config
        self._project = project

    def get_active_project_or_raise(self):
        return self._project


def main() -> None:
    job = json.loads(sys.stdin.readline())
    config = SerenaConfig(gui_log_window=False, web_dashboard=False)
    project_config = ProjectConfig.autogenerate(
        job["root"], config, languages=[LanguageServerId.PYTHON], save_to_disk=False
    )
    project = Project(project_root=job["root"], project_config=project_config, serena_config=config)
    tool = SearchForPatternTool(Agent(config, project))
    for line in sys.stdin:
        pattern = json.loads(line)["pattern"]
        cpu, start = time.process_time(), time.perf_counter()
        text = tool.apply(pattern, max_answer_chars=job["budget"])
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
        print(json.dumps({"seconds": seconds, "cpu": cpu, "text": text}), flush=True)


if __name__ == "__main__":
    main()
