// What the extension says to the server, with no dependency on the `vscode` module, so the
// Node protocol test (src/test/) sends exactly the same requests as the extension does.

import * as fs from "node:fs";
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
  search_engine: "searchEngine",
  max_nudges: "maxNudges",
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
      return `symbols ${path.basename(String(args.path))}`;
    default:
      return call.tool;
  }
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
