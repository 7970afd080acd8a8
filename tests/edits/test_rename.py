"""rename without a language server, the checks of a server's WorkspaceEdit, the all-or-none
write of several files, the preview's ladder, and which diagnostics count as introduced.
(Renames by the real servers: tests/servers/test_rename_servers.py.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.config import Settings
from lsp_agent.editing import Source, commit_all, introduced, open_source
from lsp_agent.errors import Refusal
from lsp_agent.semantic.rename import Renamed, workspace_changes
from lsp_agent.tools import Context, call
from lsp_agent.tools.rename import Row, listing
from lsp_agent.workspace import Workspace
from lsp_agent.writer import write_file

CART = "class Cart:\n    def add_item(self, item):\n        return item\n"


@pytest.fixture
def root(tmp_path):
    (tmp_path / "cart.py").write_text(CART)
    (tmp_path / "use.py").write_text("from cart import Cart\nCart().add_item(1)\n")
    return tmp_path


def test_rename_without_a_server_is_refused_and_says_why(root):
    for settings_ in (Settings(precision="syntax"), Settings(semantic_servers={"python": False})):
        ctx = Context(Workspace([root]), settings_)
        answer = call(
            ctx, "rename", {"path": "cart.py", "symbol": "Cart/add_item", "new_name": "put", "apply": True}
        )
        assert answer["error"]["code"] == "no_semantic_source", answer
        assert "never renames by name" in answer["text"]
        assert (root / "cart.py").read_text() == CART


def test_a_file_without_a_server_for_its_language_is_refused(root):
    (root / "notes.txt").write_text("add_item\n")
    answer = call(Context(Workspace([root])), "rename", {"path": "notes.txt", "line": 1, "new_name": "put"})
    assert answer["error"]["code"] == "no_semantic_source"


def edit_of(*uris: str) -> dict:
    span = {"start": {"line": 1, "character": 8}, "end": {"line": 1, "character": 16}}
    return {"changes": {uri: [{"range": span, "newText": "put"}] for uri in uris}}


def test_a_location_outside_the_roots_refuses_the_whole_rename(root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere") / "lib.py"
    outside.write_text(CART)
    ws = Workspace([root])
    inside = (root / "cart.py").as_uri()
    assert set(workspace_changes(ws, edit_of(inside), "server")) == {root / "cart.py"}
    for uri in (
        outside.as_uri(),
        "untitled:Untitled-1",
        (root / "../x.py").as_uri(),
        (root / "gone.py").as_uri(),
    ):
        with pytest.raises(Refusal) as refused:
            workspace_changes(ws, edit_of(inside, uri), "server")
        assert refused.value.code == "outside_workspace" and "whole rename" in refused.value.message


@pytest.mark.parametrize(
    "edit, code",
    [
        (
            {"documentChanges": [{"kind": "rename", "oldUri": "file:///a", "newUri": "file:///b"}]},
            "file_operation",
        ),
        ([], "bad_answer"),
        ({"changes": {"X": [{"range": None, "newText": 1}]}}, "outside_workspace"),
        ({"documentChanges": [7]}, "bad_answer"),
    ],
)
def test_an_answer_that_is_not_a_text_rename_is_refused(root, edit, code):
    with pytest.raises(Refusal) as refused:
        workspace_changes(Workspace([root]), edit, "server")
    assert refused.value.code == code


def test_a_range_that_does_not_hold_the_old_name_is_refused(root):
    """A server whose view of a file is older than the file would shift the edit."""
    from lsp_agent.semantic.rename import TextChange
    from lsp_agent.tools.rename import planned

    ctx = Context(Workspace([root]))
    found = Renamed("server", "add_item", {root / "cart.py": [TextChange(1, 9, 1, 17, "put")]})
    with pytest.raises(Refusal) as refused:
        planned(ctx, found)
    assert refused.value.code == "server_out_of_date"
    found.files = {root / "cart.py": [TextChange(1, 8, 1, 16, "put")]}
    _, contents = planned(ctx, found)
    assert contents == [CART.replace("add_item", "put")]


# --- all or none ---------------------------------------------------------------------------

TEXTS = st.lists(st.text(st.sampled_from("ab é\n日😀"), max_size=30), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts=TEXTS, fail_at=st.integers(0, 7))
def test_a_failure_on_the_nth_file_leaves_every_file_as_it_was(texts, fail_at):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        for n, text in enumerate(texts):
            (root / f"f{n}.txt").write_bytes(text.encode())
        ctx = Context(Workspace([root]))
        sources = [open_source(ctx, f"f{n}.txt") for n in range(len(texts))]
        calls = []

        def failing(*args, **kwargs):  # the real writer, but the fail_at-th write fails
            calls.append(args[1])
            if len(calls) == fail_at + 1:
                raise Refusal("disk_full", "the disk is full; the file is unchanged.")
            return write_file(*args, **kwargs)

        items = [(s, s.content + "new") for s in sources]
        if fail_at < len(texts):
            with pytest.raises(Refusal) as refused:
                commit_all(ctx, items, write=failing)
            assert refused.value.code == "disk_full" and "None of the" in refused.value.message
            assert [(root / f"f{n}.txt").read_bytes() for n in range(len(texts))] == [
                t.encode() for t in texts
            ]
        else:
            by, _ = commit_all(ctx, items, write=failing)
            assert by == "disk"
            assert [(root / f"f{n}.txt").read_text() for n in range(len(texts))] == [t + "new" for t in texts]
        assert not [p for p in root.iterdir() if p.name.startswith(".lsp-agent-")]


def test_a_file_changed_before_its_turn_rolls_back_the_others(tmp_path):
    """A real fault, by the real writer: the third file changes on disk after the plan."""
    for n in range(4):
        (tmp_path / f"f{n}.py").write_text(f"x{n} = 1\n")
    ctx = Context(Workspace([tmp_path]))
    sources: list[Source] = [open_source(ctx, f"f{n}.py") for n in range(4)]
    (tmp_path / "f2.py").write_text("changed = 1\n")
    with pytest.raises(Refusal) as refused:
        commit_all(ctx, [(s, s.content.replace("1", "2")) for s in sources])
    assert refused.value.code == "stale" and "2 files already written were put back" in refused.value.message
    assert [(tmp_path / f"f{n}.py").read_text() for n in range(4)] == [
        "x0 = 1\n",
        "x1 = 1\n",
        "changed = 1\n",
        "x3 = 1\n",
    ]


# --- the preview's ladder --------------------------------------------------------------------


@pytest.mark.parametrize("budget", [300, 700, 2_000, 20_000])
def test_every_preview_fits_its_budget_and_says_how_to_get_the_rest(budget):
    rows = [
        Row(f"pkg/m{n // 20}.py", n + 1, f"Owner{n}/save", f"self.put(item_{n}, {'x' * (n % 50)})")
        for n in range(200)
    ]
    answer = listing("Owner/save → put", rows, Renamed("basedpyright", "save"), "abc", None, 0, None, budget)
    assert len(answer["text"]) <= budget
    assert answer["total"] == 200 and answer["files"] == 10
    if answer["stage"] != "one line per change":
        assert "more: one line per change with offset=0" in answer["text"]
    if answer["next"] is None:  # all of it, whole
        assert answer["stage"] == "one line per change" and len(answer["changes"]) == 200
        return
    page = listing(
        "Owner/save → put",
        rows,
        Renamed("basedpyright", "save"),
        "abc",
        None,
        **answer["next"],
        max_chars=budget,
    )
    assert len(page["text"]) <= budget and page["stage"] == "one line per change"


# --- which diagnostics are new ---------------------------------------------------------------


def diagnostic(line: int, message: str, severity: int = 1) -> dict:
    at = {"line": line, "character": 0}
    return {"range": {"start": at, "end": at}, "message": message, "severity": severity}


def test_only_the_errors_an_edit_introduced_count():
    old = ["a = f()", "b = 1", "c = g()"]
    new = ["import x", "a = f()", "b = 'one'", "c = g()"]  # a line above moves the others
    before = [diagnostic(0, "f is unknown"), diagnostic(2, "g is unknown")]
    after = [diagnostic(1, "f is unknown"), diagnostic(3, "g is unknown"), diagnostic(2, "str is not int")]
    fresh, already = introduced(before, after, old, new)
    assert [d["message"] for d in fresh] == ["str is not int"] and already == 2


def test_an_old_error_on_a_changed_line_is_not_new_but_a_second_one_is():
    before = [diagnostic(1, "x is unknown")]
    after = [diagnostic(1, "x is unknown"), diagnostic(2, "x is unknown")]
    fresh, already = introduced(before, after, ["a", "x()"], ["a", "x(1)", "x(2)"])
    assert len(fresh) == 1 and already == 1


def test_diagnostics_without_a_server_say_they_are_unavailable_and_why(root):
    ctx = Context(Workspace([root]), Settings(semantic_servers={"python": False}))
    answer = call(
        ctx,
        "edit",
        {"path": "cart.py", "old_text": "return item", "new_text": "return 2", "diagnostics": True},
    )
    assert "error" not in answer and "return 2" in (root / "cart.py").read_text()
    assert (
        "diagnostics: unavailable (no language server answers for cart.py (semantic_servers.python is false))"
        in answer["text"]
    )
    assert answer["diagnostics"] == {
        "unavailable": "no language server answers for cart.py (semantic_servers.python is false)"
    }
