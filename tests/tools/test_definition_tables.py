"""definition's name tables (a lookup per name block instead of a scan of every name) find
what the index's scan finds, and an indexed candidate's facts (nested in a function or not)
are those its file's outline gives."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.syntax import outline, walk
from lsp_agent.syntax.index import SymbolIndex
from lsp_agent.tools import Context
from lsp_agent.tools.definition import Found, indexed_definitions, named
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
def test_name_tables_find_what_the_scan_finds(sources, name_path):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for n, source in enumerate(sources):
            (root / f"m{n}.py").write_text(source)
        index = SymbolIndex(Workspace([root]))
        index.build()
        scanned = [(p, e.name_path, e.start_line) for p, e in index.find(name_path, under=[root])]
        looked_up = [(p, e.name_path, e.start_line) for p, _, e in named(index, name_path, [root])]
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
