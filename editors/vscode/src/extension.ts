// The VS Code side of lsp-agent: start the server over stdio, run its agent tools from the
// Command Palette (showing each answer exactly as an agent gets it), and offer them to agents
// in VS Code as Language Model Tools.

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions } from "vscode-languageclient/node";
import {
  Answer,
  COMMANDS,
  ToolCall,
  answerTitle,
  catalogToolName,
  enabledTools,
  expandHome,
  findExecutable,
  LanguageModelToolContribution,
  nextPage,
  initializationOptions,
  missingCommandMessage,
  readCall,
  requestMethod,
  searchCall,
  symbolsCall,
  toolContextKey,
} from "./protocol";
import * as semantic from "./semantic";

const SCHEME = "lsp-agent";

let client: LanguageClient | undefined;
// One channel for the extension's life, shared by every client a restart creates (a client
// that names its own channel leaves it behind when it cannot be stopped cleanly).
let output: vscode.LogOutputChannel;
// Why there is no client, told to the user when a command needs one.
let notRunning = "lsp-agent is starting.";

/** Answers shown as read-only virtual documents `lsp-agent:/<n>/<title>`, each kept with
 * the call that produced it. */
class AnswerDocuments implements vscode.TextDocumentContentProvider {
  private readonly answers = new Map<string, { call: ToolCall; answer: Answer }>();
  private count = 0;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.answers.get(uri.toString())?.answer.text ?? "This answer is no longer kept: run the command again.";
  }

  get(uri: vscode.Uri): { call: ToolCall; answer: Answer } | undefined {
    return this.answers.get(uri.toString());
  }

  forget(uri: vscode.Uri): void {
    this.answers.delete(uri.toString());
  }

  async show(call: ToolCall, answer: Answer): Promise<void> {
    this.count += 1;
    const title = answerTitle(call).replace(/[/\\]/g, "∕");
    const uri = vscode.Uri.from({ scheme: SCHEME, path: `/${this.count}/${title}` });
    this.answers.set(uri.toString(), { call, answer });
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { preview: true, viewColumn: answerColumn() });
  }
}

/** Where to show an answer: the editor group that already shows one (so answers take turns
 * in one window instead of opening a split each), else beside the active editor. */
function answerColumn(): vscode.ViewColumn {
  const shows = (tab: vscode.Tab): boolean => tab.input instanceof vscode.TabInputText && tab.input.uri.scheme === SCHEME;
  const group = vscode.window.tabGroups.all.find((g) => g.tabs.some(shows));
  return group?.viewColumn ?? vscode.ViewColumn.Beside;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const answers = new AnswerDocuments();
  output = vscode.window.createOutputChannel("lsp-agent", { log: true });
  context.subscriptions.push(
    output,
    vscode.workspace.registerTextDocumentContentProvider(SCHEME, answers),
    vscode.workspace.onDidCloseTextDocument((document) => {
      if (document.uri.scheme === SCHEME) {
        answers.forget(document.uri);
      }
    }),
    vscode.commands.registerCommand(COMMANDS.search, () => run(answers, askSearch)),
    vscode.commands.registerCommand(COMMANDS.read, () =>
      run(answers, () => {
        const editor = activeFile();
        return editor && readCall(editor.document.uri.fsPath, editor.selection.active.line + 1);
      }),
    ),
    vscode.commands.registerCommand(COMMANDS.symbols, () =>
      run(answers, () => {
        const editor = activeFile();
        return editor && symbolsCall(editor.document.uri.fsPath);
      }),
    ),
    vscode.commands.registerCommand(COMMANDS.readOn, () =>
      run(answers, () => {
        const uri = vscode.window.activeTextEditor?.document.uri;
        const shown = uri && answers.get(uri);
        const call = shown && nextPage(shown.call, shown.answer);
        if (!call) {
          void vscode.window.showInformationMessage("lsp-agent: this is not a read answer with more to read.");
        }
        return call;
      }),
    ),
    vscode.commands.registerCommand(COMMANDS.restart, restart),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (event.affectsConfiguration("lspAgent.languageModelTools")) {
        await offerTools(tools);
      } else if (event.affectsConfiguration("lspAgent") && !event.affectsConfiguration("lspAgent.trace")) {
        await restart();
      }
    }),
    // A window opened with no folder gets its server when the first folder is added; the
    // running server hears of later folders from the language client (didChangeWorkspaceFolders).
    vscode.workspace.onDidChangeWorkspaceFolders(async () => {
      if (!client && vscode.workspace.workspaceFolders?.length) {
        await start();
      }
    }),
  );
  const tools = registerLanguageModelTools(context);
  await offerTools(tools);
  await start();
}

/** Register a Language Model Tool for each tool contributed in package.json (written there
 * from the server's catalog when the extension is packaged); returns their catalog names. */
function registerLanguageModelTools(context: vscode.ExtensionContext): string[] {
  const manifest = context.extension.packageJSON as { contributes?: { languageModelTools?: LanguageModelToolContribution[] } };
  const names: string[] = [];
  for (const contribution of manifest.contributes?.languageModelTools ?? []) {
    const tool = catalogToolName(contribution.name);
    if (tool) {
      names.push(tool);
      const readOnly = contribution.tags.includes("read-only");
      context.subscriptions.push(vscode.lm.registerTool(contribution.name, new AgentTool(tool, readOnly)));
    }
  }
  return names;
}

/** Offer the tools the settings leave on: the context keys of their `when` clauses. */
async function offerTools(tools: string[]): Promise<void> {
  const offered = offeredTools(tools);
  await Promise.all(tools.map((tool) => vscode.commands.executeCommand("setContext", toolContextKey(tool), offered.has(tool))));
}

