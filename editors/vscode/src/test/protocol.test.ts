// The extension's protocol side against the real server: start `lsp-agent serve` over stdio,
// initialize as vscode-languageclient does (with the extension's initializationOptions), sync
// documents, and send the very calls the extension's commands build (src/protocol.ts).
//
// VS Code itself cannot run here; this covers everything the extension says to the server.
// The server is started as the extension starts it with its default settings (command
// `lsp-agent`, args ["serve"], read from package.json), found next to $LSP_AGENT_PYTHON (set
// by tests/editors/test_vscode.py; else the repository's .venv/bin/python) or on PATH.

import { ChildProcess, execFileSync, spawn } from "node:child_process";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  CancellationTokenSource,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  DocumentSymbol,
  DocumentSymbolRequest,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  ProtocolConnection,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  SymbolKind,
  createProtocolConnection,
} from "vscode-languageserver-protocol/node";
import {
  Answer,
  COMMANDS,
  CatalogTool,
  OPTION_SETTINGS,
  ToolCall,
  answerTitle,
  catalogToolName,
  enabledTools,
  expandHome,
  findExecutable,
  languageModelTool,
  initializationOptions,
  missingCommandMessage,
  nextPage,
  readCall,
  requestMethod,
  searchCall,
  symbolsCall,
} from "../protocol";

const REPO = path.resolve(__dirname, "../../../..");
const PYTHON = process.env.LSP_AGENT_PYTHON ?? path.join(REPO, ".venv", "bin", "python");
const MAX_CHARS = 600;

interface Manifest {
  main: string;
  contributes: {
    commands: { command: string }[];
    configuration: { properties: Record<string, { default?: unknown }> };
  };
}
const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, "../../package.json"), "utf8")) as Manifest;

/** A running server and a connection to it, as the extension's LanguageClient holds. */
class Server {
  readonly process: ChildProcess;
  readonly connection: ProtocolConnection;
  readonly messages: string[] = [];

