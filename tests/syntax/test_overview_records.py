"""What overview reads from the index's records instead of the files (issue 28): the names a
file uses and where each definition's header ends are the ones a parse of the text gives,
whichever way the record was made (in this process or a worker's), and they survive a save;
an index saved in an older format is rebuilt, not misread."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import store
from lsp_agent.syntax.index import SymbolIndex, index_file, read_record
from lsp_agent.syntax.languages import language_for
from lsp_agent.syntax.outline import outline, walk
from lsp_agent.syntax.references import header_lines, signature
from lsp_agent.syntax.uses import BUILTINS, IDENTIFIER, MEMBER, MIN_NAME, file_uses
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures"


def source_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file() and language_for(p) is not None)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus")
    for part in ("grammars", "navigation", "precision", "semantic"):
        shutil.copytree(FIXTURES / part, root / part)
    return root


def test_record_heads_show_the_signatures_a_parse_shows(corpus):
    ws = Workspace([corpus])
    checked = 0
    for path in source_files(corpus):
        text = ws.text(path)
        language = language_for(path)
        made_here = index_file(ws, path, language, "utf-16")
        in_worker = read_record(str(path), language, "utf-16", [str(corpus)])
        assert made_here is not None and in_worker is not None
        assert made_here.heads == in_worker.heads and len(made_here.heads) == 2 * len(made_here.kinds)
        symbols = list(walk(outline(path, text)))
        assert [s.name for s in symbols] == made_here.names.split("\n")[: len(symbols)] or not symbols
        for i, symbol in enumerate(symbols):
            head = (made_here.heads[2 * i], made_here.heads[2 * i + 1])
            shown = header_lines(text, symbol.start_line, None if head == (-1, -1) else head)
            assert shown == signature(path, text, symbol).lines, (path, symbol.name_path)
            checked += 1
    assert checked > 150  # every grammar's fixtures, many definitions each


def test_record_uses_are_the_rankable_words_of_the_text(corpus):
    ws = Workspace([corpus])
    for path in source_files(corpus):
        text = ws.text(path)
        record = read_record(str(path), language_for(path), "utf-16", [str(corpus)])
        assert record is not None
        assert record.used() == file_uses(text.content)


@settings(max_examples=80, deadline=None)
@given(st.lists(st.sampled_from(["get", "a.get", "x->run_all", "id", "from", "_p", "é", " ", "\n", ".", "lookup"]), max_size=30))  # fmt: skip
def test_uses_count_every_rankable_word_and_its_member_uses(parts):
    content = "".join(parts)
    names, counts = file_uses(content)
    words = names.split("\n") if names else []
    expected = [
        w for w in dict.fromkeys(IDENTIFIER.findall(content)) if len(w) >= MIN_NAME and w not in BUILTINS
    ]
    assert words == expected
    every, dotted = IDENTIFIER.findall(content), MEMBER.findall(content)
    assert list(counts) == [n for w in words for n in (every.count(w), dotted.count(w))]


def test_uses_and_heads_survive_a_save_and_an_old_format_is_rebuilt(tmp_path, index_cache):
    (tmp_path / "a.py").write_text(
        "class Cart:\n    def total(self, items):\n        return sum_all(items)\n"
    )
    (tmp_path / "b.py").write_text("def sum_all(items):\n    return Cart().total(items)\n")
    built = SymbolIndex(Workspace([tmp_path]), cache=index_cache)
    built.build()
    built.save()
    loaded = SymbolIndex(Workspace([tmp_path]), cache=index_cache)
    loaded.load()
    for path, record in built.files.items():
        again = loaded.files.get(path)
        if record.size < 0:
            continue  # just written: its stat does not vouch for it, not saved
        assert again is not None
        assert (again.used(), again.heads, again.generated) == (record.used(), record.heads, record.generated)
    # the same file under the previous format's header: not read as this one
    target = store.index_file(index_cache, [tmp_path], "utf-16")
    data = target.read_bytes()
    assert data.startswith(store.FORMAT)
    target.write_bytes(b"lsp-agent symbol index 3\n" + data[len(store.FORMAT) :])
    old = SymbolIndex(Workspace([tmp_path]), cache=index_cache)
    old.load()
    assert old.files == {}
    assert old.build() == 2 and set(old.files) == {tmp_path / "a.py", tmp_path / "b.py"}
    assert all(r.uses is not None for r in old.files.values())
