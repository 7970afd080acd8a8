"""End to end over stdio: documentSymbol (VS Code's and Neovim's recorded capabilities),
workspace/symbol with its background index, and the symbol tools as custom requests."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from lsp_agent.server import plain_converter
from tests.support.grammar_fixtures import copy_fixtures

pytestmark = pytest.mark.asyncio(loop_scope="module")  # the tests share the module-scoped client

# On one line: `later`'s name starts at UTF-8 byte 29, UTF-16 unit 26.
UNICODE_JS = 'const s = "𝄞é"; function later() {}\n'


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)
    client.registrations = []

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register_capability(client: LanguageClient, params: types.RegistrationParams) -> None:
        client.registrations += params.registrations  # as VS Code does: accept

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
)
CLIENTS = {"vscode": ("visual-studio-code", "utf-16"), "neovim": ("neovim@v0.11.0", "utf-8")}


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("project")
    copy_fixtures(root / "src")
    (root / "src" / "unicode.js").write_text(UNICODE_JS, encoding="utf-8")
    # untrusted input: definitions nested 5,000 deep
    (root / "src" / "deep.js").write_text(
        "".join(f"function f{i}() {{\n" for i in range(5000)) + "}\n" * 5000
    )
    return root


@pytest_lsp.fixture(config=CONFIG, scope="module", params=sorted(CLIENTS))
async def client(lsp_client: LanguageClient, request, project):
    spec, _ = CLIENTS[request.param]
    lsp_client.encoding = CLIENTS[request.param][1]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(spec),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
        )
    )
    yield
    await lsp_client.shutdown_session()


async def eventually(probe, timeout: float = 20.0):
    """Poll an async probe until it returns something truthy (the index builds in the background)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if result := await probe():
            return result
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out waiting")
        await asyncio.sleep(0.1)


def tree(symbols) -> list:
    return [(s.name, s.kind, s.range.start.line, s.range.end.line, tree(s.children or [])) for s in symbols]


async def document_symbols(client: LanguageClient, path: Path):
    return await client.text_document_document_symbol_async(
        types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=path.as_uri()))
    )


async def test_document_symbols_are_hierarchical(client: LanguageClient, project):
    result = await document_symbols(client, project / "src" / "shapes.py")
    K = types.SymbolKind
    assert tree(result) == [
        ("T", K.Constant, 4, 4, []),
        ("DEFAULT_SCALE", K.Constant, 5, 5, []),
        ("Point", K.Class, 8, 21, [
            ("x", K.Property, 10, 10, []),
            ("y", K.Property, 11, 11, []),
            ("distance", K.Method, 13, 17, [("square", K.Function, 14, 15, [])]),
            ("origin", K.Method, 19, 21, []),
        ]),
        ("scale", K.Function, 24, 25, []),
    ]  # fmt: skip
    point = result[2]
    assert (point.selection_range.start.line, point.selection_range.start.character) == (9, 6)
    enum = await document_symbols(client, project / "src" / "Library.java")
    status = next(s for s in enum[0].children if s.name == "Status")
    assert [c.kind for c in status.children] == [K.EnumMember, K.EnumMember]


async def test_document_symbol_columns_follow_the_negotiated_encoding(client: LanguageClient, project):
    (later,) = await document_symbols(client, project / "src" / "unicode.js")
    expected = {"utf-16": 26, "utf-8": 29}[client.encoding]
    assert later.selection_range.start.character == expected
    assert later.selection_range.end.character == expected + len("later")


async def test_deeply_nested_code_answers_within_max_nesting(client: LanguageClient, project):
    from lsp_agent.syntax.outline import MAX_NESTING

    (symbol,) = await document_symbols(client, project / "src" / "deep.js")
    depth = 1
    while symbol.children:
        depth, (symbol,) = depth + 1, symbol.children
    assert depth == MAX_NESTING
    hits = await eventually(lambda: client.workspace_symbol_async(types.WorkspaceSymbolParams(query="f47")))
    assert hits[0].container_name == "/".join(f"f{i}" for i in range(MAX_NESTING - 1))


async def test_incremental_changes_give_the_symbols_of_a_fresh_parse(client: LanguageClient, project):
    path = project / "src" / "edited.py"
    uri = path.as_uri()
    source = "class A:\n    def m(self):\n        pass\n"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=source)
        )
    )
    edits = [  # (start line, start col, end line, end col, new text)
        (2, 8, 2, 12, "return 1"),
        (3, 0, 3, 0, "\ndef top():\n    x = 'é𝄞'\n"),
        (0, 6, 0, 7, "Renamed"),
        (1, 8, 1, 9, "method"),
        (5, 0, 6, 0, "    def inner(): pass\n"),
    ]
    for version, (l1, c1, l2, c2, new) in enumerate(edits, 2):
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(line=l1, character=c1), end=types.Position(line=l2, character=c2)),
                    text=new)],
            )
        )  # fmt: skip
    final = "class Renamed:\n    def method(self):\n        return 1\n\ndef top():\n    def inner(): pass\n"
    assert tree(await document_symbols(client, path)) == [
        ("Renamed", types.SymbolKind.Class, 0, 2, [("method", types.SymbolKind.Method, 1, 2, [])]),
        ("top", types.SymbolKind.Function, 4, 5, [("inner", types.SymbolKind.Function, 5, 5, [])]),
    ]
    # the same as the disk's text parsed from scratch once the buffer is saved and closed
    path.write_text(final)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    answer = await client.protocol.send_request_async("lspAgent/symbols", {"path": "src/edited.py"})
    assert answer["text"].splitlines()[1:] == [
        "class Renamed  1-3",
        "  method method  2-3",
        "function top  5-6",
        "  function inner  6",
    ]


