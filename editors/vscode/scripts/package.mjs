// Build the extension: bundle it with esbuild into dist/extension.js, then package a .vsix
// whose `languageModelTools` are the server's tool catalog of this build, so the tools offered
// to language models never drift from the server's (the committed package.json has none).
//
//   node scripts/package.mjs [--out FILE.vsix]   bundle and package
//   node scripts/package.mjs --bundle-only       bundle only
//
// The catalog comes from `python -m lsp_agent tools`, with $LSP_AGENT_PYTHON or else the
// repository's .venv/bin/python (`make venv`).

import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { parseArgs } from "node:util";
import * as esbuild from "esbuild";

const HERE = path.resolve(import.meta.dirname, "..");
const REPO = path.resolve(HERE, "../..");
const STAGE = path.join(HERE, "build", "vsix");
const { values: options } = parseArgs({ options: { out: { type: "string" }, "bundle-only": { type: "boolean" } } });

await esbuild.build({
  entryPoints: [path.join(HERE, "src", "extension.ts")],
  outfile: path.join(HERE, "dist", "extension.js"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"], // provided by VS Code at run time
  minify: true,
  logLevel: "warning",
});
if (options["bundle-only"]) {
  process.exit(0);
}

// protocol.ts holds the catalog -> contribution mapping the extension's tests check.
execFileSync(path.join(HERE, "node_modules", ".bin", "tsc"), ["-p", HERE], { stdio: "inherit" });
const { languageModelTool } = createRequire(import.meta.url)(path.join(HERE, "out", "protocol.js"));
const python = process.env.LSP_AGENT_PYTHON ?? path.join(REPO, ".venv", "bin", "python");
const catalog = JSON.parse(execFileSync(python, ["-m", "lsp_agent", "tools"], { cwd: REPO, encoding: "utf8" }));

const manifest = JSON.parse(fs.readFileSync(path.join(HERE, "package.json"), "utf8"));
manifest.contributes.languageModelTools = catalog.map(languageModelTool);
manifest.contributes.configuration.properties["lspAgent.languageModelTools.exclude"].items.enum = catalog.map((t) => t.name);
// Everything runs from the bundle: no dependencies to ship, no scripts for vsce to run.
delete manifest.scripts;
delete manifest.dependencies;
delete manifest.devDependencies;

fs.rmSync(STAGE, { recursive: true, force: true });
fs.mkdirSync(path.join(STAGE, "dist"), { recursive: true });
fs.writeFileSync(path.join(STAGE, "package.json"), JSON.stringify(manifest, null, 2) + "\n");
for (const file of ["README.md", "LICENSE", "icon.png", "dist/extension.js"]) {
  fs.copyFileSync(path.join(HERE, file), path.join(STAGE, file));
}
const out = path.resolve(options.out ?? path.join(HERE, `${manifest.name}-${manifest.version}.vsix`));
execFileSync(path.join(HERE, "node_modules", ".bin", "vsce"), ["package", "--no-dependencies", "--out", out], {
  cwd: STAGE,
  stdio: "inherit",
});
