// Diagnostics on a selection the user diagnosed (a traceback pasted into any
// document). Logs the server already analyses get none, to avoid duplicates.
import * as vscode from "vscode";
import type { Report } from "./contract";

/** Document ranges of the incidents and findings, from their `\n`-counted lines in the selected text. */
export function selectionDiagnostics(report: Report, selectionStartLine: number, lineCount: number): vscode.Diagnostic[] {
  const out: vscode.Diagnostic[] = [];
  const clampLine = (l: number) => Math.min(Math.max(selectionStartLine + l - 1, 0), lineCount - 1);
  for (const inc of report.incidents ?? []) {
    if (typeof inc.line !== "number") continue;
    const start = clampLine(inc.line);
    const end = clampLine(typeof inc.end_line === "number" ? inc.end_line : inc.line);
    const d = new vscode.Diagnostic(new vscode.Range(start, 0, end, Number.MAX_SAFE_INTEGER), inc.message ?? "GPU out of memory", vscode.DiagnosticSeverity.Error);
    d.source = "oomlens";
    if (inc.rule) d.code = inc.rule;
    out.push(d);
  }
  for (const f of report.findings ?? []) {
    if (typeof f.line !== "number") continue;
    const line = clampLine(f.line);
    const sev = f.severity === "warning" ? vscode.DiagnosticSeverity.Warning : vscode.DiagnosticSeverity.Information;
    const d = new vscode.Diagnostic(new vscode.Range(line, 0, line, Number.MAX_SAFE_INTEGER), f.message ?? "", sev);
    d.source = "oomlens";
    if (f.rule) d.code = f.rule;
    out.push(d);
  }
  return out;
}
