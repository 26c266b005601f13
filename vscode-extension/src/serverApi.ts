// The server's workspace/executeCommand commands, typed. Works over anything
// that can send a request: the LanguageClient in the editor, a plain
// vscode-jsonrpc connection in the integration test. No vscode import.
import type { DiagnoseResult, ScriptFix, SnapshotResult } from "./contract";

export const SERVER_COMMANDS = {
  diagnoseText: "oomlens.diagnoseText",
  explain: "oomlens.explain",
  explainDocument: "oomlens.explainDocument",
  copyVerification: "oomlens.copyVerification",
  runVerification: "oomlens.runVerification",
  showFix: "oomlens.showFix",
  analyzeSnapshot: "oomlens.analyzeSnapshot",
  compareSnapshots: "oomlens.compareSnapshots",
  fixScript: "oomlens.fixScript",
  verify: "oomlens.verify",
} as const;

/** A cancellation token as both vscode and vscode-jsonrpc define it. */
export interface Token {
  readonly isCancellationRequested: boolean;
}

export interface Requester {
  sendRequest<R>(method: string, params: unknown, token?: Token): Promise<R>;
  sendRequest<R>(method: string, params: unknown): Promise<R>;
}

/** Thrown when the running binary does not offer a command (an older oomlens). */
export class UnsupportedCommandError extends Error {
  constructor(readonly command: string) {
    super(`This oomlens binary does not offer "${command}"; a newer oomlens is needed (see the "oomlens.path" setting).`);
  }
}

/** A WorkspaceEdit in protocol form, as oomlens.fixScript returns it. */
export interface FixScriptResult {
  title?: string;
  edit?: unknown;
}

export class ServerApi {
  constructor(
    private readonly requester: Requester,
    /** The commands the server listed in executeCommandProvider (undefined: not known yet). */
    private readonly serverCommands: () => readonly string[] | undefined,
  ) {}

  supports(command: string): boolean {
    const list = this.serverCommands();
    return list === undefined || list.includes(command);
  }

  private execute<R>(command: string, args: unknown[], token?: Token): Promise<R> {
    if (!this.supports(command)) return Promise.reject(new UnsupportedCommandError(command));
    const params = { command, arguments: args };
    // vscode-jsonrpc takes any trailing argument that is not a token as a
    // positional parameter: pass the token only when there is one.
    return token ? this.requester.sendRequest<R>("workspace/executeCommand", params, token) : this.requester.sendRequest<R>("workspace/executeCommand", params);
  }

  diagnoseText(text: string, source: string, token?: Token): Promise<DiagnoseResult> {
    return this.execute<DiagnoseResult>(SERVER_COMMANDS.diagnoseText, [{ text, source }], token);
  }

  explain(code: string, token?: Token): Promise<{ markdown?: string }> {
    return this.execute(SERVER_COMMANDS.explain, [code], token);
  }

  explainDocument(uri: string, token?: Token): Promise<{ markdown?: string }> {
    return this.execute(SERVER_COMMANDS.explainDocument, [uri], token);
  }

  analyzeSnapshot(path: string, token?: Token): Promise<SnapshotResult> {
    return this.execute<SnapshotResult>(SERVER_COMMANDS.analyzeSnapshot, [{ path }], token);
  }

  /** Two runs side by side: `oomlens snapshot --compare A B`'s JSON and page. */
  compareSnapshots(pathA: string, pathB: string, token?: Token): Promise<SnapshotResult> {
    return this.execute<SnapshotResult>(SERVER_COMMANDS.compareSnapshots, [{ path: pathA }, { path: pathB }], token);
  }

  fixScript(uri: string, fix: ScriptFix, token?: Token): Promise<FixScriptResult> {
    return this.execute<FixScriptResult>(SERVER_COMMANDS.fixScript, [{ uri, fix }], token);
  }

  /** The `oomlens verify` command for an open script or log (the setting given, else the server's). */
  verify(uri: string, conf?: string, token?: Token): Promise<{ command?: string }> {
    return this.execute(SERVER_COMMANDS.verify, [conf ? { uri, conf } : { uri }], token);
  }
}
