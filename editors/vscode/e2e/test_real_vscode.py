"""The VS Code extension in a real VS Code: code-server (VS Code 1.99.3 as a web server, from
npm), Chromium (Debian) driven by Playwright (PyPI), the packaged .vsix installed.

Run by `make test-vscode` (which `.ci/run` runs after `make test`): it installs what this needs
(editors/vscode/e2e/setup.sh, cached by version) and then runs this module. A person's view is
driven with the keyboard and read from the page; a small test extension (probe/) invokes the
Language Model Tools through `vscode.lm.invokeTool` as an agent in VS Code does. Screenshots of
each step go to tests/artifacts/vscode/.

Nothing here is skipped: when code-server, Chromium or Playwright is missing, the tests fail
and say what to install.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from lsprotocol import types

from lsp_agent.tools import catalog
from tests.support.lsp_client import stop

REPO = Path(__file__).resolve().parents[3]
EXTENSION = REPO / "editors" / "vscode"
CODE_SERVER_VERSION = "4.99.3"
CACHE = Path(os.environ.get("LSP_AGENT_CI_CACHE", Path.home() / ".cache" / "lsp-agent-ci"))
CODE_SERVER = CACHE / f"code-server-{CODE_SERVER_VERSION}" / "node_modules" / ".bin" / "code-server"
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
ARTIFACTS = REPO / "tests" / "artifacts" / "vscode"
SERVER = Path(sys.executable).with_name("lsp-agent")
MAX_CHARS = 600

APP = "class Greeter:\n    def hello(self):\n        return 'hello'\n\n\ndef main():\n    print(Greeter().hello())\n"
# A common method name on two classes (and Array's): VS Code's TypeScript features tell them apart.
SHAPES = """export class Grid {
  map(f: (n: number) => number): number[] {
    return [1, 2].map(f);
  }
}

export class Tree {
  map(f: (n: number) => number): number[] {
    return [3].map(f);
  }
}

