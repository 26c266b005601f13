// Opt-in (`oomlens.watchTerminals`): reads the output of each command run in
// a terminal with shell integration, and when one ends with what may be a GPU
// OOM, asks the server and offers the report. Output stays on this machine.
import * as vscode from "vscode";
import { OutputTail, shouldDiagnose, stripTerminalControls } from "./terminalFilter";

interface Watched {
  tail: OutputTail;
  done: Promise<void>;
}

export class TerminalWatcher implements vscode.Disposable {
  private readonly watched = new Map<vscode.TerminalShellExecution, Watched>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly enabled: () => boolean,
    private readonly onOomCandidate: (commandLine: string, output: string) => Promise<void>,
  ) {
    // The shell-integration events exist from VS Code 1.93 on.
    if (typeof vscode.window.onDidStartTerminalShellExecution !== "function") return;
    this.disposables.push(
      vscode.window.onDidStartTerminalShellExecution((e) => this.start(e.execution)),
      vscode.window.onDidEndTerminalShellExecution((e) => void this.end(e.execution, e.exitCode)),
    );
  }

  private start(execution: vscode.TerminalShellExecution): void {
    if (!this.enabled()) return;
    const tail = new OutputTail();
    const done = (async () => {
      try {
        for await (const chunk of execution.read()) tail.push(chunk);
      } catch {
        // A terminal closed mid-read: keep what arrived.
      }
    })();
    this.watched.set(execution, { tail, done });
  }

  private async end(execution: vscode.TerminalShellExecution, exitCode: number | undefined): Promise<void> {
    const w = this.watched.get(execution);
    if (!w) return;
    this.watched.delete(execution);
    await Promise.race([w.done, new Promise((r) => setTimeout(r, 2000))]);
    const output = stripTerminalControls(w.tail.text());
    const commandLine = execution.commandLine.value;
    if (!shouldDiagnose({ commandLine, exitCode, output })) return;
    await this.onOomCandidate(commandLine, output);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.watched.clear();
  }
}
