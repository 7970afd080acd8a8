// What the extension says to the server, with no dependency on the `vscode` module, so the
// Node protocol test (src/test/) sends exactly the same requests as the extension does.

import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** A tool call: the registry name and its arguments object. */
export interface ToolCall {
  tool: string;
  arguments: Record<string, unknown>;
}

/** A tool's answer: `text` is what the agent reads; the other fields are for programs. */
export interface Answer {
  text: string;
  error?: { code: string; message: string };
  [field: string]: unknown;
}

/** The extension's commands (contributed in package.json). They are not named like the
 * server's own commands `lspAgent.<tool>`, which the language client registers itself. */
export const COMMANDS = {
  search: "lspAgent.showSearch",
  read: "lspAgent.showRead",
  symbols: "lspAgent.showSymbols",
  readOn: "lspAgent.readOn",
  restart: "lspAgent.restart",
} as const;

/** Every registry tool is served as the custom request `lspAgent/<tool>` (cancellable). */
export function requestMethod(tool: string): string {
  return `lspAgent/${tool}`;
}

/** Server option (lsp_agent/config.py, sent in initializationOptions) -> the extension's
 * setting `lspAgent.<name>` that sets it. */
export const OPTION_SETTINGS = {
  max_chars: "maxChars",
  max_nudges: "maxNudges",
  edits: "edits",
  precision: "precision",
  semantic_servers: "semanticServers",
  semantic_timeout: "semanticTimeout",
  semantic_idle: "semanticIdle",
  semantic_memory_mb: "semanticMemoryMb",
  scip_indexes: "scipIndexes",
} as const;

/** initializationOptions from the settings: those left unset (undefined or null) are not
 * sent, so the defaults of the server (or of its command-line flags) stay in force. */
export function initializationOptions(settings: (name: string) => unknown): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const [option, setting] of Object.entries(OPTION_SETTINGS)) {
    const value = settings(setting);
    if (value !== undefined && value !== null) {
      options[option] = value;
    }
  }
  return options;
}

/** Search the workspace for a regular expression (ripgrep syntax), or for literal text. */
export function searchCall(pattern: string, literal = false): ToolCall {
  return { tool: "search", arguments: literal ? { pattern, fixed_strings: true } : { pattern } };
}

/** Read `file` (absolute path inside the workspace) from 1-based line `start`. */
export function readCall(file: string, start: number): ToolCall {
  return { tool: "read", arguments: { path: file, start } };
}

/** The read of the page after `answer` (its `next` arguments), or undefined at the end. */
export function nextPage(call: ToolCall, answer: Answer): ToolCall | undefined {
  const next = answer.next as Record<string, unknown> | null | undefined;
  if (call.tool !== "read" || !next) {
    return undefined;
  }
  return { tool: "read", arguments: { path: call.arguments.path, ...next } };
}

/** The outline of `file`. */
export function symbolsCall(file: string): ToolCall {
  return { tool: "symbols", arguments: { path: file } };
}

/** A short title for the document that shows an answer. */
export function answerTitle(call: ToolCall): string {
  const args = call.arguments;
  switch (call.tool) {
    case "search":
      return `search ${String(args.pattern)}${args.fixed_strings ? " (literal)" : ""}`;
    case "read":
      return `read ${path.basename(String(args.path))} from line ${String(args.start)}`;
    case "symbols":
      return `symbols ${path.basename(typeof args.path === "string" ? args.path : ".")}`;
    default:
      return [call.tool, ...Object.entries(args).map(([key, value]) => `${key}=${JSON.stringify(value)}`)].join(" ");
  }
}

/** A tool of the server's catalog (`lsp-agent tools`, or the request `lspAgent/tools`). */
export interface CatalogTool {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /** MCP's tool annotations: `readOnlyHint` is true for the tools that change no file. */
  annotations?: { readOnlyHint?: boolean };
}

/** An entry of package.json's `contributes.languageModelTools`. */
export interface LanguageModelToolContribution {
  name: string;
  displayName: string;
  toolReferenceName: string;
  canBeReferencedInPrompt: boolean;
  userDescription: string;
  modelDescription: string;
  inputSchema: Record<string, unknown>;
  tags: string[];
  when: string;
}

