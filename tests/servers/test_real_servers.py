"""Navigation against real language servers (basedpyright, typescript-language-server with
TypeScript 5), installed by `make test-servers` into a cache folder named by
LSP_AGENT_TEST_SERVERS, on fixtures whose true answers are known."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parent.parent / "fixtures" / "semantic"
CACHE = os.environ.get("LSP_AGENT_TEST_SERVERS")
if CACHE is None and os.environ.get("CI") == "true":
    raise RuntimeError("CI: run these through `make test-servers`, which installs the servers")
pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")


def servers() -> dict:
    folder = Path(CACHE or ".")
    return {
        "python": [str(folder / "py" / "bin" / "basedpyright-langserver"), "--stdio"],
        "typescript": [
            str(folder / "node" / "node_modules" / ".bin" / "typescript-language-server"),
            "--stdio",
        ],
    }


@pytest.fixture(scope="module", autouse=True)
def stop_servers():
    yield
    POOL.stop_all()


def ask(language: str, tool: str, **arguments) -> dict:
    """The answer once the server no longer says it may be incomplete (it indexes first)."""
    settings = Settings().replace(semantic_servers=servers(), semantic_timeout=60.0)
    ctx = Context(Workspace([FIXTURES / language]), settings)
    for _ in range(120):
        answer = call(ctx, tool, arguments)
        if not answer.get("semantic", {}).get("partial"):
            return answer
        ctx.cancel_event.wait(0.5)
    raise AssertionError(f"{tool} {arguments}: still partial after a minute")


def uses(answer: dict, source: str) -> set[tuple[str, int]]:
    return {(r["path"], r["line"]) for r in answer["references"] if r["source"] == source}


def test_a_common_method_name_is_split_into_confirmed_uses_and_candidates():
    answer = ask("py", "references", path="app/views.py", line=12, column=11)  # cache.get
    assert uses(answer, "basedpyright") == {("app/views.py", 5), ("app/views.py", 12)}
    # settings.get is a dict's: the syntax shows its receiver, so it is left out, and said
    assert uses(answer, "name") == set()
    text = answer["text"]
    assert "no other use by name" in text and "── by name, not confirmed" not in text
    assert "left out: 1 use on receivers whose `get` is not Cache's by the syntax (dict 1)" in text


def test_references_to_an_override_are_confirmed_by_type():
    answer = ask("py", "references", path="app/views.py", line=10, column=11)  # order.save()
    assert uses(answer, "basedpyright") == {("app/models.py", 7), ("app/views.py", 10)}
    # Base.save is no candidate: the syntax shows `order: Order`, and super().save() in Order
    # is Base's, left out and counted
    assert uses(answer, "name") == set()
    assert "(super() in Order 1)" in answer["text"]


def test_a_builtin_look_alike_is_not_a_workspace_definition():
    answer = ask("py", "definition", path="app/views.py", line=14, column=11)  # items.append
    assert answer["definitions"] == []
    assert "outside the workspace" in answer["text"] and "Element" not in answer["text"]
    assert answer["semantic"]["outside_workspace"] == 1


def test_super_lands_on_the_base_class():
    answer = ask("py", "definition", path="app/models.py", line=8, column=17)  # super().save()
    assert [(d["path"], d["name_path"]) for d in answer["definitions"]] == [("app/models.py", "Base/save")]
    assert answer["source"] == "basedpyright" and "by type, from basedpyright" in answer["text"]


def test_a_call_chain_both_ways():
    down = ask("py", "callees", name="Order/total", depth=3)
    assert [(e["line"], e["what"], e["depth"]) for e in down["entries"]] == [
        (12, "calls compute_total (app/models.py:15)", 1),
        (16, "calls order_lines (app/models.py:19)", 2),
    ]
    up = ask("py", "callers", name="order_lines", depth=3)
    assert [(e["path"], e["line"], e["depth"]) for e in up["entries"]] == [
        ("app/models.py", 16, 1), ("app/models.py", 12, 2), ("app/views.py", 15, 3),
    ]  # fmt: skip


def test_an_interface_with_two_implementations():
    answer = ask("ts", "implementations", path="src/shapes.ts", line=1, column=18)
    assert answer["source"] == "typescript-language-server"
    assert {(e["path"], e["line"]) for e in answer["entries"]} == {
        ("src/shapes.ts", 5),
        ("src/shapes.ts", 12),
    }


def test_typescript_references_and_definition_through_an_interface():
    refs = ask("ts", "references", path="src/main.ts", line=4, column=29)  # s.area()
    confirmed = uses(refs, "typescript-language-server")
    assert {("src/main.ts", 4), ("src/shapes.ts", 2)} <= confirmed
    definition = ask("ts", "definition", path="src/main.ts", line=8, column=21)  # new Circle
    found = {(d["path"], d["name_path"]) for d in definition["definitions"]}
    assert ("src/shapes.ts", "Circle") in found and found <= {
        ("src/shapes.ts", "Circle"),
        ("src/shapes.ts", "Circle/constructor"),
    }
