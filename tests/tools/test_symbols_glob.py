"""symbols and find_symbol take `glob` as search does: ripgrep globs that include ('*.py') or
exclude ('!tests/**') files, through the text search and through the symbol index alike; a
glob that matches nothing, or leaves every match out, says so."""

from __future__ import annotations

import pytest

from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace


@pytest.fixture
def project(tmp_path):
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "models.py").write_text("class Order:\n    def save(self):\n        pass\n")
    (tmp_path / "app" / "views.ts").write_text("export function save(): void {}\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_models.py").write_text(
        "def save():\n    pass\n\n\ndef test_save():\n    save()\n"
    )
    return tmp_path


@pytest.fixture(params=["by text", "by index"])
def ctx(project, request, index_cache):
    ws = Workspace([project])
    if request.param == "by text":
        return Context(ws)
    index = SymbolIndex(ws, cache=index_cache / "glob")
    index.build()
    assert index.ready.is_set()
    return Context(ws, index=index)


def paths(answer: dict) -> list[str]:
    return [m["path"] for m in answer["matches"]]


def test_find_symbol_globs_include_and_exclude(ctx):
    everything = call(ctx, "find_symbol", {"name_path": "save"})
    assert paths(everything) == ["app/models.py", "app/views.ts", "tests/test_models.py"]
    assert paths(call(ctx, "find_symbol", {"name_path": "save", "glob": "*.py"})) == [
        "app/models.py",
        "tests/test_models.py",
    ]
    no_tests = call(ctx, "find_symbol", {"name_path": "save", "glob": "!tests/**"})
    assert paths(no_tests) == ["app/models.py", "app/views.ts"]
    both = call(ctx, "find_symbol", {"name_path": "save", "glob": ["*.py", "!tests/**"]})
    assert paths(both) == ["app/models.py"]


def test_find_symbol_says_what_the_glob_left_out(ctx):
    left = call(ctx, "find_symbol", {"name_path": "test_save", "glob": "!tests/**"})
    assert left["matches"] == []
    assert left["text"] == (
        'find_symbol "test_save" in the workspace (glob !tests/**): no matches '
        "(1 match in files the glob leaves out)."
    )
    nothing = call(ctx, "find_symbol", {"name_path": "save", "glob": "*.rs"})
    assert nothing["matches"] == []
    assert "(the glob matches no file there)" in nothing["text"]


def test_symbols_of_a_folder_through_a_glob(ctx):
    answer = call(ctx, "symbols", {"path": ".", "glob": "!tests/**"})
    assert answer["text"].splitlines()[0] == ". · 3 symbols in 2 files (glob !tests/**)"
    assert "test_models.py" not in answer["text"] and "app/views.ts" in answer["text"]
    only_ts = call(ctx, "symbols", {"path": ".", "glob": "*.ts"})
    assert only_ts["files"] == 1 and "function save" in only_ts["text"]
    nothing = call(ctx, "symbols", {"path": "app", "glob": "*.rs"})
    assert nothing["text"] == "app · no source file matches glob *.rs"
    # a file named is outlined whatever the glob says, as search searches a file named
    assert call(ctx, "symbols", {"path": "app/models.py", "glob": "*.rs"})["symbols"] == 2


def test_a_glob_ripgrep_cannot_take_is_refused(ctx):
    refused = call(ctx, "find_symbol", {"name_path": "save", "glob": "a\x00b"})
    assert refused["error"]["code"] == "invalid_glob"
    assert call(ctx, "symbols", {"path": ".", "glob": ["*.py"] * 101})["error"]["code"] == "invalid_glob"
    # a glob ripgrep cannot parse is refused with its words, not taken as one that matches nothing
    for tool, arguments in (("symbols", {"path": "."}), ("find_symbol", {"name_path": "save"})):
        unparsable = call(ctx, tool, {**arguments, "glob": "{"})
        assert unparsable["error"]["code"] == "invalid_glob", unparsable["text"]
        assert "unclosed alternate group" in unparsable["text"]