export function use(grid: Grid, tree: Tree): number[] {
  const a = grid.map((n) => n * 2);
  const b = tree.map((n) => n + 1);
  return a.concat(b);
}
"""
MAIN_TS = 'import { Grid } from "./shapes";\n\nexport const doubled = new Grid().map((n) => n * 2);\n'
EDIT_ME = "def greet():\n    return 'good day'\n"

try:
    from playwright.sync_api import Page, sync_playwright
except ImportError:  # failed below, with what to do
    sync_playwright = None  # type: ignore[assignment]


def run(*command: str | Path, cwd: Path = REPO, env: dict | None = None, timeout: int = 600) -> str:
    result = subprocess.run(
        [str(c) for c in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,  # the assertion shows the output
    )
    assert result.returncode == 0, f"{' '.join(map(str, command))} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("work")
    (root / "app.py").write_text(APP)
    (root / "long.py").write_text("".join(f"value_{i} = {i}\n" for i in range(1, 81)))
    (root / "ts").mkdir()
    (root / "ts" / "shapes.ts").write_text(SHAPES)
    (root / "ts" / "main.ts").write_text(MAIN_TS)
    (root / "ts" / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}, "include": ["*.ts"]}\n')
    (root / "edit_me.py").write_text(EDIT_ME)
    # Files the cancelled call works through: over the symbol index's size limit (so nothing
    # parses them before), each taking the server a second or more to outline.
    (root / "big").mkdir()
    body = "".join(f"def f{i}():\n    return {i}\n\n" for i in range(80_000))
    for n in range(3):
        (root / "big" / f"m{n}.py").write_text(body)
    return root


@pytest.fixture(scope="module")
def second_folder(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("added")
    (root / "extra.py").write_text("def only_in_the_added_folder():\n    return 1\n")
    return root


@pytest.fixture(scope="module")
def vsix(tmp_path_factory) -> Path:
    """The extension packaged as a user packages it (`npm run package`)."""
    out = tmp_path_factory.mktemp("vsix") / "lsp-agent.vsix"
    run(
        "node",
        "scripts/package.mjs",
        "--out",
        out,
        cwd=EXTENSION,
        env=dict(os.environ, LSP_AGENT_PYTHON=sys.executable),
    )
    return out


@pytest.fixture(scope="module")
def probe_vsix(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("probe") / "lsp-agent-probe.vsix"
    vsce = EXTENSION / "node_modules" / ".bin" / "vsce"
    run(
        vsce,
        "package",
        "--no-dependencies",
        "--allow-missing-repository",
        "--skip-license",
        "--out",
        out,
        cwd=EXTENSION / "e2e" / "probe",
    )
    return out


@dataclass
class CodeServer:
    url: str
    probe_dir: Path  # the probe's instructions and result
    logs: Path  # VS Code's logs: the extension's output channel is written there


@pytest.fixture(scope="module")
def code_server(tmp_path_factory, workspace, vsix, probe_vsix) -> Iterator[CodeServer]:
    """code-server on the loopback with both extensions installed."""
    if not CODE_SERVER.exists():
        pytest.fail(
            f"code-server {CODE_SERVER_VERSION} is not installed in {CODE_SERVER}: run `make test-vscode`"
        )
    base = tmp_path_factory.mktemp("code-server")
    home, user_data, extensions, probe_dir = (base / d for d in ("home", "user-data", "extensions", "probe"))
    for d in (home / "bin", user_data / "User", extensions, probe_dir):
        d.mkdir(parents=True)
    # The server command is given from the home folder, as `~/…`: the extension expands it.
    (home / "bin" / "lsp-agent").symlink_to(SERVER)
    settings = {
        "lspAgent.server.command": "~/bin/lsp-agent",
        "lspAgent.maxChars": MAX_CHARS,
        "lspAgent.trace.server": "verbose",
        "lspAgentProbe.dir": str(probe_dir),
        "security.workspace.trust.enabled": False,
        "workbench.startupEditor": "none",
        "workbench.tips.enabled": False,
        "workbench.welcomePage.walkthroughs.openOnInstall": False,
        "extensions.ignoreRecommendations": True,
        "telemetry.telemetryLevel": "off",
        "editor.minimap.enabled": False,
        "outline.collapseItems": "alwaysExpand",
        "files.autoSave": "off",
    }
    (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=2))
    # A workspace file, as a person keeps a multi-root workspace: folders added to it later
    # reach the running extension (a window opened on a bare folder reloads instead).
    workspace_file = base / "lsp-agent.code-workspace"
    workspace_file.write_text(json.dumps({"folders": [{"path": str(workspace)}]}))
    env = dict(os.environ, HOME=str(home))
    common = ["--user-data-dir", user_data, "--extensions-dir", extensions]
    for package in (vsix, probe_vsix):
        run(CODE_SERVER, *common, "--install-extension", package, env=env, timeout=120)
    port = free_port()
    log = (ARTIFACTS / "code-server.log").open("w")
    process = subprocess.Popen(
        [
            *(CODE_SERVER, "--auth", "none", "--bind-addr", f"127.0.0.1:{port}", "--disable-telemetry"),
            *("--disable-update-check", "--disable-workspace-trust", *common, workspace_file),
            # Trace level for every log: the language client writes the LSP trace at that level only.
            *("--log", "trace"),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"code-server exited: see {log.name}"
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline, "code-server did not listen within 60 s"
                time.sleep(0.2)
        yield CodeServer(
            f"http://127.0.0.1:{port}/?workspace={workspace_file}", probe_dir, user_data / "logs"
        )
    finally:
        process.terminate()
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        # The extension's output channel (the LSP trace), kept beside the screenshots.
        for channel in output_logs(user_data / "logs"):
            shutil.copy(channel, ARTIFACTS / "lsp-agent-output.log")


def output_logs(logs: Path) -> list[Path]:
    """The files of the extension's output channel (where its LSP trace goes)."""
    return sorted(logs.glob("*/exthost*/lsp-agent.lsp-agent/*.log"))


