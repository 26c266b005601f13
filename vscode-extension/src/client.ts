// Starts `oomlens lsp` with vscode-languageclient: which documents it gets,
// the settings it starts with, bounded restarts with a message that names the
// setting to change, and the server commands the editor carries out itself.
import * as vscode from "vscode";
import type { RestartBudget } from "./restartBudget";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type DocumentSelector,
  type ErrorHandler,
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

function errorHandler(hooks: ClientHooks): ErrorHandler {
  return {
    error: (_error, _message, count) => {
      // A few bad messages are survivable; a stream of them means a broken pipe.
      return { action: count !== undefined && count <= 3 ? ErrorAction.Continue : ErrorAction.Shutdown, handled: true };
    },
    closed: () => {
      if (hooks.budget.allow()) {
        hooks.output.appendLine(`[oomlens] the server (${hooks.binary}) stopped; restarting it.`);
        return { action: CloseAction.Restart, handled: true };
      }
      const message = `The oomlens server (${hooks.binary}) stopped ${hooks.budget.limit + 1} times in ${Math.round(
        hooks.budget.windowMs / 60000,
      )} minutes and will not be restarted. See the oomlens output; check the "oomlens.path" setting, then run "oomlens: Restart Server".`;
      hooks.onGaveUp(message);
      return { action: CloseAction.DoNotRestart, handled: true };
    },
  };
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
    errorHandler: errorHandler(hooks),
    middleware: { executeCommand: hooks.executeCommand },
    // Startup problems are shown by the extension with the setting to change.
    revealOutputChannelOn: 4 /* RevealOutputChannelOn.Never */,
  };
  return new LanguageClient(CLIENT_ID, "oomlens", serverOptions, clientOptions);
}
