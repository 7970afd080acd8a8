// A test extension: it calls lsp-agent's Language Model Tools as an agent in VS Code does
// (vscode.lm.invokeTool), and writes what it got to result.json for the test to check.
// Its instructions (probe.json, written by the test) are in the folder of `lspAgentProbe.dir`.
const fs = require("node:fs");
const path = require("node:path");
const vscode = require("vscode");

exports.activate = (context) => {
  context.subscriptions.push(
    vscode.commands.registerCommand("lspAgentProbe.run", async () => {
      const dir = vscode.workspace.getConfiguration("lspAgentProbe").get("dir");
      let result;
      try {
        result = await probe(JSON.parse(fs.readFileSync(path.join(dir, "probe.json"), "utf8")));
      } catch (error) {
        result = { fatal: String(error && error.stack ? error.stack : error) };
      }
      // Written whole, then renamed: the test never reads half a file.
      fs.writeFileSync(path.join(dir, "result.json.tmp"), JSON.stringify(result, null, 2));
      fs.renameSync(path.join(dir, "result.json.tmp"), path.join(dir, "result.json"));
      void vscode.window.showInformationMessage(`lsp-agent probe: ${result.fatal ? "failed" : "done"}`);
    }),
    vscode.commands.registerCommand("lspAgentProbe.steps", async () => {
      const dir = vscode.workspace.getConfiguration("lspAgentProbe").get("dir");
      let result;
      try {
        result = await steps(JSON.parse(fs.readFileSync(path.join(dir, "steps.json"), "utf8")));
      } catch (error) {
        result = { fatal: String(error && error.stack ? error.stack : error) };
      }
      fs.writeFileSync(path.join(dir, "result.json.tmp"), JSON.stringify(result, null, 2));
      fs.renameSync(path.join(dir, "result.json.tmp"), path.join(dir, "result.json"));
      void vscode.window.showInformationMessage(`lsp-agent probe steps: ${result.fatal ? "failed" : "done"}`);
    }),
  );
};

/** A document's state as VS Code holds it: unsaved changes and the buffer's text. */
function documentState(file) {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.fsPath === file);
  return doc ? { open: true, dirty: doc.isDirty, text: doc.getText() } : { open: false };
}

/** Steps as a person and an agent take them, each step's outcome in order:
 * {show: file} opens it in an editor, {references: {file, line, character, min}} waits
 * until VS Code's reference providers find at least `min` (its language features have
 * loaded the project) and gives them, {invoke: {tool, input}} invokes a Language Model Tool,
 * {state: file} reads the document, {command: id} runs a command on the active editor. */
async function steps(list) {
  const results = [];
  for (const step of list) {
    if (step.show) {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(step.show));
      await vscode.window.showTextDocument(doc, { preview: false });
      results.push({ shown: step.show });
    } else if (step.references) {
      const { file, line, character, min } = step.references;
      const folder = vscode.workspace.workspaceFolders[0].uri.fsPath;
      let found = [];
      await until(async () => {
        found = (await vscode.commands.executeCommand(
          "vscode.executeReferenceProvider",
          vscode.Uri.file(file),
          new vscode.Position(line, character),
        )) || [];
        return found.length >= min;
      }, `${min} references from VS Code's providers`, 120);
      const locations = found.map((l) => [path.relative(folder, l.uri.fsPath), l.range.start.line, l.range.start.character]);
      results.push({ locations: locations.sort((a, b) => a[0].localeCompare(b[0]) || a[1] - b[1]) });
    } else if (step.invoke) {
      results.push(await invoke(step.invoke));
    } else if (step.state) {
      results.push(documentState(step.state));
    } else if (step.command) {
      await vscode.commands.executeCommand(step.command);
      results.push({ ran: step.command });
    }
  }
  return { steps: results };
}

const ours = () => vscode.lm.tools.filter((tool) => tool.name.startsWith("lspAgent_"));

/** Invoke a tool as an agent does; the result's text parts, or the error it threw. */
async function invoke(call, token) {
  const started = Date.now();
  try {
    const result = await vscode.lm.invokeTool(call.tool, { input: call.input, toolInvocationToken: undefined }, token);
    const text = result.content.filter((part) => part instanceof vscode.LanguageModelTextPart).map((part) => part.value);
    return { text: text.join(""), parts: result.content.length, ms: Date.now() - started };
  } catch (error) {
    return {
      error: { name: error.name, message: error.message },
      ms: Date.now() - started,
    };
  }
}

async function until(condition, what, seconds = 20) {
  const deadline = Date.now() + seconds * 1000;
  while (!(await condition())) {
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function probe(spec) {
  const result = {};
  await until(() => ours().length > 0, "lsp-agent's tools in vscode.lm.tools");
  result.tools = ours().map(({ name, description, inputSchema, tags }) => ({ name, description, inputSchema, tags }));

  // An unsaved edit, made as an editor makes it: the tools must see the buffer, not the disk.
  const document = await vscode.workspace.openTextDocument(vscode.Uri.file(spec.edit.file));
  const edit = new vscode.WorkspaceEdit();
  edit.insert(document.uri, new vscode.Position(spec.edit.line, 0), spec.edit.text);
  await vscode.workspace.applyEdit(edit);

  result.calls = [];
  for (const call of spec.calls) {
    result.calls.push({ ...call, ...(await invoke(call)) });
  }
  // What the server was told is open, for the test to tell its own server the same.
  result.documents = vscode.workspace.textDocuments
    .filter((doc) => doc.uri.scheme === "file")
    .map((doc) => ({ path: doc.uri.fsPath, languageId: doc.languageId, text: doc.getText() }));

  // A long call cancelled by its token: the invocation ends in a CancellationError.
  const source = new vscode.CancellationTokenSource();
  const cancelled = invoke(spec.cancel, source.token);
  setTimeout(() => source.cancel(), spec.cancel.after_ms);
  result.cancel = await cancelled;

  // A tool turned off in the settings leaves vscode.lm.tools, and refuses if called by name.
  const settings = vscode.workspace.getConfiguration("lspAgent.languageModelTools");
  await settings.update("exclude", [spec.exclude], vscode.ConfigurationTarget.Global);
  const off = `lspAgent_${spec.exclude}`;
  await until(() => !ours().some((tool) => tool.name === off), `${off} to leave vscode.lm.tools`);
  result.excluded = { tools: ours().map((tool) => tool.name), call: await invoke({ tool: off, input: spec.exclude_input }) };
  await settings.update("exclude", undefined, vscode.ConfigurationTarget.Global);
  await until(() => ours().some((tool) => tool.name === off), `${off} to come back`);

  // A folder added to the workspace after activation is served too.
  const added = new Promise((resolve) => vscode.workspace.onDidChangeWorkspaceFolders(resolve));
  vscode.workspace.updateWorkspaceFolders(vscode.workspace.workspaceFolders.length, 0, { uri: vscode.Uri.file(spec.add_folder.path) });
  await added;
  result.added_folder = await invoke(spec.add_folder.call);
  return result;
}
