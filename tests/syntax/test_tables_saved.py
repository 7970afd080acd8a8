"""A warm start saves the index again only when it made a use table: a file whose language
has none (a shell script) is not counted as made, so the index is not written out again at
every start, and the tool worker, which loads the saved index again when it changes, does
not load it twice (two indexes at once at monorepo scale) for the first heavy call."""

from __future__ import annotations

import os

from lsp_agent.syntax import store
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.syntax.references import table_stamp
from lsp_agent.syntax.uses import has_table
from lsp_agent.workspace import Workspace


def test_a_file_without_a_table_is_not_made_again_at_each_start(tmp_path, index_cache):
    (tmp_path / "a.py").write_text("def total(items):\n    return sum_all(items)\n")
    (tmp_path / "run.sh").write_text('#!/bin/sh\nfor item in "$@"; do echo "$item"; done\n')
    for path in tmp_path.iterdir():  # older than the racy window: trusted by stat
        os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    ws = Workspace([tmp_path])
    index = SymbolIndex(ws, cache=index_cache)
    index.build()
    assert index.make_tables() == 1  # a.py's; the script's language makes none
    assert not has_table(index.files[tmp_path / "run.sh"].use_table, table_stamp("bash"))
    saved = store.index_file(index_cache, ws.roots, index.encoding)
    written = saved.stat().st_mtime_ns
    warm = SymbolIndex(ws, cache=index_cache)
    warm.build()
    assert warm.make_tables() == 0
    assert saved.stat().st_mtime_ns == written
    assert has_table(warm.files[tmp_path / "a.py"].use_table, table_stamp("python"))
