"""Over stdio, the real server: the opt-in standard textDocument/definition, references and
implementation (initializationOptions `standardNavigation`), off by default; workspace/symbol
locations at the symbol's name; 'unsaved changes' only for a buffer that differs from the disk."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_agent.server import plain_converter
from tests.support.lsp_client import initialize_params, request

SHOP = (
    "import functools\n\n\nclass Cart:\n    @functools.cache\n    def total(self):\n        return 0\n\n\n"
    "class BigCart(Cart):\n    pass\n\n\ndef checkout(cart):\n    return cart.total() + Cart().total()\n"
)


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=plain_converter)
    register_lsp_features(client)
    return client


async def started(project: Path, options: dict | None) -> LanguageClient:
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
    )
    client = await config.start()
    result = await client.initialize_session(initialize_params(project, options))
    client.capabilities_seen = result.capabilities
    return client


@pytest.fixture
def project(tmp_path) -> Path:
    (tmp_path / "shop.py").write_text(SHOP)
    return tmp_path


def position(text: str, needle: str, offset: int = 0) -> types.Position:
    index = text.index(needle) + offset
    line = text.count("\n", 0, index)
    return types.Position(line=line, character=index - (text.rfind("\n", 0, index) + 1))


def spots(locations) -> list[tuple[str, int, int]]:
    return sorted(
        (Path(loc.uri).name, loc.range.start.line, loc.range.start.character) for loc in locations or []
    )


async def test_off_by_default_nothing_is_advertised(project):
    client = await started(project, None)
    try:
        caps = client.capabilities_seen
        assert (
            not caps.definition_provider and not caps.references_provider and not caps.implementation_provider
        )
    finally:
        await client.shutdown_session()


async def test_opted_in_definition_references_and_implementation(project):
    client = await started(project, {"standardNavigation": True, "max_chars": 2000})
    uri = (project / "shop.py").as_uri()
    doc = types.TextDocumentIdentifier(uri=uri)
    try:
        caps = client.capabilities_seen
        assert caps.definition_provider and caps.references_provider and caps.implementation_provider
        at_use = position(SHOP, "cart.total()", len("cart."))
        found = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=at_use)
        )
        assert spots(found) == [("shop.py", 5, 8)]  # at the name `total`, under its decorator
        refs = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc, position=at_use, context=types.ReferenceContext(include_declaration=False)
            )
        )
        assert spots(refs) == [("shop.py", 14, 16), ("shop.py", 14, 33)]
        with_declaration = await client.text_document_references_async(
            types.ReferenceParams(
                text_document=doc, position=at_use, context=types.ReferenceContext(include_declaration=True)
            )
        )
        assert ("shop.py", 5, 8) in spots(with_declaration) and len(spots(with_declaration)) == 3
        at_class = position(SHOP, "class Cart", len("class "))
        subclasses = await client.text_document_implementation_async(
            types.ImplementationParams(text_document=doc, position=at_class)
        )
        assert spots(subclasses) == [("shop.py", 9, 6)]  # BigCart, at its name
        nowhere = await client.text_document_definition_async(
            types.DefinitionParams(text_document=doc, position=types.Position(line=1, character=0))
        )
        assert not nowhere
    finally:
        await client.shutdown_session()


async def test_a_bad_option_value_is_reported_and_nothing_is_advertised(project):
    client = await started(project, {"standardNavigation": "yes"})
    try:
        assert not client.capabilities_seen.definition_provider
        message = await asyncio.wait_for(client.wait_for_notification(types.WINDOW_SHOW_MESSAGE), 20)
        assert "standardNavigation='yes' is invalid" in message.message
    finally:
        await client.shutdown_session()


async def test_workspace_symbol_is_at_the_name_not_the_decorator(project):
    client = await started(project, None)
    try:
        for _ in range(200):
            found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="total"))
            if found:
                break
            await asyncio.sleep(0.05)
        [symbol] = [s for s in found if s.name == "total"]
        assert (symbol.location.range.start.line, symbol.location.range.start.character) == (5, 8)
    finally:
        await client.shutdown_session()


async def test_unsaved_changes_only_when_the_buffer_differs_from_the_disk(project):
    client = await started(project, None)
    uri = (project / "shop.py").as_uri()
    try:
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(uri=uri, language_id="python", version=1, text=SHOP)
            )
        )
        same = await request(client, "search", pattern="def total")
        assert "unsaved" not in same["text"] and "shop.py\n" in same["text"]
        edited = SHOP.replace("return 0", "return 1")
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=edited)],
            )
        )
        changed = await request(client, "search", pattern="return 1")
        assert "shop.py (editor buffer, unsaved changes included)" in changed["text"]
        (project / "shop.py").write_text(edited)  # saved
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
        )
        saved = await request(client, "search", pattern="return 1")
        assert "unsaved" not in saved["text"] and "1 match" in saved["text"]
    finally:
        await client.shutdown_session()
