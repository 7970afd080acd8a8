"""The editor as the semantic source, end to end over stdio: a client that says it answers
`lspAgent/semantic` is asked first, with the plain LSP request, and its answer goes through
the same checks as a headless server's. Whatever it does (garbage, a location outside the
workspace, a hang, an error, nothing), the answer says where it came from or why not; no
headless server starts for a question the editor answered."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcRequestCancelled
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from lsp_agent.server import plain_converter
from tests.support.lsp_client import request

pytestmark = pytest.mark.asyncio(loop_scope="function")

FIXTURE = Path(__file__).parents[1] / "fixtures" / "semantic" / "py"
FAULT_SERVER = Path(__file__).parent / "fault_server.py"
EDITOR = "Test editor's providers"


def span(line: int, start: int, end: int) -> dict:
    return {"start": {"line": line, "character": start}, "end": {"line": line, "character": end}}


def true_answer(root: Path, method: str, params: dict) -> list[dict] | None:
    """What a type-aware editor answers on the fixture (basedpyright's answers, 0-based), for
    the questions the tests ask; None for any other question (no provider)."""
    views, models = (root / "app" / "views.py").as_uri(), (root / "app" / "models.py").as_uri()
    if method == "callHierarchy/incomingCalls":
        total = {
            "name": "total",
            "kind": 6,
            "uri": models,
            "range": span(10, 4, 11),
            "selectionRange": span(10, 8, 13),
        }
        return [{"from": total, "fromRanges": [span(11, 15, 28)]}]
    at = (params["textDocument"]["uri"], params["position"]["line"], params["position"]["character"])
    if method == "textDocument/references" and at == (views, 4, 8):  # Cache.get
        return [{"uri": views, "range": span(4, 8, 11)}, {"uri": views, "range": span(11, 10, 13)}]
    if method == "textDocument/definition" and at == (views, 9, 10):  # order.save()
        return [{"targetUri": models, "targetRange": span(6, 4, 8), "targetSelectionRange": span(6, 8, 12)}]
    if method == "textDocument/prepareCallHierarchy" and at == (models, 14, 4):  # compute_total
        return [{"name": "compute_total", "kind": 12, "uri": models, "range": span(14, 0, 16),
                 "selectionRange": span(14, 4, 17)}]  # fmt: skip
    return None


class EditorClient(LanguageClient):
    def report_server_error(self, error, source):
        if NO_PROVIDER in str(error):
            return  # the error answer the test chose to send is no fault of the test
        super().report_server_error(error, source)


NO_PROVIDER = "no provider for this"


def make_client() -> LanguageClient:
    client = EditorClient(converter_factory=plain_converter)
    register_lsp_features(client)
    client.mode = "true"  # how the editor answers: see `semantic` below
    client.root = None
    client.asked = []  # the requests it received
    client.cancelled = asyncio.Event()  # set when a hanging request is cancelled

    @client.feature("lspAgent/semantic")
    async def semantic(client: LanguageClient, params: dict):
        method, inner = params["method"], params["params"]
        client.asked.append((method, inner))
        result = true_answer(client.root, method, inner)
        if client.mode == "hang":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                client.cancelled.set()
                raise
        if client.mode == "error":
            raise JsonRpcInternalError(NO_PROVIDER)
        if client.mode == "garbage":
            return {"result": [{"uri": 42, "range": "everywhere"}], "source": EDITOR}
        if client.mode == "not an answer":
            return ["nonsense"]
        if client.mode == "outside" and result:
            result = [*result, {"uri": "file:///etc/passwd", "range": span(0, 0, 4)}]
        return {"result": result, "source": EDITOR if result else None}

    return client


CONFIG = ClientServerConfig(
    server_command=[sys.executable, "-m", "lsp_agent", "serve"], client_factory=make_client
)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def project(tmp_path) -> Path:
    import shutil

    root = tmp_path / "py"
    shutil.copytree(FIXTURE, root)
    return root


async def start(
    client: LanguageClient,
    root: Path,
    log: Path,
    *,
    advertise: bool = True,
    timeout: float = 1.0,
    headless: bool = True,
) -> None:
    """Initialize as an editor that answers lspAgent/semantic (or not), with a headless
    server for Python set up too (tests/semantic/fault_server.py, answering one location)."""
    client.root = root
    servers = {"python": {"name": "fault-ok", "command": [sys.executable, str(FAULT_SERVER), "ok", str(log)]}}
    if not headless:
        servers = {"python": False}
    experimental = {"lspAgent": {"semantic": True}} if advertise else None
    await client.initialize_session(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(experimental=experimental),
            client_info=types.ClientInfo(name="Test Editor"),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="py")],
            initialization_options={"semantic_servers": servers, "semantic_timeout": timeout},
        )
    )


def headless_started(log: Path) -> bool:
    return log.exists() and any(
        json.loads(line).get("method") == "initialize" for line in log.read_text().splitlines()
    )


def confirmed(answer: dict) -> list[tuple[str, int, int]]:
    return [(r["path"], r["line"], r["column"]) for r in answer["references"] if r["source"] != "name"]


async def test_the_editor_answers_references_by_type_and_no_server_starts(client, project, tmp_path):
    log = tmp_path / "headless.log"
    await start(client, project, log)
    answer = await request(client, "references", path="app/views.py", line=5, column=9)  # Cache.get
    [(method, params)] = client.asked
    # The plain LSP request, its position 0-based in UTF-16 units.
    assert method == "textDocument/references"
    assert params == {
        "textDocument": {"uri": (project / "app" / "views.py").as_uri()},
        "position": {"line": 4, "character": 8},
        "context": {"includeDeclaration": True},
    }
    assert answer["semantic"]["server"] == EDITOR, answer["text"]
    assert f"by type, from {EDITOR}" in answer["text"]
    assert confirmed(answer) == [("app/views.py", 5, 9), ("app/views.py", 12, 11)]
    assert not headless_started(log)  # the editor answered: no second server


async def test_definition_and_callers_come_from_the_editor(client, project, tmp_path):
    log = tmp_path / "headless.log"
    await start(client, project, log)
    answer = await request(client, "definition", path="app/views.py", line=10, column=11)  # order.save()
    assert answer["semantic"]["server"] == EDITOR, answer["text"]
    assert [(d["path"], d["name_path"]) for d in answer["definitions"]] == [("app/models.py", "Order/save")]
    callers = await request(client, "callers", path="app/models.py", line=15, column=5)  # compute_total
    assert f"by type, from {EDITOR}" in callers["text"], callers["text"]
    assert [m for m, _ in client.asked[1:]] == [
        "textDocument/prepareCallHierarchy",
        "callHierarchy/incomingCalls",
    ]
    # the item is handed back to the editor as it gave it
    assert client.asked[2][1]["item"]["name"] == "compute_total"
    assert "12 caller Order/total" in callers["text"]
    assert not headless_started(log)


async def test_a_location_outside_the_workspace_is_dropped_and_counted(client, project, tmp_path):
    await start(client, project, tmp_path / "headless.log")
    client.mode = "outside"
    answer = await request(client, "references", path="app/views.py", line=5, column=9)
    assert answer["semantic"]["server"] == EDITOR
    assert answer["semantic"]["outside_workspace"] == 1
    assert "/etc/passwd" not in json.dumps(answer)
    assert confirmed(answer) == [("app/views.py", 5, 9), ("app/views.py", 12, 11)]


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("garbage", f"{EDITOR} answered a location without a range"),
        ("not an answer", "Test Editor answered lspAgent/semantic with something that is not an answer"),
        ("hang", "the editor gave no answer to textDocument/references within 3 s"),  # 3x: the first
    ],
)
async def test_a_faulty_editor_gives_the_syntax_answer_and_says_why(client, project, tmp_path, mode, why):
    log = tmp_path / "headless.log"
    await start(client, project, log)
    client.mode = mode
    answer = await request(client, "references", path="app/views.py", line=5, column=9)
    assert "error" not in answer
    assert answer["semantic"]["unavailable"] == why
    assert f"note: no type-aware answer: {why}" in answer["text"]
    assert {r["source"] for r in answer["references"]} == {"name"}
    assert ("app/views.py", 12) in {(r["path"], r["line"]) for r in answer["references"]}
    assert not headless_started(log)  # a fault is not "no provider": the syntax source answers
    if mode == "hang":  # the request timed out at the server and was cancelled at the editor
        await asyncio.wait_for(client.cancelled.wait(), 10)


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("error", "Test Editor answered textDocument/references with an error ("),
        ("nothing", "Test Editor has no references provider for .py files"),
    ],
)
async def test_an_editor_with_nothing_falls_back_to_the_headless_server_and_says_so(
    client, project, tmp_path, mode, why
):
    log = tmp_path / "headless.log"
    await start(client, project, log)
    client.mode = mode
    # app/models.py:2 Base.save: a question the editor of the test has no answer for when "nothing"
    line = 5 if mode == "error" else 2
    answer = await request(client, "references", path="app/views.py" if mode == "error" else "app/models.py",
                           line=line, column=9)  # fmt: skip
    assert answer["semantic"]["server"] == "fault-ok", answer["text"]
    assert why in answer["text"] and "asked fault-ok instead" in answer["text"]
    assert headless_started(log)


async def test_an_editor_with_nothing_and_no_headless_server_says_it_was_asked(client, project, tmp_path):
    log = tmp_path / "headless.log"
    await start(client, project, log, headless=False)
    client.mode = "nothing"
    answer = await request(client, "references", path="app/models.py", line=2, column=9)
    assert "error" not in answer and {r["source"] for r in answer["references"]} == {"name"}
    why = "Test Editor has no references provider for .py files; semantic_servers.python is false"
    assert answer["semantic"]["unavailable"] == why
    assert f"note: no type-aware answer: {why}" in answer["text"]
    assert not headless_started(log)


async def test_cancelling_the_call_cancels_the_question_at_the_editor(client, project, tmp_path):
    await start(client, project, tmp_path / "headless.log", timeout=60.0)  # never reached here
    client.mode = "hang"
    pending = client.protocol.send_request(
        "lspAgent/references", {"path": "app/views.py", "line": 5, "column": 9}, msg_id="refs"
    )
    await asyncio.wait_for(_until(lambda: client.asked), 10)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="refs"))
    await asyncio.wait_for(client.cancelled.wait(), 10)  # not the timeout's: forwarded
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(asyncio.wrap_future(pending), 10)


async def test_a_client_that_does_not_say_so_is_never_asked(client, project, tmp_path):
    log = tmp_path / "headless.log"
    await start(client, project, log, advertise=False)
    answer = await request(client, "references", path="app/views.py", line=5, column=9)
    assert client.asked == []
    assert answer["semantic"]["server"] == "fault-ok"


async def _until(condition) -> None:
    while not condition():
        await asyncio.sleep(0.02)
