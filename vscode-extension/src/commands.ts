// The extension's own commands (package.json "contributes.commands"). Their ids
// never equal a server command: vscode-languageclient registers the server's
// executeCommandProvider ids itself, and a second registration of the same id
// fails ("command already exists", vscode-languageserver-node#333).
import * as vscode from "vscode";

export const CLIENT_COMMANDS = {
  diagnoseSelection: "oomlens.diagnoseSelection",
  diagnoseTerminalSelection: "oomlens.diagnoseTerminalSelection",
  analyzeSnapshotFile: "oomlens.analyzeSnapshotFile",
  compareSnapshotFiles: "oomlens.compareSnapshotFiles",
  verifyFix: "oomlens.verifyFix",
  applyFixToScript: "oomlens.applyFixToScript",
  restartServer: "oomlens.restartServer",
  showOutput: "oomlens.showOutput",
} as const;

export type ClientCommand = (typeof CLIENT_COMMANDS)[keyof typeof CLIENT_COMMANDS];

export type CommandHandlers = Record<ClientCommand, (...args: unknown[]) => unknown>;

export function registerCommands(handlers: CommandHandlers): vscode.Disposable[] {
  return (Object.values(CLIENT_COMMANDS) as ClientCommand[]).map((id) =>
    vscode.commands.registerCommand(id, (...args: unknown[]) => handlers[id](...args)),
  );
}
