"""Every command example in README.md and docs/*.md prints what the docs show (see
tests/docs/docs_examples.py; `make docs` rewrites the shown outputs after a deliberate change)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.docs.docs_examples import DOCS, NVIM_EXAMPLE, REPO, Neovim, examples, make_workspace, rewrite


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return make_workspace(tmp_path_factory.mktemp("docs"))


@pytest.fixture(scope="module")
def neovim(root):
    editor = Neovim(root)
    yield editor
    editor.close()


@pytest.fixture(scope="module")
def found(root, neovim):
    return {f"{path.relative_to(REPO)}:{example.line}": example for path, example in examples(root, neovim)}


def test_the_docs_have_examples(found):
    assert len(found) >= 20
    assert {key.split(":")[0] for key in found} >= {
        "README.md",
        "docs/editors.md",
        "docs/search.md",
        "docs/symbols.md",
    }


def test_every_example_prints_what_the_docs_show(found):
    failures = []
    for where, example in found.items():
        try:
            example.evaluate()
        except AssertionError as failure:
            failures.append(f"{where}: {failure}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_shown_command_is_run(path: Path):
    """A block that shows a `$ command` is a ```console block, so none escapes the check."""
    blocks = re.findall(r"^```(\w*)\n(.*?)^```", path.read_text(encoding="utf-8"), re.S | re.M)
    untested = [
        body.splitlines()[0] for language, body in blocks if language != "console" and body.startswith("$ ")
    ]
    assert untested == []


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_every_editor_example_marker_heads_a_block(path: Path):
    """A `<!-- nvim: ... -->` not right above a fenced block would be checked by nothing."""
    text = path.read_text(encoding="utf-8")
    assert len(NVIM_EXAMPLE.findall(text)) == text.count("<!-- nvim:")


def test_an_output_changed_by_hand_fails_and_make_docs_restores_it(root, neovim, tmp_path):
    doc = tmp_path / "doc.md"
    shown = "Intro.\n\n```console\n$ lsp-agent read crlf.txt --max-chars 200\n```\n\nAfter.\n"
    doc.write_text(shown)
    assert rewrite(doc, root, neovim)  # fills in the output
    right = doc.read_text()
    assert "3 lines · version " in right and right.endswith("```\n\nAfter.\n")
    [(_, example)] = examples(root, neovim, [doc])
    example.evaluate()  # passes

    doc.write_text(right.replace("2:b", "2:B"))
    [(_, example)] = examples(root, neovim, [doc])
    with pytest.raises(AssertionError, match="make docs"):
        example.evaluate()
    assert rewrite(doc, root, neovim)
    assert doc.read_text() == right


def test_an_editor_example_changed_by_hand_fails_and_make_docs_restores_it(root, neovim, tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("Intro.\n\n<!-- nvim: :edit src/cart.py | :LspAgentSymbols -->\n```\n```\n\nAfter.\n")
    assert rewrite(doc, root, neovim)  # Neovim's answer buffer, filled in
    right = doc.read_text()
    assert "```\nsrc/cart.py · " in right and "\nconstant TAX_RATE  7\nclass Item  " in right
    assert right.endswith("```\n\nAfter.\n")
    [(_, example)] = examples(root, neovim, [doc])
    example.evaluate()  # passes

    doc.write_text(right.replace("constant TAX_RATE  7", "constant TAX_RATE  8"))
    [(_, example)] = examples(root, neovim, [doc])
    with pytest.raises(AssertionError, match="make docs"):
        example.evaluate()
    assert rewrite(doc, root, neovim)
    assert doc.read_text() == right
