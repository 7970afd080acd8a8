"""The path-escape suite: every path trick an adversary tries, against every tool that takes
a path, in process and over stdio. A secret file sits next to the workspace root, reachable
through `..`, symlinks, URIs and the like; its content must never appear in an answer, and
every trick must get an answer (a refusal or an honest empty result), never a crash."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lsp_agent.errors import Refusal
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace
from tests.support.raw_rpc import RawClient

SECRET = "TOP-SECRET-0451"
FINDS_SECRET = "TOP-SECRET-04[5]1"  # a pattern that matches the secret without being it


@pytest.fixture
def layout(tmp_path):
    """tmp/secret/…, tmp/ws (the root) with links pointing out, and tmp/link-root -> ws."""
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "key.py").write_text(f"KEY = '{SECRET}'\n")
    (outside / "notes.txt").write_text(f"{SECRET}\n")
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "mod.py").write_text("def inside():\n    return 1\n")
    (root / "link_out_file.py").symlink_to(outside / "key.py")
    (root / "link_out_dir").symlink_to(outside)
    (root / "pkg" / "link_up").symlink_to(tmp_path)
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    (root / "self").symlink_to(root)
    (tmp_path / "link-root").symlink_to(root)
    return root, outside


def tricks(root, outside) -> list[str]:
    secret_file = outside / "key.py"
    return [
        "../secret/key.py",
        "../../" * 20 + str(secret_file).lstrip("/"),
        "pkg/../../secret/key.py",
        "./pkg/./../../secret/key.py",
        str(secret_file),
        "/etc/passwd",
        "link_out_file.py",
        "link_out_dir/key.py",
        "link_out_dir",
        "pkg/link_up/secret/key.py",
        "pkg/link_up/ws/link_out_file.py",
        "self/link_out_file.py",
        "self/self/self/../secret/key.py",
        "loop_a",
        "loop_a/x.py",
        "loop_a/../link_out_dir",  # realpath stops at the loop and leaves link_out_dir unresolved
        "loop_b/../link_out_dir/key.py",
        secret_file.as_uri(),
        root.as_uri() + "/../secret/key.py",
        root.as_uri() + "/%2e%2e/secret/key.py",
        root.as_uri() + "/pkg/%2E%2E/%2e%2e/secret/key.py",
        root.as_uri() + "/%2e%2e%2fsecret%2fkey.py",
        "file://localhost" + str(secret_file),
        "file:" + str(secret_file),
        "file:///../../" + str(secret_file).lstrip("/"),
        "pkg/mod.py\x00../../secret/key.py",
        "\x00",
        "a" * 5000,
        "pkg/" + "x/" * 2500 + "key.py",
        "~/../../" + str(secret_file).lstrip("/"),
        "~root/.bashrc",
        "..\\secret\\key.py",
        "pkg\\..\\..\\secret\\key.py",
        "",
        "   ",
        "..",
        "/",
        "//secret",
        str(root.parent / "link-root" / ".." / "secret" / "key.py"),
    ]


def calls_for(path: str) -> list[tuple[str, dict]]:
    return [
        ("read", {"path": path}),
        ("read", {"path": path, "start": 1, "col": 1}),
        ("symbols", {"path": path}),
        ("find_symbol", {"name_path": "KEY", "path": path}),
        ("search", {"pattern": FINDS_SECRET, "paths": [path]}),
        ("search", {"pattern": "KEY", "paths": [path, "pkg"]}),
        ("search", {"pattern": FINDS_SECRET, "glob": path}),
    ]


def assert_no_escape(tool: str, arguments: dict, answer: dict) -> None:
    assert SECRET not in json.dumps(answer), (tool, arguments, answer["text"][:300])


def test_every_trick_against_every_tool_in_process(layout):
    root, outside = layout
    ctx = Context(Workspace([root]))
    count = 0
    for trick in tricks(root, outside):
        for tool, arguments in calls_for(trick):
            answer = call(ctx, tool, arguments)
            assert isinstance(answer["text"], str)
            assert_no_escape(tool, arguments, answer)
            count += 1
    assert count == len(tricks(root, outside)) * 7


def test_a_workspace_search_and_outline_do_not_follow_links_out(layout):
    root, _ = layout
    ctx = Context(Workspace([root]))
    for tool, arguments in [
        ("search", {"pattern": FINDS_SECRET}),
        ("search", {"pattern": "KEY", "fixed_strings": True}),
        ("symbols", {"path": "."}),
        ("find_symbol", {"name_path": "KEY"}),
    ]:
        answer = call(ctx, tool, arguments)
        assert_no_escape(tool, arguments, answer)
    # what is inside stays reachable, also through a symlinked root
    assert "inside" in call(ctx, "symbols", {"path": "pkg/mod.py"})["text"]
    linked = Context(Workspace([root.parent / "link-root"]))
    assert "inside" in call(linked, "read", {"path": "pkg/mod.py"})["text"]
    assert_no_escape("read", {}, call(linked, "read", {"path": "../secret/key.py"}))


pieces = st.sampled_from(
    [
        "..",
        ".",
        "pkg",
        "secret",
        "key.py",
        "link_out_dir",
        "link_up",
        "self",
        "loop_a",
        "ws",
        "%2e%2e",
        "~",
        "",
    ]
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces, min_size=1, max_size=8), absolute=st.booleans(), uri=st.booleans())
def test_no_composition_of_path_pieces_escapes(layout, parts, absolute, uri):
    root, _ = layout
    ctx = Context(Workspace([root]))
    path = "/".join(parts)
    if uri:
        path = root.as_uri() + "/" + path
    elif absolute:
        path = str(root) + "/" + path
    for tool, arguments in calls_for(path)[:5]:
        assert_no_escape(tool, arguments, call(ctx, tool, arguments))


async def test_tricks_over_stdio(layout):
    """The same tricks through the server: tool requests, commands and documentSymbol."""
    root, outside = layout
    client = await RawClient.start()
    try:
        await client.initialize(root)
        for trick in tricks(root, outside):
            for tool, arguments in calls_for(trick)[:5]:
                answer = await client.call(f"lspAgent/{tool}", arguments)
                assert "result" in answer or answer["error"]["code"] == -32602, answer
                assert SECRET not in json.dumps(answer), (tool, trick)
            command = await client.call(
                "workspace/executeCommand", {"command": "lspAgent.read", "arguments": [{"path": trick}]}
            )
            assert SECRET not in json.dumps(command)
            uri = (
                trick
                if trick.startswith("file:")
                else (root / trick).as_uri()
                if trick.strip()
                else "file:///"
            )
            symbols = await client.call("textDocument/documentSymbol", {"textDocument": {"uri": uri}})
            assert "KEY" not in json.dumps(symbols), trick
        # didOpen of a file outside the workspace does not put it in the workspace
        secret_uri = (outside / "key.py").as_uri()
        client.notify(
            "textDocument/didOpen",
            {
                "textDocument": {
                    "uri": secret_uri,
                    "languageId": "python",
                    "version": 1,
                    "text": f"X = '{SECRET}'\n",
                }
            },
        )
        answer = await client.call("lspAgent/search", {"pattern": FINDS_SECRET})
        assert SECRET not in json.dumps(answer)
        answer = await client.call("lspAgent/read", {"path": str(outside / "key.py")})
        assert SECRET not in json.dumps(answer)
    finally:
        assert await client.finish() == 0


def test_the_suite_can_see_a_leak(layout):
    """The check itself works: the secret read through a workspace that contains it is seen."""
    root, outside = layout
    ctx = Context(Workspace([root.parent]))
    answer = call(ctx, "read", {"path": os.path.relpath(outside / "key.py", root.parent)})
    with pytest.raises(AssertionError):
        assert_no_escape("read", {}, answer)


def test_roots_change_in_one_step_for_tools_running_meanwhile(tmp_path):
    """A folder change sets the roots on the event loop while tools in worker threads ask
    which root holds a path: at every moment between two of its assignments, the answer is
    a root that holds the path (or none). Roots and their strings set one after the other
    put a file of a removed root under the one that stayed (a folder outline taking the path
    relative to that root would raise ValueError)."""
    removed, kept = tmp_path / "removed", tmp_path / "kept"
    removed.mkdir()
    kept.mkdir()
    file = removed / "a.py"
    seen: list[Path | None] | None = None  # not while it is made

    class Watched(Workspace):
        def __setattr__(self, name, value):
            super().__setattr__(name, value)
            if seen is not None:  # what a tool running now would be told
                seen.append(self.root_of(file))

    workspace = Watched([removed, kept])
    seen = []
    workspace.set_roots([kept])
    assert seen and all(root is None or file.is_relative_to(root) for root in seen)
    assert workspace.root_of(file) is None and workspace.root_of(kept / "b.py") == kept


def read_both_ways(ws: Workspace, path: str) -> tuple[tuple, tuple]:
    """What named_text answers for `path`, and what resolve then text answer: (path, content)
    or the refusal's code."""

    def outcome(read) -> tuple:
        try:
            found, text = read()
        except Refusal as refusal:
            return ("refused", refusal.code)
        return (found, text.content)

    def resolved() -> tuple:
        real = ws.resolve(path)
        return real, ws.text(real)

    return outcome(lambda: ws.named_text(path)), outcome(resolved)


