// Starts `oomlens lsp` with vscode-languageclient: which documents it gets,
// the settings it starts with, bounded restarts with a message that names the
// setting to change, and the server commands the editor carries out itself.
import * as vscode from "vscode";
import { boundedErrorHandler, type RestartBudget } from "./restartBudget";
import {
  LanguageClient,
  type DocumentSelector,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
} from "vscode-languageclient/node";

export const CLIENT_ID = "oomlens"; // `oomlens.trace.server` works because the id matches

/** Logs (by language or extension), untitled buffers, and Python training scripts. */
export const LOG_SELECTOR: DocumentSelector = [
  { language: "log" },
  { language: "plaintext" },
  { scheme: "file", pattern: "**/*.{log,out,err}" },
];
export const DOCUMENT_SELECTOR: DocumentSelector = [
  ...LOG_SELECTOR,
  { scheme: "file", language: "python" },
  { scheme: "untitled", language: "python" },
  // Files that set PYTORCH_CUDA_ALLOC_CONF for a run: the server checks the
  // value (OOM303) and offers the set-allocator action there too.
  { scheme: "file", language: "shellscript" },
  { scheme: "file", pattern: "**/{.env,*.env,.deepspeed_env}" },
  { scheme: "file", pattern: "**/.vscode/launch.json" },
  // SLURM batch scripts, Dockerfiles, Kubernetes / Compose YAML: the server
  // reads their allocator settings too.
  { scheme: "file", pattern: "**/*.{sbatch,slurm}" },
  { scheme: "file", language: "dockerfile" },
  { scheme: "file", language: "yaml" },
  // Jupyter notebooks' Python cells: the server syncs them as notebooks
  // (notebookDocumentSync) and analyses the code cells in order, as one
  // script; this filter lets its code actions reach the cells.
  { notebook: "jupyter-notebook", language: "python" },
];

export function serverSettings(config: vscode.WorkspaceConfiguration): Record<string, unknown> {
  return {
    allocatorOption: config.get<string>("allocatorOption"),
    progressThresholdBytes: config.get<number>("progressThresholdBytes"),
  };
}

export interface ClientHooks {
  output: vscode.OutputChannel;
  budget: RestartBudget;
  binary: string;
  /** Server commands the extension performs itself (run in a terminal, copy, show). */
  executeCommand: Middleware["executeCommand"];
  onGaveUp(message: string): void;
}

export function createClient(hooks: ClientHooks): LanguageClient {
  const serverOptions: ServerOptions = {
    run: { command: hooks.binary, args: ["lsp"] },
    debug: { command: hooks.binary, args: ["lsp"] },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: DOCUMENT_SELECTOR,
    outputChannel: hooks.output,
    traceOutputChannel: hooks.output,
    initializationOptions: serverSettings(vscode.workspace.getConfiguration("oomlens")),
    synchronize: { configurationSection: "oomlens" },
    errorHandler: boundedErrorHandler({
      budget: hooks.budget,
      binary: hooks.binary,
      log: (line) => hooks.output.appendLine(line),
      onGaveUp: (message) => hooks.onGaveUp(message),
    }),
    middleware: { executeCommand: hooks.executeCommand },
    // Startup problems are shown by the extension with the setting to change.
    revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
  };
  return new LanguageClient(CLIENT_ID, "oomlens", serverOptions, clientOptions);
}
