// Running commands where the user sees them, and reading a terminal's
// selection. The server never runs anything; the extension runs verification
// commands in a visible terminal named for them, never in the background.
import * as vscode from "vscode";

export function terminalNameFor(command: string): string {
  const short = command.length > 40 ? `${command.slice(0, 39)}…` : command;
  return `oomlens verify: ${short}`;
}

/**
 * Verification commands start with `oomlens` (`oomlens verify --baseline ...`);
 * the terminal's PATH may not hold it, so the binary the extension started
 * runs instead, quoted for a POSIX shell.
 */
export function commandWithBinary(command: string, binary?: string): string {
  if (!binary || !/^oomlens(\s|$)/.test(command)) return command;
  const quoted = /^[\w@%+=:,./-]+$/.test(binary) ? binary : `'${binary.replace(/'/g, "'\\''")}'`;
  return quoted + command.slice("oomlens".length);
}

export function runInTerminal(command: string, cwd?: vscode.Uri): vscode.Terminal {
  const name = terminalNameFor(command);
  const existing = vscode.window.terminals.find((t) => t.name === name && t.exitStatus === undefined);
  const terminal = existing ?? vscode.window.createTerminal({ name, cwd });
  terminal.show();
  terminal.sendText(command, true);
  return terminal;
}

/**
 * The active terminal's selection. VS Code has no stable API for it, so the
 * terminal's own "copy selection" command is used and the clipboard restored.
 */
export async function readTerminalSelection(): Promise<string | undefined> {
  if (!vscode.window.activeTerminal) return undefined;
  const saved = await vscode.env.clipboard.readText();
  const marker = `\u0000oomlens-${Date.now()}`;
  await vscode.env.clipboard.writeText(marker);
  try {
    await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
    const text = await vscode.env.clipboard.readText();
    return text === marker || !text ? undefined : text;
  } finally {
    await vscode.env.clipboard.writeText(saved);
  }
}