@pytest.fixture(scope="module")
def page(code_server) -> Iterator[Page]:
    if sync_playwright is None:
        pytest.fail(
            "Playwright is not installed: pip install playwright (no `playwright install`: Chromium is Debian's)"
        )
    if not Path(CHROMIUM).exists():
        pytest.fail("Chromium is not installed: apt-get install chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.set_default_timeout(60_000)
        page.goto(code_server.url)
        page.wait_for_selector(".monaco-workbench")
        yield page
        browser.close()


@pytest.fixture(scope="module", autouse=True)
def artifacts() -> None:
    shutil.rmtree(ARTIFACTS, ignore_errors=True)
    ARTIFACTS.mkdir(parents=True)


def shot(page: Page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def quick_input(page: Page, key: str, query: str, pick: str) -> None:
    """Open a quick input with `key`, type `query`, and take the first row once it is `pick`."""
    page.keyboard.press(key)
    box = page.locator(".quick-input-widget .quick-input-box input")
    box.wait_for()
    box.fill(query)
    page.locator(".quick-input-list .monaco-list-row.focused", has_text=pick).wait_for()
    page.keyboard.press("Enter")


def palette(page: Page, title: str) -> None:
    """Run a command from the Command Palette by its title, as a person does."""
    quick_input(page, "F1", f">{title}", title)


def open_file(page: Page, name: str, line: int = 1, column: int = 1) -> None:
    """Open a file in the first editor group with Quick Open, the cursor at line:column.
    Keys sent next are safe only if the cursor was elsewhere before: if it was already at
    line:column every wait here passes at once, and Quick Open may place it later again."""
    page.keyboard.press("Control+1")
    quick_input(page, "Control+P", f"{name}:{line}:{column}", name)
    group = page.locator(".editor-group-container.active")
    group.locator(f'.tab.active[aria-label^="{name}"]').wait_for()
    group.locator(".monaco-editor.focused").wait_for()
    cursor_at(page, line, column)  # Quick Open may place the cursor after the editor has focus


def cursor_at(page: Page, line: int, column: int) -> None:
    """Wait until the status bar shows the cursor at line:column: keys sent before would go
    where it was (a line typed at the end went to the first line's start)."""
    page.locator('[id="status.editor.selection"]').filter(has_text=f"Ln {line}, Col {column}").wait_for()


def editor_text(page: Page) -> str:
    """The lines the active editor shows, in order (Monaco keeps its line elements unsorted)."""
    return page.evaluate(
        """() => {
        const editor = document.querySelector('.editor-group-container.active .monaco-editor .view-lines');
        if (!editor) return '';
        return [...editor.querySelectorAll('.view-line')]
            .sort((a, b) => parseFloat(a.style.top) - parseFloat(b.style.top))
            .map((line) => line.textContent.replace(/\\u00a0/g, ' ')).join('\\n');
    }"""
    )


def wait_for_text(page: Page, expected: str, seconds: float = 60) -> str:
    """The active editor's text once it contains `expected`, and the command's progress
    notification gone (the call is over)."""
    deadline = time.monotonic() + seconds
    while expected not in (text := editor_text(page)):
        assert time.monotonic() < deadline, f"{expected!r} never shown; the active editor shows:\n{text}"
        time.sleep(0.2)
    page.locator(".notification-toast", has_text="Source: lsp-agent").wait_for(state="hidden")
    return text


def test_outline_and_breadcrumbs_show_the_servers_symbols(page):
    shot(page, "01-started")
    open_file(page, "app.py", line=2, column=10)
    # The cursor on `hello`: the breadcrumbs name the class and the method.
    crumbs = page.locator(".editor-group-container.active .breadcrumbs-control")
    crumbs.locator(".monaco-breadcrumb-item", has_text="hello").wait_for()
    assert [t.strip() for t in crumbs.locator(".monaco-breadcrumb-item").all_inner_texts()][-2:] == [
        "Greeter",
        "hello",
    ]
    palette(page, "Explorer: Focus on Outline View")
    outline = page.locator(".outline-pane, .pane-body.outline-pane, [id='outline']").first
    outline.locator(".monaco-list-row", has_text="main").wait_for()
    rows = [
        t.strip() for t in page.locator(".monaco-list-row .outline-element .label-name").all_inner_texts()
    ]
    assert rows == ["Greeter", "hello", "main"]
    shot(page, "02-outline-and-breadcrumbs")


def test_symbols_command_shows_the_outline_answer(page):
    open_file(page, "app.py")
    palette(page, "lsp-agent: Symbols of Current File")
    text = wait_for_text(page, "app.py · 3 symbols")
    assert text.splitlines() == [
        "app.py · 3 symbols",
        "class Greeter  1-3",
        "  method hello  2-3",
        "function main  6-7",
    ]
    shot(page, "03-symbols")


def test_read_and_read_on_page_through_the_file_in_one_answer_window(page):
    open_file(page, "long.py", line=5)
    palette(page, "lsp-agent: Read Current File from Cursor Line")
    first = wait_for_text(page, "\n5:value_5 = 5\n")
    assert first.startswith("lines 5-")
    start = int(first.rsplit("start=", 1)[1].rstrip("]"))
    shot(page, "04-read")
    palette(page, "lsp-agent: Read On")
    second = wait_for_text(page, f"\n{start}:value_{start} = {start}\n")
    assert second.startswith(f"lines {start}-")
    shot(page, "05-read-on")
    # Every answer so far went to the one answer group beside the file.
    assert page.locator(".editor-group-container").count() == 2


def test_search_command_shows_matches_with_their_symbols(page):
    open_file(page, "app.py")
    palette(page, "lsp-agent: Search (selection or pattern)")
    page.locator(".quick-input-widget .quick-input-box input").fill("hel+o")
    page.keyboard.press("Enter")
    text = wait_for_text(page, "3 matches in 1 file")
    assert "3 Greeter/hello:        return 'hello'" in text and "7 main:    print(Greeter().hello())" in text
    shot(page, "06-search")


def test_an_unsaved_edit_is_seen_by_a_search(page, workspace):
    # Opened where the line goes, not at 1:1 then moved: the cursor was already at 1:1, so the
    # wait for it passed before Quick Open placed it, and that late placement undid a Control+End.
    open_file(page, "app.py", line=APP.count("\n") + 1)
    page.keyboard.type("unsaved_marker = 42")
    palette(page, "lsp-agent: Search (selection or pattern)")
    page.locator(".quick-input-widget .quick-input-box input").fill("unsaved_marker")
    page.keyboard.press("Enter")
    text = wait_for_text(page, "8:unsaved_marker = 42")
    assert "app.py (editor buffer, unsaved changes included)" in text and "8:unsaved_marker = 42" in text
    assert "unsaved_marker" not in (workspace / "app.py").read_text()
    shot(page, "07-unsaved-edit-searched")


def test_restart_starts_a_server_that_sees_the_same_buffers(page):
    palette(page, "lsp-agent: Restart Server")
    open_file(page, "app.py")
    palette(page, "lsp-agent: Search (selection or pattern)")
    # A pattern whose answer differs from the last one shown (the header does not echo it).
    page.locator(".quick-input-widget .quick-input-box input").fill("unsaved_marker = 4[0-9]|^def main")
    page.keyboard.press("Enter")
    text = wait_for_text(page, "2 matches in 1 file")
    assert "8:unsaved_marker = 42" in text and "6:def main():" in text
    shot(page, "08-after-restart")


async def reference_answers(root: Path, documents: list[dict], calls: list[dict]) -> list[str]:
    """What `lspAgent/<tool>` answers, from a server of our own over stdio, told the same
    settings and the same open documents as the one in VS Code."""
    from tests.support.lsp_client import SERVER, initialize_params, make_client

    client = make_client()
    await client.start_io(*SERVER, cwd=root)
    try:
        await client.initialize_session(initialize_params(root, {"max_chars": MAX_CHARS}))
        for doc in documents:
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    types.TextDocumentItem(
                        uri=Path(doc["path"]).as_uri(),
                        language_id=doc["languageId"],
                        version=1,
                        text=doc["text"],
                    )
                )
            )
        answers = [
            await client.protocol.send_request_async(f"lspAgent/{c['name']}", c["input"]) for c in calls
        ]
        await client.shutdown_session()
    finally:
        await stop(client)
    return [a["text"] for a in answers]


