// Webview panels: the diagnosis report (with buttons), rule pages and the
// snapshot report. Content always comes from renderers that escape server text.
import * as vscode from "vscode";
import type { DiagnoseResult } from "./contract";
import { escapeHtml, makeNonce, renderMarkdownSafe } from "./html";
import { parseReportAction, renderReportHtml, type ReportAction } from "./report";

export class ReportPanel {
  private panel: vscode.WebviewPanel | undefined;
  private result: DiagnoseResult = {};
  private subscription: vscode.Disposable | undefined;

  constructor(private readonly onAction: (action: ReportAction, result: DiagnoseResult) => void) {}

  /** The result shown now (the report's buttons act on it). */
  get current(): DiagnoseResult {
    return this.result;
  }

  show(result: DiagnoseResult, title: string): void {
    this.result = result;
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel("oomlens.report", title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
        enableScripts: true,
        enableCommandUris: false,
        localResourceRoots: [],
        retainContextWhenHidden: false,
      });
      this.panel.onDidDispose(() => {
        this.subscription?.dispose();
        this.panel = undefined;
      });
      this.subscription = this.panel.webview.onDidReceiveMessage((message: unknown) => {
        const action = parseReportAction(message);
        if (action) this.onAction(action, this.result);
      });
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside, true);
    }
    this.panel.title = title;
    this.panel.webview.html = renderReportHtml(result, { title, nonce: makeNonce(), cspSource: this.panel.webview.cspSource });
  }

  dispose(): void {
    this.subscription?.dispose();
    this.panel?.dispose();
  }
}

const STATIC_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/**
 * The server's self-contained snapshot page (inline SVG, no scripts). A strict
 * CSP goes first in <head>, so nothing the page contains can load or run.
 */
export function withStrictCsp(html: string): string {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${STATIC_CSP}">`;
  const head = /<head[^>]*>/i.exec(html);
  if (head) return html.slice(0, head.index + head[0].length) + meta + html.slice(head.index + head[0].length);
  return `<!doctype html><html><head>${meta}</head><body>${html}</body></html>`;
}

export function markdownPage(title: string, markdown: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${STATIC_CSP}">
<title>${escapeHtml(title)}</title><style>body{font-family:var(--vscode-font-family);color:var(--vscode-foreground);padding:0 1em;line-height:1.45}
code,pre{font-family:var(--vscode-editor-font-family)}</style></head><body>${renderMarkdownSafe(markdown)}</body></html>`;
}

/** A panel without scripts: rule pages, document explanations, snapshot reports. */
export function showStaticPanel(viewType: string, title: string, html: string): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel(viewType, title, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
    enableScripts: false,
    enableCommandUris: false,
    localResourceRoots: [],
  });
  panel.webview.html = html;
  return panel;
}
