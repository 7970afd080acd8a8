"""definition's look-up of a name in the index's name blocks finds what the index's scan
finds, an indexed candidate's facts (nested in a function or not) are those its file's
outline gives, and its signature and doc line from the record are those a parse gives."""

from __future__ import annotations

import tempfile
from array import array
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import outline, walk
from lsp_agent.syntax.index import NameBlock, SymbolIndex, index_file, read_record
from lsp_agent.syntax.languages import language_for
from lsp_agent.syntax.records import FileRecord
from lsp_agent.syntax.references import signature
from lsp_agent.tools import Context
from lsp_agent.tools.definition import (
    Found,
    Indexed,
    find_rows,
    indexed_definitions,
    named,
    recorded_signature,
    rows_named,
)
from lsp_agent.workspace import Workspace

NAMES = ["save", "get", "_save", "save_", "Model", "run"]


@st.composite
def modules(draw) -> str:
    """Python source of nested classes and functions whose names collide often."""
    lines: list[str] = []

    def block(depth: int) -> None:
        for _ in range(draw(st.integers(1, 3))):
            keyword = draw(st.sampled_from(["def", "class"]))
            name = draw(st.sampled_from(NAMES))
            lines.append("    " * depth + (f"def {name}(self):" if keyword == "def" else f"class {name}:"))
            if depth < 3 and draw(st.booleans()):
                block(depth + 1)
            else:
                lines.append("    " * (depth + 1) + "pass")

    block(0)
    return "\n".join(lines) + "\n"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(modules(), min_size=1, max_size=4), st.sampled_from([*NAMES, "Model/save", "save/get"]))
def test_the_look_up_finds_what_the_scan_finds(sources, name_path):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n, source in enumerate(sources):
            (root / f"m{n}.py").write_text(source)
        index = SymbolIndex(Workspace([root]))
        index.build()
        scanned = [(p, e.name_path, e.start_line) for p, e in index.find(name_path, under=[root])]
        looked_up = [(p, e.name_path, e.start_line) for p, _, _, e in named(index, name_path, [root])]
        assert sorted(looked_up) == sorted(scanned)
        for path in {p for p, _, _ in scanned}:  # within a file, in the outline's order
            assert [x for x in looked_up if x[0] == path] == [x for x in scanned if x[0] == path]
        ctx = Context(index.workspace, index=index)
        for found in indexed_definitions(ctx, index, name_path):
            symbol = found.symbol
            assert (symbol.name_path, symbol.start_line) == (
                found.definition.name_path,
                found.definition.start_line,
            )
            outlined = next(s for s in walk(outline(found.path, found.text)) if s is symbol)
            assert found.is_local() == Found(found.path, found.text, outlined).is_local()


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.sampled_from(["save", "x/save", "a/b/save", "save/x", "saved", "_save", "s", "/"]), max_size=6
        ),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(["save", "s", "x", "b", "ave"]),
)
def test_rows_named_are_the_lines_whose_last_segment_is_the_name(files, last):
    block = NameBlock([(Path(f"/w/m{n}.py"), FileRecord(0, 0, "v", "python", "\n".join(names), "", b"", array("I"))) for n, names in enumerate(files)])  # fmt: skip
    expected = [(n, row) for n, names in enumerate(files) if names for row, name in enumerate(names) if name.rpartition("/")[2] == last]  # fmt: skip
    assert find_rows(block, last) == expected
    assert rows_named(block, last) == expected and rows_named(block, last) == expected  # found, then kept


FIXTURES = Path(__file__).parents[1] / "fixtures"


DOCUMENTED = {
    "docs.py": '''def plain(a):
    """One line."""


@decorated
def raw(
    a,
    b,
) -> int:
    r"""

    After blank lines.
    More.
    """
    return 1


class Quoted:
    \'\'\'Single quotes, and u at the end u\'\'\'

    # a comment before the docstring
    def method(self): "on the same line"

    def empty(self):
        """"""

    value = 1  # no body


# a comment above
def commented():
    pass
''',
    "docs.js": """/**
 * A block comment.
 */
function block(a) {}

// a line comment
class Line { method() {} }

/* not next to it */

function apart() {}
""",
    "docs.go": "package p\n\n// Run runs.\nfunc Run() {}\n\n// T is a type.\ntype T struct{}\n",
    "docs.rs": "/// Does things.\nfn things() {}\n\n//! inner\nstruct S;\n",
}


def test_a_records_signature_and_doc_line_are_the_parses(tmp_path):
    """Over every grammar's fixtures and docstrings and comments of each kind, each indexed
    definition's signature from its record (made here or in a worker) is the one
    signature() gives from a parse, doc line too."""
    import shutil

    for part in ("grammars", "navigation", "precision", "semantic"):
        shutil.copytree(FIXTURES / part, tmp_path / part)
    for name, source in DOCUMENTED.items():
        (tmp_path / name).write_text(source)
    ws = Workspace([tmp_path])
    checked = documented = 0
    for path in sorted(p for p in tmp_path.rglob("*") if p.is_file() and language_for(p)):
        language = language_for(path)
        made_here = index_file(ws, path, language, "utf-16")
        in_worker = read_record(str(path), language, "utf-16", [str(tmp_path)])
        assert made_here is not None and in_worker is not None
        assert made_here.docs == in_worker.docs
        for row, entry in enumerate(made_here.entries()):
            found = Indexed(ws, path, made_here, entry, row)
            from_record = recorded_signature(found)
            parsed = signature(path, found.text, found.symbol)
            assert from_record is not None
            assert (from_record.one_line(), from_record.doc) == (parsed.one_line(), parsed.doc), (path, entry)
            checked += 1
            documented += parsed.doc is not None
    assert checked > 150 and documented > 15  # every grammar's fixtures, docstrings and comments


def test_a_record_of_another_text_is_not_taken_for_the_signature(tmp_path):
    path = tmp_path / "m.py"
    path.write_text('def f(a):\n    """Old."""\n')
    ws = Workspace([tmp_path])
    record = index_file(ws, path, "python", "utf-16")
    assert record is not None and record.doc(0) == "Old."
    path.write_text('def f(a, b):\n    """New."""\n')
    found = Indexed(Workspace([tmp_path]), path, record, record.entries()[0], 0)
    assert recorded_signature(found) is None