  constructor(cwd: string) {
    const settings = manifest.contributes.configuration.properties;
    const command = settings["lspAgent.server.command"].default as string;
    const args = settings["lspAgent.server.args"].default as string[];
    const PATH = [path.dirname(PYTHON), process.env.PATH].join(path.delimiter);
    const executable = findExecutable(command, { PATH });
    assert.ok(executable, missingCommandMessage(command) + ` (looked next to ${PYTHON}: run \`make venv\`)`);
    this.process = spawn(executable, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
    this.connection = createProtocolConnection(
      new StreamMessageReader(this.process.stdout!),
      new StreamMessageWriter(this.process.stdin!),
    );
    this.connection.onNotification("window/showMessage", (params: { message: string }) => {
      this.messages.push(params.message);
    });
    this.connection.listen();
  }

  call(call: ToolCall, cancel?: CancellationTokenSource): Promise<Answer> {
    // Passed only when there is one: an `undefined` argument would send params as an array.
    const method = requestMethod(call.tool);
    return cancel
      ? this.connection.sendRequest<Answer>(method, call.arguments, cancel.token)
      : this.connection.sendRequest<Answer>(method, call.arguments);
  }

  async stop(): Promise<void> {
    await this.connection.sendRequest(ShutdownRequest.type);
    await this.connection.sendNotification(ExitNotification.type);
    await new Promise((resolve) => this.process.once("exit", resolve));
    this.connection.dispose();
  }
}

describe("lsp-agent server, spoken to as the VS Code extension does", () => {
  let root: string;
  let server: Server;
  let long: string; // a file longer than one page at MAX_CHARS
  let app: string; // a small module with a class and a function
  let capabilities: Record<string, unknown>;

  before(async () => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "lsp-agent-vscode-")));
    long = path.join(root, "long.py");
    fs.writeFileSync(long, Array.from({ length: 80 }, (_, i) => `value_${i + 1} = ${i + 1}\n`).join(""));
    app = path.join(root, "app.py");
    fs.writeFileSync(app, "class Greeter:\n    def hello(self):\n        return 'hello'\n\n\ndef main():\n    print(Greeter().hello())\n");
    server = new Server(root);
    const result = await server.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: pathToFileURL(root).href,
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: "fixture" }],
      // As VS Code declares: the outline wants hierarchical document symbols.
      capabilities: {
        window: { workDoneProgress: false },
        textDocument: { documentSymbol: { hierarchicalDocumentSymbolSupport: true } },
      },
      initializationOptions: initializationOptions((setting) => ({ maxChars: MAX_CHARS, searchEngine: null })[setting]),
    });
    capabilities = result.capabilities as Record<string, unknown>;
    await server.connection.sendNotification(InitializedNotification.type, {});
  });

  after(async () => {
    await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
  });

  it("accepts the extension's initializationOptions without complaint", async () => {
    const settings: Record<string, unknown> = { maxChars: MAX_CHARS, searchEngine: null };
    assert.deepEqual(initializationOptions((setting) => settings[setting]), { max_chars: MAX_CHARS });
    assert.deepEqual(initializationOptions(() => undefined), {});
    // Any problem with the options would come as window/showMessage after `initialized`.
    await server.call(readCall(long, 1));
    assert.deepEqual(server.messages, []);
    assert.ok(capabilities.textDocumentSync, "the server syncs documents");
  });

  it("reads the current file from the cursor line, within the configured budget", async () => {
    const answer = await server.call(readCall(long, 5));
    const lines = answer.text.split("\n");
    assert.match(lines[0], /^lines 5-\d+ of 80 · version [0-9a-f]{8}$/);
    assert.equal(lines[1], "5:value_5 = 5");
    assert.ok(answer.text.length <= MAX_CHARS, `answer of ${answer.text.length} chars over ${MAX_CHARS}`);
    const next = answer.next as { start: number };
    assert.match(lines[lines.length - 1], new RegExp(`read on with start=${next.start}\\]$`));
    // "Read On" from the answer's document: the pages join up to the end of the file.
    let shown = lines.slice(1, -1);
    let call = nextPage(readCall(long, 5), answer);
    let page: Answer = answer;
    while (call) {
      page = await server.call(call);
      const body = page.text.split("\n").slice(1);
      shown = shown.concat(page.next ? body.slice(0, -1) : body);
      call = nextPage(call, page);
    }
    assert.deepEqual(shown.map((l) => l.trim()), Array.from({ length: 76 }, (_, i) => `${i + 5}:value_${i + 5} = ${i + 5}`));
  });

  it("reads the editor's unsaved buffer after didOpen and incremental didChange", async () => {
    const uri = pathToFileURL(long).href;
    const disk = fs.readFileSync(long, "utf8");
    await server.connection.sendNotification(DidOpenTextDocumentNotification.type, {
      textDocument: { uri, languageId: "python", version: 1, text: disk },
    });
    await server.connection.sendNotification(DidChangeTextDocumentNotification.type, {
      textDocument: { uri, version: 2 },
      contentChanges: [{ range: { start: { line: 1, character: 0 }, end: { line: 1, character: 7 } }, text: "edited" }],
    });
    const answer = await server.call(readCall(long, 1));
    assert.match(answer.text, /note: open in the editor/);
    assert.match(answer.text, /\n2:edited = 2\n/);
    const found = await server.call(searchCall("^edited"));
    assert.match(found.text, /^long\.py \(editor buffer, unsaved changes included\)\n2:edited = 2$/m);
    assert.equal(fs.readFileSync(long, "utf8"), disk, "the file on disk is untouched");
  });

  it("searches for a pattern, and for a selection literally", async () => {
    const answer = await server.call(searchCall("hel+o"));
    assert.equal(
      answer.text,
      [
        "3 matches in 1 file",
        "app.py",
        "2 Greeter:    def hello(self):",
        "3 Greeter/hello:        return 'hello'",
        "7 main:    print(Greeter().hello())",
      ].join("\n"),
    );
    const selection = await server.call(searchCall("hello()", true));
    assert.match(selection.text, /^1 match in 1 file\n/);
    assert.deepEqual(selection.locations, [{ path: "app.py", line: 7, column: 21, end_column: 28, text: "    print(Greeter().hello())" }]);
  });

  it("outlines the current file", async () => {
    const answer = await server.call(symbolsCall(app));
    assert.equal(
      answer.text,
      ["app.py · 3 symbols", "class Greeter  1-3", "  method hello  2-3", "function main  6-7"].join("\n"),
    );
  });

  it("gives the outline view hierarchical document symbols", async () => {
    assert.ok(capabilities.documentSymbolProvider, "the server offers documentSymbol");
    const symbols = (await server.connection.sendRequest(DocumentSymbolRequest.type, {
      textDocument: { uri: pathToFileURL(app).href },
    })) as DocumentSymbol[];
    const outline = (list: DocumentSymbol[]): unknown[] =>
      list.map((s) => [s.name, s.kind, s.range.start.line, s.range.end.line, outline(s.children ?? [])]);
    assert.deepEqual(outline(symbols), [
      ["Greeter", SymbolKind.Class, 0, 2, [["hello", SymbolKind.Method, 1, 2, []]]],
      ["main", SymbolKind.Function, 5, 6, []],
    ]);
  });

  it("answers a refusal (not an error) for a line past the end", async () => {
    const answer = await server.call(readCall(long, 500));
    assert.equal(answer.error?.code, "out_of_range");
    assert.match(answer.text, /has 80 lines/);
  });

  it("rejects malformed arguments as InvalidParams", async () => {
    await assert.rejects(server.call({ tool: "read", arguments: { path: long, start: "one" } }), { code: -32602 });
  });
});