def test_language_model_tools_answer_as_the_server_does(page, code_server, workspace, second_folder):
    spec = {
        "edit": {"file": str(workspace / "app.py"), "line": 0, "text": "probe_marker = 'unsaved'\n"},
        "calls": [
            {
                "name": "search",
                "tool": "lspAgent_search",
                "input": {"pattern": "probe_marker|unsaved_marker"},
            },
            {"name": "read", "tool": "lspAgent_read", "input": {"path": "app.py", "start": 1}},
            {"name": "symbols", "tool": "lspAgent_symbols", "input": {"path": "app.py"}},
            {
                "name": "find_symbol",
                "tool": "lspAgent_find_symbol",
                "input": {"name_path": "Greeter/hello", "path": "app.py"},
            },
            {"name": "read", "tool": "lspAgent_read", "input": {"path": "long.py", "start": 500}},
        ],
        "cancel": {"tool": "lspAgent_symbols", "input": {"path": "big"}, "after_ms": 300},
        "exclude": "read",
        "exclude_input": {"path": "app.py"},
        "add_folder": {
            "path": str(second_folder),
            "call": {"tool": "lspAgent_search", "input": {"pattern": "only_in_the_added_folder"}},
        },
    }
    result = probe(page, code_server.probe_dir, spec)

    # One Language Model Tool per catalog tool, with the catalog's schema.
    tools = {t["name"]: t for t in catalog()}
    assert [t["name"] for t in result["tools"]] == [f"lspAgent_{name}" for name in tools]
    for tool in result["tools"]:
        served = tools[tool["name"].removeprefix("lspAgent_")]
        assert tool["inputSchema"] == served["inputSchema"]
        assert tool["description"].startswith(served["description"])
        read_only = served["annotations"]["readOnlyHint"]
        assert ("Read-only: it changes no file" in tool["description"]) == read_only, tool["name"]
        assert ("read-only" in tool["tags"]) == read_only, tool["name"]

    # Each invocation's text is the server's answer to lspAgent/<tool>, unsaved edits included.
    for call in result["calls"]:
        assert "error" not in call, call
    app = next(d for d in result["documents"] if Path(d["path"]).name == "app.py")
    assert app["text"].startswith("probe_marker = 'unsaved'\n") and "unsaved_marker = 42" in app["text"]
    assert (workspace / "app.py").read_text() == APP  # the edits are in the buffer only
    # In a thread of its own: Playwright's event loop runs in this one.
    with ThreadPoolExecutor(1) as pool:
        expected = pool.submit(
            asyncio.run, reference_answers(workspace, result["documents"], spec["calls"])
        ).result()
    assert [c["text"] for c in result["calls"]] == expected
    assert "app.py (editor buffer, unsaved changes included)" in result["calls"][0]["text"]
    assert "has 80 lines" in result["calls"][4]["text"]  # a refusal is an answer, not an error

    # Cancelled by its token: the invocation ends in a CancellationError ("Canceled"); the
    # token became $/cancelRequest, and the server answered that the request was cancelled
    # (a tool that had finished would have answered its result).
    assert result["cancel"]["error"]["name"] == "Canceled", result["cancel"]
    trace = "".join(log.read_text() for log in output_logs(code_server.logs))
    sent = re.findall(
        r"Sending request 'lspAgent/symbols - \((\d+)\)'.\nParams: \{\n +\"path\": \"big\"", trace
    )
    assert len(sent) == 1, trace[-3000:]
    assert re.search(
        rf"Sending notification '\$/cancelRequest'.\nParams: \{{\n +\"id\": {sent[0]}\n", trace
    ), trace[-3000:]
    assert re.search(
        rf"Received response 'lspAgent/symbols - \({sent[0]}\)'.*is canceled \(-32800\)", trace
    ), trace[-3000:]

    # Turned off in the settings: gone from vscode.lm.tools, and a call by name is refused.
    assert result["excluded"]["tools"] == [f"lspAgent_{name}" for name in tools if name != "read"]
    assert "turned off in the settings" in result["excluded"]["call"]["error"]["message"]

    # A folder added after activation is searched too.
    assert "extra.py" in result["added_folder"]["text"], result["added_folder"]


