"""Run Serena's `search_for_pattern` tool class directly, with no language server.

Executed by the Python of Serena's own virtual environment (benchmarks/.cache/serena-venv),
never imported by lsp-agent. Reads a JSON job on stdin: {"root", "budget", "patterns",
"repeat"}; writes one JSON line per pattern: {"pattern", "seconds": [...], "text"}.
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
    job = json.load(sys.stdin)
    config = SerenaConfig(gui_log_window=False, web_dashboard=False)
    project_config = ProjectConfig.autogenerate(
        job["root"], config, languages=[LanguageServerId.PYTHON], save_to_disk=False
    )
    project = Project(project_root=job["root"], project_config=project_config, serena_config=config)
    tool = SearchForPatternTool(Agent(config, project))
    for pattern in job["patterns"]:
        seconds, text = [], ""
        for _ in range(job["repeat"]):
            start = time.perf_counter()
            text = tool.apply(pattern, max_answer_chars=job["budget"])
            seconds.append(time.perf_counter() - start)
        print(json.dumps({"pattern": pattern, "seconds": seconds, "text": text}), flush=True)


if __name__ == "__main__":
    main()
