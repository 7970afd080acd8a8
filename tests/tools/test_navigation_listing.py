"""list_files, read of several files, overview, and search's output modes and structure
filters, through the registry; then every navigation tool end to end over LSP and MCP."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from mcp import Client, StdioServerParameters
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from lsp_agent.mcp import ANSWER_META
from lsp_agent.server import plain_converter
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

FIXTURES = Path(__file__).parents[1] / "fixtures" / "navigation"


@pytest.fixture(scope="module")
def nav():
    ctx = Context(Workspace([FIXTURES]))
    return lambda tool, **arguments: call(ctx, tool, arguments)


# --- list_files ---------------------------------------------------------------------------


def test_list_files_counts_lines_and_sizes(nav):
    answer = nav("list_files", path="py", glob="*.py")
    assert answer["text"].splitlines() == [
        "list_files py (glob *.py) · 5 files, 51 lines · stage: files",
        "py/shop/__init__.py  0 lines  0 B",
        "py/shop/db/__init__.py  3 lines  63 B",
        "py/shop/db/models.py  32 lines  618 B",
        "py/shop/shortcuts.py  7 lines  217 B",
        "py/shop/views/orders.py  9 lines  213 B",
    ]


def test_list_files_honours_ignore_rules(tmp_path, run):
    (tmp_path / "keep.py").write_text("x = 1\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text("y = 2\n")
    (tmp_path / ".hidden.py").write_text("z = 3\n")
    (tmp_path / ".gitignore").write_text("build/\n")
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01\x02")
    answer = run("list_files")
    assert [f["path"] for f in answer["files"]] == ["blob.bin", "keep.py"]
    assert "blob.bin  binary  3 B" in answer["text"]
    assert [f["path"] for f in run("list_files", glob="*.py")["files"]] == [".hidden.py", "keep.py"]
    assert run("list_files", glob="build/*")["total_files"] == 0  # ripgrep's rules: still ignored
    assert run("list_files", path="..")["error"]["code"] == "outside_workspace"


def test_list_files_shortens_to_folders_then_summary(nav):
    folders = nav("list_files", max_chars=300)
    assert folders["stage"] == "folders (depth 1)"
    assert "py/  5 files  51 lines" in folders["text"]
    assert folders["next"]["offset"] == 0


@settings(max_examples=25, deadline=None)
@given(budget=st.integers(min_value=200, max_value=1500))
def test_list_files_pages_reach_every_file_once(budget):
    ctx = Context(Workspace([FIXTURES]))
    everything = [f["path"] for f in call(ctx, "list_files", {"max_chars": 10**6})["files"]]
    answer = call(ctx, "list_files", {"max_chars": budget})
    assert len(answer["text"]) <= budget
    seen = [f["path"] for f in answer["files"]] if answer["stage"] == "files" else []
    nxt = answer["next"]
    while nxt:
        page = call(ctx, "list_files", {"max_chars": budget, **nxt})
        assert len(page["text"]) <= budget and page["stage"] == "files"
        seen += [f["path"] for f in page["files"]]
        nxt = page["next"]
    assert seen == everything


# --- read paths= ----------------------------------------------------------------------------


def test_read_paths_splits_one_budget(nav):
    answer = nav(
        "read", path="py/shop/db/models.py", paths=["py/shop/shortcuts.py", "nope.py"], max_chars=700
    )
    text = answer["text"]
    assert len(text) <= 700
    assert "py/shop/shortcuts.py · 7 lines" in text  # the short file whole
    assert "py/shop/db/models.py · lines 1-16 of 32 · version " in text  # the long one paged
    assert "[read on with start=17 path=py/shop/db/models.py]" in text
    assert [f.get("next") for f in answer["files"]] == [{"start": 17}, None, None]
    assert answer["files"][2]["error"] == "nope.py does not exist."
    assert nav("read", path="a", paths=["b"], start=3)["error"]["code"] == "bad_arguments"
    assert (
        nav("read", path="py/shop/db/models.py", paths=["py/shop/db/models.py"] * 2, max_chars=200)["error"][
            "code"
        ]
        == "budget_too_small"
    )


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(budget=st.integers(min_value=400, max_value=3000), count=st.integers(min_value=2, max_value=4))
def test_read_paths_continuations_give_every_line_once(budget, count):
    ctx = Context(Workspace([FIXTURES]))
    paths = ["py/shop/db/models.py", "ts/src/main.ts", "go/store/store.go", "java/lib/Shelf.java"][:count]
    answer = call(ctx, "read", {"path": paths[0], "paths": paths[1:], "max_chars": budget})
    if "error" in answer:
        assert answer["error"]["code"] == "budget_too_small" and answer["minimum"] > budget
        return
    assert len(answer["text"]) <= budget
    text = answer["text"]
    for path, entry in zip(paths, answer["files"], strict=True):
        start = entry["next"]["start"] if entry["next"] else None
        total = len((FIXTURES / path).read_text().splitlines())
        if start is None:  # shown whole, its header says so
            assert f"{path} · {total} lines" in text
            continue
        if start > 1:  # its first lines, and the continuation the text names
            assert f"{path} · lines 1-{start - 1} of {total}" in text
            assert f"read on with start={start}" in text
        nxt, pages = entry["next"], []
        while nxt:  # read pages on from there: they end at the file's last line, each once
            page = call(ctx, "read", {"path": path, "max_chars": 2000, **nxt})
            pages.append((page["start"], page["end"]))
            nxt = page["next"]
        assert pages[0][0] == start and pages[-1][1] == total
        assert all(b[0] == a[1] + 1 for a, b in itertools.pairwise(pages))


# --- overview -------------------------------------------------------------------------------


def test_overview_ranks_what_other_files_use(nav):
    answer = nav("overview", path="py")
    lines = answer["text"].splitlines()
    assert lines[0].startswith("overview py · 5 files")
    assert "  19: def full_clean(self, exclude=None, validate_unique=True)" in lines
    assert "4: def get_object_or_404(klass, *args, **kwargs)" in lines
    assert {s["name_path"] for s in answer["shown"]} >= {"Model", "Model/full_clean", "get_object_or_404"}


@settings(max_examples=20, deadline=None)
@given(budget=st.integers(min_value=300, max_value=2000))
def test_overview_pages_reach_every_ranked_definition_once(budget):
    ctx = Context(Workspace([FIXTURES]))
    everything = call(ctx, "overview", {"max_chars": 10**6})["shown"]
    answer = call(ctx, "overview", {"max_chars": budget})
    if "error" in answer:  # not even one definition fits: refused, saying what would
        assert answer["error"]["code"] == "budget_too_small" and answer["minimum"] > budget
        return
    seen = list(answer["shown"])
    while answer["next"]:
        answer = call(ctx, "overview", {"max_chars": budget, **answer["next"]})
        assert len(answer["text"]) <= budget
        seen += answer["shown"]
    assert seen == everything


def test_overview_leaves_out_minified_bundles(tmp_path, run):
    (tmp_path / "app.js").write_text("import { helper } from './lib';\nhelper(); helper();\n")
    (tmp_path / "lib.js").write_text("export function helper() {}\n")
    (tmp_path / "vendor.min.js").write_text("function helper(){}" * 50 + "\n")
    answer = run("overview")
    assert [s["path"] for s in answer["shown"]] == ["lib.js"]


# --- search modes and filters -----------------------------------------------------------------


def test_search_output_files_and_count(nav):
    assert nav("search", pattern="full_clean", output="files")["text"].splitlines() == [
        'search "full_clean" · 8 matching lines in 2 files',
        "py/shop/db/models.py",
        "py/shop/views/orders.py",
    ]
    counted = nav("search", pattern="full_clean", output="count")
    assert counted["text"].splitlines()[1:] == ["py/shop/db/models.py: 6", "py/shop/views/orders.py: 2"]


@settings(max_examples=20, deadline=None)
@given(budget=st.integers(min_value=200, max_value=800), output=st.sampled_from(["files", "count"]))
def test_search_file_pages_reach_every_file_once(budget, output):
    ctx = Context(Workspace([FIXTURES]))
    everything = call(ctx, "search", {"pattern": "e", "output": output, "max_chars": 10**6})["files"]
    answer = call(ctx, "search", {"pattern": "e", "output": output, "max_chars": budget})
    seen = list(answer["files"])
    while answer["next"]:
        answer = call(
            ctx, "search", {"pattern": "e", "output": output, "max_chars": budget, **answer["next"]}
        )
        assert len(answer["text"]) <= budget
        seen += answer["files"]
    assert seen == everything


@pytest.mark.parametrize(
    ("where", "lines"),
    [("code", [19, 26, 30, 32]), ("comments", [22]), ("strings", [27])],
)
def test_search_in_code_comments_strings(nav, where, lines):
    answer = nav("search", pattern="full_clean", paths=["py/shop/db"], **{"in": where})
    assert [loc["line"] for loc in answer["locations"]] == lines


def test_search_within_a_symbol(nav):
    answer = nav("search", pattern="full_clean", within="Model/save")
    assert [loc["line"] for loc in answer["locations"]] == [26, 27]
    assert "only matches within Model/save: 6 other matches left out" in answer["text"]


# --- front doors ----------------------------------------------------------------------------

CALLS = [
    ("references", {"name": "Model/full_clean"}, "26 call Model/save: self.full_clean()"),
    ("definition", {"path": "py/shop/views/orders.py", "line": 6, "column": 15}, "def get_object_or_404"),
    ("find_symbol", {"extends": "Field"}, "class EmailField(CharField)"),
    ("list_files", {"path": "go"}, "go/store/store.go  14 lines"),
    ("overview", {"path": "py"}, "class Model"),
    ("read", {"path": "go/store/store.go", "paths": ["rust/src/main.rs"]}, "fn main()"),
    ("search", {"pattern": "full_clean", "output": "count"}, "py/shop/db/models.py: 6"),
]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)  # answers progress requests as editors do

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
        return None  # accepted, as editors do

    return client


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_agent", "serve"],
        client_factory=make_client,
    )
)
async def lsp(lsp_client: LanguageClient):
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            workspace_folders=[types.WorkspaceFolder(uri=FIXTURES.as_uri(), name="fixtures")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def test_navigation_tools_over_lsp(lsp):
    for tool, arguments, expected in CALLS:
        answer = await lsp.protocol.send_request_async(f"lspAgent/{tool}", arguments)
        text = answer["text"] if isinstance(answer, dict) else answer.text
        assert expected in text, (tool, text)


async def test_navigation_tools_over_mcp():
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "lsp_agent", "mcp", "--root", str(FIXTURES)]
    )
    async with Client(params, mode="legacy", read_timeout_seconds=30) as mcp:
        for tool, arguments, expected in CALLS:
            result = await mcp.call_tool(tool, arguments)
            assert not result.is_error
            assert expected in result.meta[ANSWER_META]["text"], tool