def probe(page: Page, probe_dir: Path, spec: dict) -> dict:
    """Have the probe extension run `spec` (see probe/extension.js); what it wrote back."""
    (probe_dir / "result.json").unlink(missing_ok=True)
    (probe_dir / "probe.json").write_text(json.dumps(spec))
    palette(page, "lsp-agent probe: Invoke Language Model Tools")
    deadline = time.monotonic() + 180
    while not (probe_dir / "result.json").exists():
        assert time.monotonic() < deadline, "the probe wrote no result within 180 s"
        time.sleep(0.25)
    shot(page, "09-language-model-tools")
    result = json.loads((probe_dir / "result.json").read_text())
    assert "fatal" not in result, result["fatal"]
    return result


def run_steps(page: Page, probe_dir: Path, steps: list[dict]) -> list[dict]:
    """Have the probe extension take `steps` (see probe/extension.js); each step's outcome."""
    (probe_dir / "result.json").unlink(missing_ok=True)
    (probe_dir / "steps.json").write_text(json.dumps(steps))
    palette(page, "lsp-agent probe: Run Steps")
    deadline = time.monotonic() + 240
    while not (probe_dir / "result.json").exists():
        assert time.monotonic() < deadline, "the probe wrote no result within 240 s"
        time.sleep(0.25)
    result = json.loads((probe_dir / "result.json").read_text())
    assert "fatal" not in result, result["fatal"]
    return result["steps"]


