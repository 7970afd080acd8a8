// VS Code as lsp-agent's semantic source: the server asks `lspAgent/semantic` with a plain LSP
// request ({ method, params }) and the extension answers from VS Code's own providers (the
// language extensions the user has: TypeScript's built in, Pylance, …), so that no second copy
// of their servers runs. The reply is { result, source }: the LSP JSON of the providers' answer
// and "VS Code's providers", or source null when they had nothing (the server then asks a
// headless server of its own).

import * as vscode from "vscode";
import type { StaticFeature } from "vscode-languageclient/node";

export const METHOD = "lspAgent/semantic";
export const SOURCE = "VS Code's providers";

interface LspPosition {
  line: number;
  character: number;
}
interface LspRange {
  start: LspPosition;
  end: LspPosition;
}
interface Request {
  method: string;
  params: {
    textDocument?: { uri: string };
    position?: LspPosition;
    item?: { data?: { lspAgentItem?: number } };
    newName?: string;
  };
}
export interface Reply {
  result: unknown;
  source: string | null;
}

/** Says in the initialize request that this client answers lspAgent/semantic. */
export const capability: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), lspAgent: { semantic: true } };
  },
  initialize() {},
  getState: () => ({ kind: "static" }),
  clear() {},
};

const range = (r: vscode.Range): LspRange => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});

function location(found: vscode.Location | vscode.LocationLink): unknown {
  if ("targetUri" in found) {
    return {
      targetUri: found.targetUri.toString(),
      targetRange: range(found.targetRange),
      targetSelectionRange: range(found.targetSelectionRange ?? found.targetRange),
      ...(found.originSelectionRange ? { originSelectionRange: range(found.originSelectionRange) } : {}),
    };
  }
  return { uri: found.uri.toString(), range: range(found.range) };
}

// Call hierarchy items given out, by the number in their `data`: a follow-up question must
// hand VS Code back its own item (it keeps the provider's session in it).
const items = new Map<number, vscode.CallHierarchyItem>();
let nextItem = 1;
const MAX_ITEMS = 2000;

function item(given: vscode.CallHierarchyItem): unknown {
  const id = nextItem++;
  items.set(id, given);
  if (items.size > MAX_ITEMS) {
    items.delete(items.keys().next().value as number);
  }
  return {
    name: given.name,
    kind: given.kind + 1, // vscode.SymbolKind counts from 0, LSP's from 1
    detail: given.detail,
    uri: given.uri.toString(),
    range: range(given.range),
    selectionRange: range(given.selectionRange),
    data: { lspAgentItem: id },
  };
}

function workspaceEdit(edit: vscode.WorkspaceEdit | undefined): unknown {
  if (!edit) {
    return null;
  }
  const changes: Record<string, unknown[]> = {};
  for (const [uri, edits] of edit.entries()) {
    changes[uri.toString()] = edits
      .filter((e): e is vscode.TextEdit => e instanceof vscode.TextEdit)
      .map((e) => ({ range: range(e.range), newText: e.newText }));
  }
  return { changes };
}

type Ask = (uri: vscode.Uri, position: vscode.Position, request: Request) => Promise<unknown>;

const run = <T>(command: string, ...args: unknown[]): Promise<T> =>
  vscode.commands.executeCommand<T>(command, ...args) as Promise<T>;

const locations =
  (command: string): Ask =>
  async (uri, position) =>
    ((await run<(vscode.Location | vscode.LocationLink)[] | undefined>(command, uri, position)) ?? []).map(location);

const ASK: Record<string, Ask> = {
  "textDocument/references": locations("vscode.executeReferenceProvider"),
  "textDocument/definition": locations("vscode.executeDefinitionProvider"),
  "textDocument/implementation": locations("vscode.executeImplementationProvider"),
  "textDocument/prepareCallHierarchy": async (uri, position) =>
    ((await run<vscode.CallHierarchyItem[] | undefined>("vscode.prepareCallHierarchy", uri, position)) ?? []).map(item),
  "textDocument/rename": async (uri, position, request) =>
    workspaceEdit(await run<vscode.WorkspaceEdit>("vscode.executeDocumentRenameProvider", uri, position, request.params.newName)),
  "textDocument/prepareRename": async (uri, position) => {
    const found = await run<vscode.Range | { range: vscode.Range; placeholder: string } | undefined>(
      "vscode.prepareRename",
      uri,
      position,
    );
    return found instanceof vscode.Range ? range(found) : found ? { range: range(found.range), placeholder: found.placeholder } : null;
  },
};

async function followUp(request: Request): Promise<Reply> {
  const given = items.get(request.params.item?.data?.lspAgentItem ?? -1);
  if (!given) {
    throw new Error("this call hierarchy item is not one VS Code gave (or no longer kept)");
  }
  if (request.method === "callHierarchy/incomingCalls") {
    const calls = (await run<vscode.CallHierarchyIncomingCall[] | undefined>("vscode.provideIncomingCalls", given)) ?? [];
    return { result: calls.map((c) => ({ from: item(c.from), fromRanges: c.fromRanges.map(range) })), source: SOURCE };
  }
  const calls = (await run<vscode.CallHierarchyOutgoingCall[] | undefined>("vscode.provideOutgoingCalls", given)) ?? [];
  return { result: calls.map((c) => ({ to: item(c.to), fromRanges: c.fromRanges.map(range) })), source: SOURCE };
}

/** The handler of lspAgent/semantic. */
export async function answer(request: Request): Promise<Reply> {
  if (request.method === "callHierarchy/incomingCalls" || request.method === "callHierarchy/outgoingCalls") {
    return followUp(request);
  }
  const ask = ASK[request.method];
  const { textDocument, position } = request.params ?? {};
  if (!ask || !textDocument || !position) {
    throw new Error(`lsp-agent: ${request.method} is not a question VS Code's providers answer here`);
  }
  const uri = vscode.Uri.parse(textDocument.uri);
  const result = await ask(uri, new vscode.Position(position.line, position.character), request);
  const empty = result === null || result === undefined || (Array.isArray(result) && result.length === 0);
  return { result: result ?? null, source: empty ? null : SOURCE };
}
