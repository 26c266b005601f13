// For the browser test only: when OOMLENS_VSCODE_TEST_STATE names a file, the
// extension writes what it sees there (oomlens diagnostics, the text of Python
// files and of notebooks' Python cells, events), so a test can check the editor's state without scraping UI.
import * as fs from "fs";
import * as vscode from "vscode";

export class TestState implements vscode.Disposable {
  private readonly file = process.env.OOMLENS_VSCODE_TEST_STATE;
  private readonly events: string[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly disposables: vscode.Disposable[] = [];

  constructor() {
    if (!this.file) return;
    this.disposables.push(
      vscode.languages.onDidChangeDiagnostics(() => this.schedule()),
      vscode.workspace.onDidChangeTextDocument(() => this.schedule()),
      vscode.workspace.onDidChangeNotebookDocument(() => this.schedule()),
    );
    this.schedule();
  }

  event(what: string): void {
    if (!this.file) return;
    this.events.push(what);
    this.schedule();
  }

  private schedule(): void {
    if (!this.file || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.write();
    }, 200);
  }

  private write(): void {
    const diagnostics: Record<string, { code: string; message: string; line: number; source: string }[]> = {};
    for (const [uri, list] of vscode.languages.getDiagnostics()) {
      const ours = list.filter((d) => d.source === "oomlens" || String(typeof d.code === "object" ? d.code.value : d.code).startsWith("OOM"));
      if (ours.length)
        diagnostics[uri.toString()] = ours.map((d) => ({
          code: String(typeof d.code === "object" ? d.code.value : (d.code ?? "")),
          message: d.message,
          line: d.range.start.line,
          source: d.source ?? "",
        }));
    }
    const documents: Record<string, string> = {};
    for (const doc of vscode.workspace.textDocuments)
      if (doc.languageId === "python" && (doc.uri.scheme === "file" || doc.uri.scheme === "vscode-notebook-cell"))
        documents[doc.uri.toString()] = doc.getText();
    try {
      fs.writeFileSync(this.file!, JSON.stringify({ diagnostics, documents, events: this.events }, null, 1));
    } catch {
      // The test will notice the missing state.
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