function offeredTools(tools: string[]): Set<string> {
  const config = vscode.workspace.getConfiguration("lspAgent.languageModelTools");
  return enabledTools(tools, config.get<boolean>("enabled", true), config.get<string[]>("exclude", []));
}

/** One agent tool as a Language Model Tool: each invocation is the request `lspAgent/<tool>`
 * to the running server (which sees the unsaved buffers), and its result is the answer's text,
 * exactly what the model would read over MCP or the CLI. */
class AgentTool implements vscode.LanguageModelTool<Record<string, unknown>> {
  constructor(
    private readonly tool: string,
    private readonly readOnly: boolean,
  ) {}

  prepareInvocation(
    options: vscode.LanguageModelToolInvocationPrepareOptions<Record<string, unknown>>,
  ): vscode.PreparedToolInvocation {
    const title = `lsp-agent ${answerTitle({ tool: this.tool, arguments: options.input })}`;
    return { invocationMessage: this.readOnly ? `${title} (read-only)` : title };
  }

  async invoke(
    options: vscode.LanguageModelToolInvocationOptions<Record<string, unknown>>,
    token: vscode.CancellationToken,
  ): Promise<vscode.LanguageModelToolResult> {
    if (!offeredTools([this.tool]).has(this.tool)) {
      throw new Error(`lsp-agent: the tool ${this.tool} is turned off in the settings (lspAgent.languageModelTools).`);
    }
    const running = client;
    if (!running) {
      throw new Error(notRunning);
    }
    try {
      // The token cancels the request: the client sends $/cancelRequest and the server stops the tool.
      const answer = await running.sendRequest<Answer>(requestMethod(this.tool), options.input, token);
      return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(answer.text)]);
    } catch (error) {
      if (token.isCancellationRequested) {
        throw new vscode.CancellationError();
      }
      throw error;
    }
  }
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) {
    notRunning = "lsp-agent works on a workspace: open a folder first.";
    return;
  }
  const config = vscode.workspace.getConfiguration("lspAgent");
  const command = expandHome(config.get<string>("server.command", "lsp-agent"));
  const args = config.get<string[]>("server.args", ["serve"]);
  const executable = findExecutable(command, process.env, process.platform, folder.uri.fsPath);
  if (!executable) {
    notRunning = missingCommandMessage(command);
    // Not awaited: activation must not wait for the user to dismiss the message.
    void vscode.window.showErrorMessage(notRunning, "Open Settings").then((choice) =>
      choice ? vscode.commands.executeCommand("workbench.action.openSettings", "lspAgent.server") : undefined,
    );
    return;
  }
  // No `transport`: the client would append --stdio; stdio is the server's default anyway.
  const serverOptions: ServerOptions = { command: executable, args, options: { cwd: folder.uri.fsPath } };
  const clientOptions: LanguageClientOptions = {
    // Every file: the server keeps open buffers as an overlay, so tools see unsaved text;
    // document symbols come for languages it has grammars for.
    documentSelector: [{ scheme: "file" }],
    initializationOptions: initializationOptions((setting) => config.get(setting)),
    outputChannel: output,
  };
  client = new LanguageClient("lspAgent", "lsp-agent", serverOptions, clientOptions);
  // The server's navigation asks VS Code's own providers first (semantic.ts).
  client.registerFeature(semantic.capability);
  client.onRequest(semantic.METHOD, semantic.answer);
  try {
    await client.start();
  } catch (error) {
    notRunning = `lsp-agent: the server "${executable} ${args.join(" ")}" failed to start: ${String(error)}`;
    client = undefined;
    void vscode.window.showErrorMessage(notRunning);
  }
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  notRunning = "lsp-agent is restarting.";
  if (running) {
    try {
      await running.stop();
    } catch (error) {
      // A server that crashed for good, is still starting or will not shut down cannot be
      // stopped; a restart must start a new one all the same.
      output.warn(`stopping the server failed: ${String(error)}`);
    }
  }
}

async function restart(): Promise<void> {
  await stop();
  await start();
}

/** The active editor when it shows a file, else undefined (and the user is told). */
function activeFile(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (editor?.document.uri.scheme === "file") {
    return editor;
  }
  void vscode.window.showErrorMessage("lsp-agent: open a file of the workspace first.");
  return undefined;
}

/** The call for the search command: the selection's first line, literally, else a pattern
 * the user types. */
async function askSearch(): Promise<ToolCall | undefined> {
  const editor = vscode.window.activeTextEditor;
  const selected = editor && !editor.selection.isEmpty ? editor.document.getText(editor.selection) : "";
  const firstLine = selected.split(/\r?\n/)[0];
  if (firstLine) {
    return searchCall(firstLine, true);
  }
  const pattern = await vscode.window.showInputBox({
    title: "lsp-agent: search the workspace",
    prompt: "A regular expression (ripgrep syntax). To search for text literally, select it and run the command.",
  });
  return pattern ? searchCall(pattern) : undefined;
}

/** Build a tool call, send it as a cancellable request, and show the answer. */
async function run(
  answers: AnswerDocuments,
  build: () => ToolCall | undefined | Promise<ToolCall | undefined>,
): Promise<void> {
  const running = client;
  if (!running) {
    void vscode.window.showErrorMessage(notRunning);
    return;
  }
  const call = await build();
  if (!call) {
    return;
  }
  let cancelled = false;
  try {
    const answer = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `lsp-agent ${call.tool}`, cancellable: true },
      // A custom request, not executeCommand: the server stops the tool when it is cancelled.
      (_progress, token) => {
        token.onCancellationRequested(() => (cancelled = true));
        return running.sendRequest<Answer>(requestMethod(call.tool), call.arguments, token);
      },
    );
    await answers.show(call, answer);
  } catch (error) {
    if (!cancelled) {
      void vscode.window.showErrorMessage(`lsp-agent ${call.tool}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
