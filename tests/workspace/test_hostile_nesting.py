"""Deeply nested code (the cost of each tool on it is in benchmarks/bench_nesting.py): what
the linear walks find is what the per-node parent and sibling lookups they replace found."""

from __future__ import annotations

from pathlib import Path

from lsp_agent.syntax.outline import outline, walk
from lsp_agent.syntax.references import classify
from lsp_agent.workspace import Workspace

DEPTH = 300


def test_a_decorator_belongs_to_its_method_at_every_depth(tmp_path: Path) -> None:
    body = "".join(f"class C{i} {{\n@d\nm{i}() {{ return class {{\n" for i in range(DEPTH)) + "}}}\n" * DEPTH
    (tmp_path / "deep.js").write_text(body)
    text = Workspace([tmp_path]).text(tmp_path / "deep.js")
    methods = [s for s in walk(outline(tmp_path / "deep.js", text)) if s.kind == "method"]
    assert methods  # the outline keeps MAX_NESTING levels
    assert all(m.start_line == m.selection[0] for m in methods)  # from the `@d` line, one before the name


def test_a_prototype_in_a_nested_block_is_no_definition(tmp_path: Path) -> None:
    body = (
        "void g(void) {\n"
        + "".join(f"{{ int p{i}(void);\n" for i in range(DEPTH))
        + "}\n" * DEPTH
        + "}\nint h(void);\n"
    )
    (tmp_path / "deep.c").write_text(body)
    text = Workspace([tmp_path]).text(tmp_path / "deep.c")
    assert [s.name for s in walk(outline(tmp_path / "deep.c", text))] == ["g", "h"]


def test_uses_deep_inside_nested_functions_keep_their_roles(tmp_path: Path) -> None:
    body = "".join(f"function f{i}() {{ run(a.run, 'run'); // run\n" for i in range(DEPTH)) + "}\n" * DEPTH
    (tmp_path / "deep.js").write_text(body)
    text = Workspace([tmp_path]).text(tmp_path / "deep.js")
    roles = [u.role for u in classify(tmp_path / "deep.js", text, "run", list(range(1, DEPTH + 1)))]
    assert roles == ["call", "attribute", "string", "comment"] * DEPTH