describe("the extension manifest", () => {
  it("contributes exactly the commands the extension registers", () => {
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    assert.deepEqual(contributed, Object.values(COMMANDS).sort());
  });

  it("runs from the bundle the package script writes", () => {
    assert.equal(manifest.main, "./dist/extension.js");
    assert.match(fs.readFileSync(path.join(__dirname, "../../scripts/package.mjs"), "utf8"), /outfile: path\.join\(HERE, "dist", "extension\.js"\)/);
  });

  it("has a setting for every option of the server", () => {
    // The server's own list of options: the fields of lsp_agent.config.Settings.
    const fields = execFileSync(PYTHON, [
      "-c",
      "import dataclasses, json; from lsp_agent.config import Settings; print(json.dumps([f.name for f in dataclasses.fields(Settings)]))",
    ], { encoding: "utf8", cwd: REPO });
    assert.deepEqual(Object.keys(OPTION_SETTINGS).sort(), (JSON.parse(fields) as string[]).sort());
    const properties = Object.keys(manifest.contributes.configuration.properties);
    for (const setting of Object.values(OPTION_SETTINGS)) {
      assert.ok(properties.includes(`lspAgent.${setting}`), `package.json has no setting lspAgent.${setting}`);
    }
  });
});

describe("the Language Model Tools", () => {
  // The server's own catalog, as the package script reads it.
  const catalog = JSON.parse(execFileSync(PYTHON, ["-m", "lsp_agent", "tools"], { encoding: "utf8", cwd: REPO })) as CatalogTool[];

  it("are the catalog's tools, described and shaped as the server states them, read-only where they only read", () => {
    for (const tool of catalog) {
      const contribution = languageModelTool(tool);
      assert.equal(contribution.name, `lspAgent_${tool.name}`);
      assert.match(contribution.name, /^[\w-]+$/, "VS Code's (and model APIs') rule for tool names");
      assert.equal(catalogToolName(contribution.name), tool.name);
      assert.deepEqual(contribution.inputSchema, tool.inputSchema);
      assert.ok(contribution.modelDescription.startsWith(tool.description));
      // The catalog's annotation decides: only a tool that changes no file is labelled read-only.
      if (tool.annotations?.readOnlyHint === true) {
        assert.match(contribution.modelDescription, /Read-only: it changes no file/);
        assert.match(contribution.userDescription, /\(read-only\)$/);
        assert.deepEqual(contribution.tags, ["lsp-agent", "read-only"]);
      } else {
        assert.equal(tool.annotations?.readOnlyHint, false, `${tool.name} has no readOnlyHint annotation`);
        assert.doesNotMatch(contribution.modelDescription, /Read-only: it changes no file/);
        assert.match(contribution.modelDescription, /It changes files in the workspace/);
        assert.doesNotMatch(contribution.userDescription, /\(read-only\)$/);
        assert.deepEqual(contribution.tags, ["lsp-agent", "edits"]);
      }
      assert.equal(contribution.when, `lspAgent.languageModelTool.${tool.name}`);
    }
    // Both kinds are in the catalog, so both branches above ran.
    const readOnly = catalog.filter((tool) => tool.annotations?.readOnlyHint === true).map((tool) => tool.name);
    assert.ok(readOnly.includes("read") && !readOnly.includes("edit"), `read-only tools: ${readOnly.join(", ")}`);
    assert.equal(catalogToolName("copilot_searchCodebase"), undefined);
  });

  it("are turned off all at once or one by one in the settings", () => {
    const names = catalog.map((tool) => tool.name);
    assert.deepEqual([...enabledTools(names, true, [])], names);
    assert.deepEqual([...enabledTools(names, true, ["read"])], names.filter((name) => name !== "read"));
    assert.deepEqual([...enabledTools(names, false, [])], []);
  });

  it("say in a few words what each invocation does", () => {
    assert.equal(answerTitle({ tool: "search", arguments: { pattern: "hel+o" } }), "search hel+o");
    assert.equal(answerTitle({ tool: "symbols", arguments: {} }), "symbols .");
    assert.equal(answerTitle({ tool: "find_symbol", arguments: { name_path: "A/b", depth: 1 } }), 'find_symbol name_path="A/b" depth=1');
  });
});

describe("finding the server command", () => {
  it("takes ~ as the home folder", () => {
    assert.equal(expandHome("~/bin/lsp-agent", "/home/me"), "/home/me/bin/lsp-agent");
    assert.equal(expandHome("~", "/home/me"), "/home/me");
    assert.equal(expandHome("~other/lsp-agent", "/home/me"), "~other/lsp-agent");
    assert.equal(expandHome("lsp-agent", "/home/me"), "lsp-agent");
  });

  it("finds an executable on PATH and by relative path, and explains a missing one", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lsp-agent-path-"));
    const exe = path.join(dir, "lsp-agent");
    fs.writeFileSync(exe, "#!/bin/sh\n", { mode: 0o755 });
    fs.writeFileSync(path.join(dir, "not-executable"), "", { mode: 0o644 });
    try {
      assert.equal(findExecutable("lsp-agent", { PATH: `/nonexistent${path.delimiter}${dir}` }, "linux"), exe);
      assert.equal(findExecutable("./lsp-agent", {}, "linux", dir), exe);
      assert.equal(findExecutable("not-executable", { PATH: dir }, "linux"), undefined);
      assert.equal(findExecutable("lsp-agent", { PATH: "/nonexistent" }, "linux"), undefined);
      assert.match(missingCommandMessage("lsp-agent"), /"lsp-agent" was not found on PATH\..*lspAgent\.server\.command/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
