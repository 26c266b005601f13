// Finding the training script a traceback names on this machine: the path as
// printed when it exists, else the workspace file with the longest common path
// suffix (tracebacks often come from another machine or a container).
import * as fs from "fs";
import * as vscode from "vscode";
import { baseName } from "./report";

/** How many trailing path components two paths share. */
export function commonSuffixLength(a: string, b: string): number {
  const pa = a.split(/[\\/]+/).filter(Boolean).reverse();
  const pb = b.split(/[\\/]+/).filter(Boolean).reverse();
  let n = 0;
  while (n < pa.length && n < pb.length && pa[n] === pb[n]) n++;
  return n;
}

export async function locateScript(printed: string): Promise<vscode.Uri | undefined> {
  if (printed.startsWith("/") && fs.existsSync(printed)) return vscode.Uri.file(printed);
  const name = baseName(printed);
  const found = await vscode.workspace.findFiles(`**/${name}`, "**/{node_modules,.git,.venv,venv,site-packages}/**", 200);
  if (found.length) {
    const scored = found.map((uri) => ({ uri, score: commonSuffixLength(uri.fsPath, printed) }));
    scored.sort((x, y) => y.score - x.score);
    const best = scored.filter((s) => s.score === scored[0]!.score);
    if (best.length === 1) return best[0]!.uri;
    const pick = await vscode.window.showQuickPick(
      best.map((s) => ({ label: vscode.workspace.asRelativePath(s.uri), uri: s.uri })),
      { placeHolder: `Which ${name} did the traceback name (${printed})?` },
    );
    return pick?.uri;
  }
  const chosen = await vscode.window.showOpenDialog({
    canSelectMany: false,
    openLabel: `Use as ${name}`,
    title: `${printed} is not on this machine: locate ${name}`,
    filters: { Python: ["py"] },
  });
  return chosen?.[0];
}
