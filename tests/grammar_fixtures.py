"""The per-language fixtures, kept beside each language's queries in grammars/<language>/
and named by its language.json."""

from __future__ import annotations

import shutil
from pathlib import Path

from lsp_agent.syntax import GRAMMARS

GRAMMARS_DIR = Path(__file__).parent.parent / "grammars"


def fixture_files() -> dict[str, Path]:
    """File name -> path of every language's fixtures."""
    return {
        name: GRAMMARS_DIR / language / name for language in GRAMMARS for name in GRAMMARS[language].fixtures
    }


def copy_fixtures(folder: Path) -> None:
    """Every fixture into `folder`, side by side."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, path in fixture_files().items():
        shutil.copy(path, folder / name)
