"""rename and diagnostics against the real servers (basedpyright; typescript-language-server
with TypeScript 5), installed by `make test-servers`: a method renamed across files (the
preview, the apply, the files' new text, a stale preview refused), and the errors an edit
introduced (a type error added is reported, one already there is not)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.config import Settings
from lsp_agent.semantic import POOL
from lsp_agent.tools import Context, call
from lsp_agent.workspace import Workspace

CACHE = os.environ.get("LSP_AGENT_TEST_SERVERS")
if CACHE is None and os.environ.get("CI") == "true":
    raise RuntimeError("CI: run these through `make test-servers`, which installs the servers")
pytestmark = pytest.mark.skipif(CACHE is None, reason="run through `make test-servers`")

PROJECTS = {
    "py": {
        "shop/__init__.py": "",
        "shop/cart.py": (
            "class Cart:\n"
            "    def __init__(self) -> None:\n"
            "        self.items: list[str] = []\n"
            "\n"
            "    def add_item(self, item: str) -> None:\n"
            "        self.items.append(item)\n"
            "\n"
            "\n"
            "class Other:\n"
            "    def add_item(self, item: str) -> None:\n"
            "        pass\n"
        ),
        "shop/checkout.py": (
            "from shop.cart import Cart, Other\n"
            "\n"
            "\n"
            "def checkout(cart: Cart, other: Other) -> int:\n"
            '    cart.add_item("apple")\n'
            '    cart.add_item("pear")\n'
            '    other.add_item("not this one")\n'
            "    return len(cart.items)\n"
        ),
    },
    "ts": {
        "tsconfig.json": '{ "compilerOptions": { "target": "ES2020", "module": "ES2020", "strict": true }, "include": ["src"] }\n',
        "src/cart.ts": (
            "export class Cart {\n"
            "  items: string[] = [];\n"
            "  addItem(item: string): void {\n"
            "    this.items.push(item);\n"
            "  }\n"
            "}\n"
            "\n"
            "export class Other {\n"
            "  addItem(item: string): void {}\n"
            "}\n"
        ),
        "src/checkout.ts": (
            'import { Cart, Other } from "./cart";\n'
            "\n"
            "export function checkout(cart: Cart, other: Other): number {\n"
            '  cart.addItem("apple");\n'
            '  cart.addItem("pear");\n'
            '  other.addItem("not this one");\n'
            "  return cart.items.length;\n"
            "}\n"
        ),
    },
}
CASES = {  # language: (file, name path, old name, server)
    "py": ("shop/cart.py", "Cart/add_item", "add_item", "basedpyright"),
    "ts": ("src/cart.ts", "Cart/addItem", "addItem", "typescript-language-server"),
}


def servers() -> dict:
    folder = Path(CACHE or ".")
    return {
        "python": [str(folder / "py" / "bin" / "basedpyright-langserver"), "--stdio"],
        "typescript": [
            str(folder / "node" / "node_modules" / ".bin" / "typescript-language-server"),
            "--stdio",
        ],
    }


@pytest.fixture(autouse=True)
def stop_servers():
    yield
    POOL.stop_all()


def project(tmp_path: Path, language: str) -> Context:
    for rel, text in PROJECTS[language].items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    settings = Settings().replace(semantic_servers=servers(), semantic_timeout=60.0)
    return Context(Workspace([tmp_path]), settings)


def settled(ctx: Context, arguments: dict) -> dict:
    """A preview once the server no longer says it may be incomplete (it indexes first)."""
    for _ in range(120):
        answer = call(ctx, "rename", arguments)
        if not answer.get("partial"):
            return answer
        ctx.cancel_event.wait(0.5)
    raise AssertionError(f"rename {arguments}: still partial after a minute")


@pytest.mark.parametrize("language", ["py", "ts"])
def test_a_method_is_renamed_across_files(tmp_path, language):
    ctx = project(tmp_path, language)
    path, symbol, old, server = CASES[language]
    before = {rel: (tmp_path / rel).read_text() for rel in PROJECTS[language]}
    asked = {"path": path, "symbol": symbol, "new_name": "put"}
    preview = settled(ctx, asked)
    assert preview["server"] == server and preview["applied_by"] is None, preview["text"]
    checkout = "shop/checkout.py" if language == "py" else "src/checkout.ts"
    lines = [5, 6] if language == "py" else [4, 5]
    definition = 5 if language == "py" else 3
    assert [(c["path"], c["line"]) for c in preview["changes"]] == [(path, definition)] + [
        (checkout, n) for n in lines
    ]
    assert f"apply=true if_version={preview['version']}" in preview["text"]
    assert {rel: (tmp_path / rel).read_text() for rel in before} == before  # a preview changes nothing

    applied = call(ctx, "rename", {**asked, "apply": True, "if_version": preview["version"]})
    assert applied["applied_by"] == "disk", applied["text"]
    assert "written to disk" in applied["text"]
    cart_lines = before[path].split("\n")
    cart_lines[definition - 1] = cart_lines[definition - 1].replace(old, "put")  # Other's stays
    assert (tmp_path / path).read_text() == "\n".join(cart_lines)
    use_lines = before[checkout].split("\n")
    for n in lines:
        use_lines[n - 1] = use_lines[n - 1].replace(old, "put")
    assert (tmp_path / checkout).read_text() == "\n".join(use_lines)
    assert {w["path"] for w in applied["written"]} == {path, checkout}


@pytest.mark.parametrize("language", ["py", "ts"])
def test_a_preview_applied_after_a_file_changed_is_refused_as_stale(tmp_path, language):
    ctx = project(tmp_path, language)
    path, symbol, _, _ = CASES[language]
    checkout = "shop/checkout.py" if language == "py" else "src/checkout.ts"
    asked = {"path": path, "symbol": symbol, "new_name": "put"}
    preview = settled(ctx, asked)
    changed = (tmp_path / checkout).read_text() + ("# a comment\n" if language == "py" else "// a comment\n")
    (tmp_path / checkout).write_text(changed)
    cart = (tmp_path / path).read_text()
    stale = call(ctx, "rename", {**asked, "apply": True, "if_version": preview["version"]})
    assert stale["error"]["code"] == "stale", stale["text"]
    assert f"changed since: {checkout}" in stale["text"] and stale["current_version"] != preview["version"]
    assert (tmp_path / checkout).read_text() == changed and (tmp_path / path).read_text() == cart


ERRORS = {  # language: (file, old text, new text adding a type error, the error's words)
    "py": ("shop/checkout.py", '    cart.add_item("pear")\n', "    cart.add_item(42)\n", "Literal[42]"),
    "ts": ("src/checkout.ts", '  cart.addItem("pear");\n', "  cart.addItem(42);\n", "number"),
}
ALREADY = {  # an error that is there before the edit
    "py": (
        "shop/checkout.py",
        "    return len(cart.items)\n",
        "    missing_name()\n    return len(cart.items)\n",
    ),
    "ts": (
        "src/checkout.ts",
        "  return cart.items.length;\n",
        "  missingName();\n  return cart.items.length;\n",
    ),
}


def introduced_by_an_edit(ctx: Context, tmp_path: Path, language: str) -> dict:
    """Edit in a type error beside one already there; the capabilities of the server."""
    rel, old, new, words = ERRORS[language]
    _, there, with_error = ALREADY[language]
    (tmp_path / rel).write_text((tmp_path / rel).read_text().replace(there, with_error))
    answer = call(ctx, "edit", {"path": rel, "old_text": old, "new_text": new, "diagnostics": True})
    found = answer["diagnostics"]
    assert "unavailable" not in found and not found["partial"], answer["text"]
    assert [(d["path"], d["line"]) for d in found["introduced"]] == [(rel, 6 if language == "py" else 5)], (
        answer["text"]
    )
    assert words in found["introduced"][0]["message"]
    assert found["already"] == 1  # missing_name / missingName, not shown
    assert "missing" not in answer["text"].lower()  # neither its diagnostic nor its line
    assert "1 error introduced (1 error already there not shown)" in answer["text"]
    return next(iter(POOL.sessions.values())).capabilities


@pytest.mark.parametrize("language", ["py", "ts"])
def test_only_the_errors_an_edit_introduced_are_reported(tmp_path, language):
    """Pushed: basedpyright with the document's version, typescript-language-server without
    (each kind of check as it comes, the last once they stop)."""
    assert "diagnosticProvider" not in introduced_by_an_edit(project(tmp_path, language), tmp_path, language)


def test_diagnostics_a_server_is_asked_for(tmp_path, monkeypatch):
    """Pulled (textDocument/diagnostic): basedpyright offers it to a client that lets it
    register capabilities late; asked once it has."""
    from lsp_agent.semantic import session

    capabilities = {
        **session.CLIENT_CAPABILITIES["textDocument"],
        "diagnostic": {"dynamicRegistration": True},
    }
    monkeypatch.setitem(session.CLIENT_CAPABILITIES, "textDocument", capabilities)
    ctx = project(tmp_path, "py")
    settled(ctx, {"path": "shop/cart.py", "symbol": "Cart/add_item", "new_name": "put"})  # started
    started = next(iter(POOL.sessions.values()))
    for _ in range(400):
        if "diagnosticProvider" in started.capabilities:
            break
        ctx.cancel_event.wait(0.05)
    assert "diagnosticProvider" in started.capabilities
    assert "diagnosticProvider" in introduced_by_an_edit(ctx, tmp_path, "py")


@pytest.mark.asyncio(loop_scope="function")
async def test_a_rename_in_an_editor_is_one_workspace_edit_of_every_file(tmp_path):
    """Over stdio, with a client that applies workspace edits to its buffers: the rename is
    one workspace/applyEdit, every file versioned by its buffer, of the buffers' text (one has
    an unsaved line the disk has not); the disk is unchanged."""
    import asyncio
    import sys

    from lsprotocol import types
    from pytest_lsp import ClientServerConfig

    from tests.edits.test_edits_lsp import make_client
    from tests.support.lsp_client import request, stop

    project(tmp_path, "py")
    before = {rel: (tmp_path / rel).read_text() for rel in PROJECTS["py"]}
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
    )
    client = await config.start()
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    workspace=types.WorkspaceClientCapabilities(apply_edit=True)
                ),
                workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="p")],
                initialization_options={"semantic_servers": servers(), "semantic_timeout": 60.0},
            )
        )
        for rel in ("shop/cart.py", "shop/checkout.py"):
            uri = (tmp_path / rel).as_uri()
            client.buffers[uri] = (1, before[rel])
            item = types.TextDocumentItem(uri=uri, language_id="python", version=1, text=before[rel])
            client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        # an unsaved line above the uses: the server must rename the buffer, not the disk
        checkout = (tmp_path / "shop/checkout.py").as_uri()
        unsaved = "# unsaved\n" + before["shop/checkout.py"]
        client.buffers[checkout] = (2, unsaved)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=checkout, version=2),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=unsaved)],
            )
        )
        asked = {"path": "shop/cart.py", "symbol": "Cart/add_item", "new_name": "put"}
        for _ in range(120):
            # basedpyright may begin indexing again after the preview (the buffers it was
            # sent): the apply then refuses as partial, and an agent previews again
            preview = await request(client, "rename", **asked)
            if not preview.get("partial"):
                answer = await request(client, "rename", **asked, apply=True, if_version=preview["version"])
                if answer.get("error", {}).get("code") != "partial":
                    break
            await asyncio.sleep(0.5)  # the server says it is still indexing: ask again
        assert answer["applied_by"] == "editor", answer["text"]
        assert "applied by the editor (unsaved in its buffers)" in answer["text"]
        [sent] = client.edits
        changed = {c.text_document.uri: c.text_document.version for c in sent.edit.document_changes}
        assert changed == {(tmp_path / "shop/cart.py").as_uri(): 1, checkout: 2}
        assert client.buffers[checkout][1] == unsaved.replace("cart.add_item", "cart.put")
        assert {rel: (tmp_path / rel).read_text() for rel in before} == before  # unsaved: the person saves
        await client.shutdown_session()
    finally:
        await stop(client)