def sections(text: str, root: Path) -> dict[str, list[str]]:
    """An answer's sections ("── title") and their lines, paths shown from `root` (with a
    second folder in the workspace, paths are shown from the roots' parent)."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("── "):
            current = found.setdefault(line[3:], [])
        elif current is not None:
            current.append(line.removeprefix(f"{root.name}/"))
    return found


def test_navigation_is_answered_by_vscodes_own_providers(page, code_server, workspace):
    shapes = str(workspace / "ts" / "shapes.ts")
    references = {"path": "ts/shapes.ts", "line": 2, "column": 3, "max_chars": 4000}  # Grid.map
    definition = {"path": "ts/shapes.ts", "line": 14, "column": 18, "max_chars": 4000}  # grid.map(...)
    out = run_steps(
        page,
        code_server.probe_dir,
        [
            {"show": shapes},
            # VS Code's own answer, once the TypeScript features have loaded the whole project
            {"references": {"file": shapes, "line": 1, "character": 2, "min": 3}},
            {"invoke": {"tool": "lspAgent_references", "input": references}},
            {"invoke": {"tool": "lspAgent_definition", "input": definition}},
        ],
    )
    shot(page, "10-navigation-from-vscode")
    # The providers' own answer: Grid.map's definition and its two uses, in both files.
    assert out[1]["locations"] == [
        ["ts/main.ts", 2, 34],
        ["ts/shapes.ts", 1, 2],
        ["ts/shapes.ts", 13, 17],
    ], out[1]
    refs, found = out[2], out[3]
    assert "error" not in refs and "error" not in found, (refs, found)
    parts = sections(refs["text"], workspace)
    # Only Grid's map is confirmed: not Tree's, not Array's (`[1, 2].map(f)`).
    assert parts["by type, from VS Code's providers: definitions"] == [
        "ts/shapes.ts",
        "2 definition Grid/map: map(f: (n: number) => number): number[] {",
    ], refs["text"]
    assert parts["by type, from VS Code's providers: code"] == [
        "ts/main.ts",
        "3 call <module>: export const doubled = new Grid().map((n) => n * 2);",
        "ts/shapes.ts",
        "14 call use: const a = grid.map((n) => n * 2);",
    ], refs["text"]
    unconfirmed = "\n".join(parts.get("by name, not confirmed: code", []))
    assert "tree.map" in unconfirmed or "tree.map" not in refs["text"]
    assert "by type, from VS Code's providers" in found["text"].splitlines()[0], found["text"]
    assert "method Grid/map · lines 2-4" in found["text"], found["text"]


def test_an_edit_lands_in_the_unsaved_buffer_and_undo_restores_it(page, code_server, workspace):
    target = workspace / "edit_me.py"
    edit = {"path": "edit_me.py", "old_text": "return 'good day'", "new_text": "return 'good night'"}
    out = run_steps(
        page,
        code_server.probe_dir,
        [
            {"show": str(target)},
            {"invoke": {"tool": "lspAgent_edit", "input": edit}},
            {"state": str(target)},
            {"command": "undo"},
            {"state": str(target)},
        ],
    )
    shot(page, "11-edit-undone")
    assert "error" not in out[1] and "applied by the editor" in out[1]["text"], out[1]
    assert out[2] == {"open": True, "dirty": True, "text": EDIT_ME.replace("'good day'", "'good night'")}
    assert target.read_text() == EDIT_ME  # the disk is the person's to save
    assert out[4] == {"open": True, "dirty": False, "text": EDIT_ME}


def test_rename_preview_then_apply_through_vscode(page, code_server, workspace):
    """A rename across two files, asked of VS Code's providers (textDocument/rename through
    lspAgent/semantic), previewed, then applied through the editor as one multi-file
    WorkspaceEdit: both buffers changed and unsaved, the disk unchanged."""
    if "rename" not in {t["name"] for t in catalog()}:
        pytest.skip("the rename tool is not in this build (it comes with the edits branch): runs once merged")
    rename = {"path": "ts/shapes.ts", "symbol": "Grid/map", "new_name": "mapGrid"}
    shapes, main = workspace / "ts" / "shapes.ts", workspace / "ts" / "main.ts"
    steps = [
        {"show": str(shapes)},
        {"references": {"file": str(shapes), "line": 1, "character": 2, "min": 3}},
        {"invoke": {"tool": "lspAgent_rename", "input": rename}},
    ]
    preview = run_steps(page, code_server.probe_dir, steps)[2]
    assert "error" not in preview and "ts/main.ts" in preview["text"], preview
    assert "VS Code's providers" in preview["text"].splitlines()[0], preview["text"]
    assert shapes.read_text() == SHAPES and main.read_text() == MAIN_TS  # a preview changes nothing
    version = re.search(r"version ([0-9a-f]+)", preview["text"]).group(1)  # type: ignore[union-attr]
    apply = {**rename, "apply": True, "if_version": version}
    out = run_steps(
        page,
        code_server.probe_dir,
        [
            {"invoke": {"tool": "lspAgent_rename", "input": apply}},
            {"state": str(shapes)},
            {"state": str(main)},
        ],
    )
    applied = out[0]
    shot(page, "12-renamed-through-vscode")
    assert "error" not in applied, applied
    assert out[1]["dirty"] and out[1]["text"] == SHAPES.replace("  map(f", "  mapGrid(f", 1).replace(
        "grid.map(", "grid.mapGrid("
    )
    assert out[2]["dirty"] and out[2]["text"] == MAIN_TS.replace(".map(", ".mapGrid(")
    assert shapes.read_text() == SHAPES and main.read_text() == MAIN_TS
