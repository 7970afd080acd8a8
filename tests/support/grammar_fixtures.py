"""The per-language fixtures: tests/fixtures/grammars/<language>/, one folder per language of
lsp_agent/grammars (they stay out of the wheel)."""

from __future__ import annotations

import shutil
from pathlib import Path

from lsp_agent.syntax import GRAMMARS

GRAMMARS_DIR = Path(__file__).parents[1] / "fixtures" / "grammars"


def fixtures_of(language: str) -> list[Path]:
    """The fixture files of one language, by name."""
    return sorted(path for path in (GRAMMARS_DIR / language).iterdir() if path.is_file())


def fixture_files() -> dict[str, Path]:
    """File name -> path of every language's fixtures."""
    return {path.name: path for language in GRAMMARS for path in fixtures_of(language)}


def copy_fixtures(folder: Path) -> None:
    """Every fixture into `folder`, side by side."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, path in fixture_files().items():
        shutil.copy(path, folder / name)
