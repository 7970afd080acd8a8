"""Edits through an editor, end to end over stdio: a client that announces workspace/applyEdit
gets the edit as one versioned text edit (in UTF-16 columns), applies it to its buffer and
sends didChange; the answer says the editor applied it. A client that refuses is reported,
with its buffer and the disk unchanged; one that cannot apply edits but has the file open is
refused rather than written behind."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_agent.server import plain_converter
from tests.support.lsp_client import request

pytestmark = pytest.mark.asyncio(loop_scope="function")

SOURCE = 'def greet(name):\n    return "hé 😀 " + name\n\n\ndef main():\n    greet("x")\n'


def utf16_offset(line: str, units: int) -> int:
    """The character index of a UTF-16 column."""
    return len(line.encode("utf-16-le")[: units * 2].decode("utf-16-le"))


def apply_text_edit(text: str, edit: types.TextEdit) -> str:
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        before = sum(len(x) + 1 for x in lines[: position.line])
        return before + utf16_offset(lines[position.line], position.character)

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end) :]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)
    client.buffers = {}  # uri -> (version, text): the editor's open documents
    client.refuse = None  # a failure reason to answer applyEdit with
    client.edits = []

    @client.feature(types.WORKSPACE_APPLY_EDIT)
    def apply_edit(client: LanguageClient, params: types.ApplyWorkspaceEditParams):
        client.edits.append(params)
        if client.refuse:
            return types.ApplyWorkspaceEditResult(applied=False, failure_reason=client.refuse)
        for change in params.edit.document_changes or []:
            if isinstance(change, types.CreateFile):
                client.buffers.setdefault(change.uri, (0, ""))
                continue
            uri = change.text_document.uri
            version, text = client.buffers[uri]
            if change.text_document.version is not None and change.text_document.version != version:
                return types.ApplyWorkspaceEditResult(applied=False, failure_reason="the buffer changed")
            for edit in change.edits:
                text = apply_text_edit(text, edit)
            client.buffers[uri] = (version + 1, text)
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version + 1),
                    content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                )
            )
        return types.ApplyWorkspaceEditResult(applied=True)

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
)


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "app.py").write_text(SOURCE)
    return tmp_path


def capabilities(apply_edit: bool) -> types.ClientCapabilities:
    return types.ClientCapabilities(workspace=types.WorkspaceClientCapabilities(apply_edit=apply_edit))


async def start(client: LanguageClient, project: Path, apply_edit: bool = True) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(apply_edit),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="p")],
        )
    )
    uri = (project / "app.py").as_uri()
    client.buffers[uri] = (1, SOURCE)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SOURCE)
        )
    )


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def test_an_edit_goes_through_the_editor_and_its_buffer_not_the_disk(client, project):
    await start(client, project)
    uri = (project / "app.py").as_uri()
    answer = await request(client, "edit", path="app.py", old_text='" + name', new_text='" + name.title()')
    assert "error" not in answer, answer["text"]
    assert answer["applied_by"] == "editor" and "applied by the editor" in answer["text"]
    [sent] = client.edits
    [change] = sent.edit.document_changes
    assert change.text_document.version == 1
    [edit] = change.edits
    # one edit of just the changed span, its column in UTF-16 units (the emoji counts two)
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (1, 26, ".title()")
    assert edit.range.end == edit.range.start
    assert client.buffers[uri][1] == SOURCE.replace('" + name', '" + name.title()')
    assert (project / "app.py").read_text() == SOURCE  # unsaved: the person saves it
    read = await request(client, "read", path="app.py")
    assert read["version"] == answer["version"] and "name.title()" in read["text"]
    symbol = await request(client, "edit_symbol", path="app.py", symbol="main", action="insert_after",
                           new_text="def other():\n    pass")  # fmt: skip
    assert "error" not in symbol, symbol["text"]
    assert client.buffers[uri][1].endswith('greet("x")\n\n\ndef other():\n    pass\n')


async def test_an_editor_that_refuses_the_edit_is_reported(client, project):
    await start(client, project)
    client.refuse = "the file is read-only in this editor"
    answer = await request(client, "edit", path="app.py", old_text="main", new_text="start")
    assert answer["error"]["code"] == "editor_refused"
    assert "read-only in this editor" in answer["text"]
    assert client.buffers[(project / "app.py").as_uri()][1] == SOURCE
    assert (project / "app.py").read_text() == SOURCE


async def test_an_open_file_in_an_editor_that_cannot_apply_edits_is_not_written(client, project):
    await start(client, project, apply_edit=False)
    answer = await request(client, "edit", path="app.py", old_text="main", new_text="start")
    assert answer["error"]["code"] == "open_in_editor"
    assert (project / "app.py").read_text() == SOURCE
    (project / "other.py").write_text("x = 1\n")
    written = await request(client, "edit", path="other.py", old_text="x = 1", new_text="x = 2")
    assert written["applied_by"] == "disk" and (project / "other.py").read_text() == "x = 2\n"


async def test_edits_off_leaves_the_tools_out_of_the_catalog(client, project):
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(True),
            workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="p")],
            initialization_options={"edits": "off"},
        )
    )
    names = {t["name"] for t in (await client.protocol.send_request_async("lspAgent/tools", {}))["tools"]}
    assert "read" in names and not names & {"edit", "edit_symbol", "create_file"}
    answer = await request(client, "edit", path="app.py", old_text="main", new_text="start")
    assert answer["error"]["code"] == "edits_off" and (project / "app.py").read_text() == SOURCE


async def test_create_file_goes_through_the_editor(client, project):
    await start(client, project)
    answer = await request(client, "create_file", path="pkg/new.py", content="x = 1\n")
    assert "error" not in answer, answer["text"]
    assert answer["applied_by"] == "editor"
    created, text_edit = client.edits[0].edit.document_changes
    assert isinstance(text_edit, types.TextDocumentEdit) and text_edit.edits[0].new_text == "x = 1\n"
    assert isinstance(created, types.CreateFile) and created.uri == (project / "pkg" / "new.py").as_uri()
    assert client.buffers[created.uri][1] == "x = 1\n"
    assert not (project / "pkg" / "new.py").exists()  # the editor saves it, not the server
    read = await request(client, "read", path="pkg/new.py")
    assert read["version"] == answer["version"]