const READ_ONLY = "Read-only: it changes no file, and it sees the unsaved text of files open in the editor.";
const WRITES = "It changes files in the workspace, and it sees the unsaved text of files open in the editor.";

/** Whether catalog tool `tool` only reads (its annotation says so; a tool without one is not
 * taken to be read-only). */
export function isReadOnly(tool: CatalogTool): boolean {
  return tool.annotations?.readOnlyHint === true;
}

/** The Language Model Tool that serves catalog tool `tool.name`: `lspAgent_<tool>`. */
export function languageModelToolName(tool: string): string {
  return `lspAgent_${tool}`;
}

/** The catalog tool a Language Model Tool serves, or undefined when it is not one of ours. */
export function catalogToolName(languageModelTool: string): string | undefined {
  const prefix = languageModelToolName("");
  return languageModelTool.startsWith(prefix) ? languageModelTool.slice(prefix.length) : undefined;
}

/** The context key that makes a tool available (set by the extension from the settings). */
export function toolContextKey(tool: string): string {
  return `lspAgent.languageModelTool.${tool}`;
}

/** The `languageModelTools` contribution of a catalog tool: its description and schema as the
 * server states them, so the model reads the same tool in VS Code as over MCP or the CLI. */
export function languageModelTool(tool: CatalogTool): LanguageModelToolContribution {
  const firstSentence = tool.description.split(/(?<=\.)\s/)[0];
  const readOnly = isReadOnly(tool);
  return {
    name: languageModelToolName(tool.name),
    displayName: `lsp-agent ${tool.name.replace(/_/g, " ")}`,
    toolReferenceName: languageModelToolName(tool.name),
    canBeReferencedInPrompt: true,
    userDescription: readOnly ? `${firstSentence} (read-only)` : firstSentence,
    modelDescription: `${tool.description} ${readOnly ? READ_ONLY : WRITES}`,
    inputSchema: tool.inputSchema,
    tags: readOnly ? ["lsp-agent", "read-only"] : ["lsp-agent", "edits"],
    when: toolContextKey(tool.name),
  };
}

/** Which tools to offer to language models, from the settings
 * `lspAgent.languageModelTools.enabled` and `lspAgent.languageModelTools.exclude`. */
export function enabledTools(tools: string[], enabled: boolean, exclude: readonly string[]): Set<string> {
  return new Set(enabled ? tools.filter((tool) => !exclude.includes(tool)) : []);
}

/** `command` with a leading `~` (alone or before a slash) taken as the home folder. */
export function expandHome(command: string, home: string = os.homedir()): string {
  return command === "~" || command.startsWith("~/") ? home + command.slice(1) : command;
}

/** The full path of `command` (a name looked up on PATH, or a path, relative ones taken from
 * `base`), or undefined when no executable file is there. */
export function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
  base: string = process.cwd(),
): string | undefined {
  const isFile = (candidate: string): boolean => {
    try {
      if (!fs.statSync(candidate).isFile()) {
        return false;
      }
      if (platform !== "win32") {
        fs.accessSync(candidate, fs.constants.X_OK);
      }
      return true;
    } catch {
      return false;
    }
  };
  const extensions = platform === "win32" ? (env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";").concat([""]) : [""];
  if (command.includes("/") || (platform === "win32" && command.includes("\\"))) {
    return extensions.map((ext) => path.resolve(base, command + ext)).find(isFile);
  }
  for (const dir of (env.PATH ?? "").split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    const found = extensions.map((ext) => path.join(dir, command + ext)).find(isFile);
    if (found) {
      return found;
    }
  }
  return undefined;
}

/** What to tell the user when the server command cannot be started. */
export function missingCommandMessage(command: string): string {
  return (
    `lsp-agent: the server command "${command}" was not found` +
    (command.includes("/") ? "." : " on PATH.") +
    " Install lsp-agent (`pip install -e .` in its checkout) or set \"lspAgent.server.command\"" +
    " to its executable, for example /path/to/lsp-agent/.venv/bin/lsp-agent."
  );
}