async def test_workspace_symbol_index(client: LanguageClient, project):
    async def query(text):
        return await client.workspace_symbol_async(types.WorkspaceSymbolParams(query=text))

    found = await eventually(lambda: query("Polygon"))
    assert next((s.name, s.container_name, Path(s.location.uri).name if False else s.location.uri.rsplit("/", 1)[1])
            for s in found) == ("Polygon", "geo", "shapes.cpp")  # fmt: skip
    assert found[0].location.range.start.line == 8  # at the name, under `template <typename T>`

    # an open document's unsaved edits reach the index
    uri = (project / "src" / "deploy.sh").as_uri()
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="shellscript", version=1,
                                             text="brand_new_function() {\n  true\n}\n")))  # fmt: skip
    hits = await eventually(lambda: query("brand_new"))
    assert hits[0].name == "brand_new_function" and hits[0].kind == types.SymbolKind.Function

    # a file created on disk, announced by the client's file watcher
    created = project / "src" / "created.go"
    created.write_text("package x\n\nfunc WatchedAndFound() {}\n")
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=created.as_uri(), type=types.FileChangeType.Created)]))  # fmt: skip
    assert (await eventually(lambda: query("WatchedAndFound")))[0].location.range.start.line == 2
    created.unlink()
    client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
        changes=[types.FileEvent(uri=created.as_uri(), type=types.FileChangeType.Deleted)]))  # fmt: skip
    await eventually(lambda: _empty(query("WatchedAndFound")))


async def _empty(pending):
    return not await pending


async def test_index_reports_progress(client: LanguageClient):
    if client.encoding != "utf-16":
        pytest.skip("checked with VS Code's capabilities")

    async def reports():
        for values in client.progress_reports.values():
            if (
                values
                and getattr(values[0], "title", "") == "lsp-agent: indexing symbols"
                and values[-1].kind == "end"
            ):
                return values
        return None

    values = await eventually(reports)
    assert values[0].kind == "begin" and values[-1].kind == "end"
    (watch,) = client.registrations  # VS Code watches files for the server on request
    assert watch.method == "workspace/didChangeWatchedFiles"
    assert ".py," in watch.register_options["watchers"][0]["globPattern"]


async def test_use_tables_follow_the_index_and_references_answer_the_same(client: LanguageClient):
    """After the index, the server makes the use tables (its own progress), and references by
    name answers the same once they are made (tests/syntax/test_use_tables.py compares the
    answers with and without them)."""
    if client.encoding != "utf-16":
        pytest.skip("checked with VS Code's capabilities")
    send = client.protocol.send_request_async
    params = {"name": "deposit", "precision": "syntax"}
    before = await send("lspAgent/references", params)

    async def tabled():
        for values in client.progress_reports.values():
            if (
                values
                and getattr(values[0], "title", "") == "lsp-agent: use tables"
                and values[-1].kind == "end"
            ):
                return values
        return None

    assert (await eventually(tabled))[0].kind == "begin"
    after = await send("lspAgent/references", params)
    assert after["text"] == before["text"] and after["total"] >= 1


async def test_symbol_tools_as_requests(client: LanguageClient):
    send = client.protocol.send_request_async
    outline = await send("lspAgent/symbols", {"path": "src/account.rb", "max_chars": 300})
    assert outline["stage"] == "full tree" and "  class Account  5-25" in outline["text"]
    found = await send("lspAgent/find_symbol", {"name_path": "Account.deposit"})
    assert found["matches"] == [{"path": "src/account.rb", "name_path": "Bank/Account/deposit", "kind": "method",
                                 "start_line": 12, "end_line": 14}]  # fmt: skip
    body = await send("lspAgent/read", {"path": "src/account.rb", "symbol": "deposit"})
    assert body["text"].splitlines()[1:] == [  # the header names the symbol: method Bank/Account/deposit
        "12:    def deposit(amount)",
        "13:      @balance += amount",
        "14:    end",
    ]
    command = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="lspAgent.find_symbol", arguments=[{"name_path": "helper"}]))  # fmt: skip
    assert command["matches"][0]["start_line"] == 28