def test_named_text_reads_what_resolving_first_reads(layout):
    """The shortcut that skips realpath for a plainly written path finds what resolving it
    first finds, for every trick and for links inside the workspace (a link to a file
    there is followed, as resolve follows it, and the file's own path is answered)."""
    root, outside = layout
    (root / "pkg" / "alias.py").symlink_to(root / "pkg" / "mod.py")
    (root / "linked_pkg").symlink_to(root / "pkg")
    ws = Workspace([root])
    plain = [
        "pkg/mod.py",
        str(root / "pkg" / "mod.py"),
        "pkg/alias.py",
        "linked_pkg/mod.py",
        "pkg/missing.py",
        "pkg",
        "\ud800x",  # a name no file system encoding holds
        str(root / "pkg" / "\ud800x"),
    ]
    for path in plain + tricks(root, outside):
        shortcut, resolved = read_both_ways(ws, path)
        assert shortcut == resolved, path
        assert SECRET not in repr(shortcut), path
    assert read_both_ways(ws, "linked_pkg/mod.py")[0] == (
        root / "pkg" / "mod.py",
        "def inside():\n    return 1\n",
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(pieces, min_size=1, max_size=8), absolute=st.booleans())
def test_named_text_agrees_with_resolving_for_any_composition(layout, parts, absolute):
    root, _ = layout
    ws = Workspace([root])
    path = ("" if not absolute else str(root) + "/") + "/".join(parts)
    shortcut, resolved = read_both_ways(ws, path)
    assert shortcut == resolved
    assert SECRET not in repr(shortcut)
