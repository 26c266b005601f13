// Renders a diagnosis (the server's JSON contract) as the report page shown in
// a webview: class, arithmetic, a memory-breakdown chart, fixes as buttons and
// the verification command. Pure: no vscode import, unit-tested on recorded
// server responses. The chart draws the breakdown the server sends (the
// incident's `breakdown`, from rules/breakdown.cpp), never recomputed here.
// Buttons carry only indices; the extension looks the action up in the result
// it holds, so the page cannot ask for anything else.
import type { Breakdown, DiagnoseResult, Fix, Incident } from "./contract";
import { escapeHtml, renderMarkdownSafe } from "./html";

export interface ReportPageOptions {
  title: string;
  nonce: string;
  cspSource: string;
}

/** A button's request back to the extension. */
export type ReportAction =
  | { type: "applyFix"; incident: number; fix: number }
  | { type: "copyFix"; incident: number; fix: number }
  | { type: "runFix"; incident: number; fix: number }
  | { type: "copyVerify"; incident: number }
  | { type: "runVerify"; incident: number }
  | { type: "openLocation"; incident: number }
  | { type: "explain"; incident: number };

export function parseReportAction(message: unknown): ReportAction | undefined {
  if (!message || typeof message !== "object") return undefined;
  const m = message as Record<string, unknown>;
  const isIndex = (v: unknown) => typeof v === "number" && Number.isInteger(v) && v >= 0;
  if (!isIndex(m.incident)) return undefined;
  const incident = m.incident as number;
  switch (m.type) {
    case "applyFix":
    case "copyFix":
    case "runFix":
      return isIndex(m.fix) ? { type: m.type, incident, fix: m.fix as number } : undefined;
    case "copyVerify":
    case "runVerify":
    case "openLocation":
    case "explain":
      return { type: m.type, incident };
    default:
      return undefined;
  }
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

export function formatBytes(bytes: number): string {
  if (bytes >= GIB) return `${(bytes / GIB).toFixed(2)} GiB`;
  if (bytes >= MIB) return `${(bytes / MIB).toFixed(2)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(2)} KiB`;
  return `${bytes} B`;
}

export interface Segment {
  label: string;
  bytes: number;
  cssClass: string;
}

/** How each kind of part the server names is drawn; an unknown kind keeps the server's label. */
const PART_STYLE: Record<string, { label: string; cssClass: string }> = {
  allocated: { label: "allocated (live tensors)", cssClass: "seg-alloc" },
  reserved_unallocated: { label: "reserved but unallocated (cache)", cssClass: "seg-cache" },
  non_pytorch: { label: "non-PyTorch in this process", cssClass: "seg-nonpt" },
  other_processes: { label: "other processes", cssClass: "seg-other" },
  unaccounted: { label: "unaccounted", cssClass: "seg-unaccounted" },
  free: { label: "free", cssClass: "seg-free" },
};

/** The breakdown bar's segments: the parts the server sent, in its order. */
export function memorySegments(b: Breakdown | null | undefined): Segment[] {
  const segs: Segment[] = [];
  for (const part of b?.parts ?? []) {
    if (typeof part.bytes !== "number" || part.bytes <= 0) continue;
    const style = PART_STYLE[part.kind ?? ""] ?? { label: part.label ?? part.kind ?? "other", cssClass: "seg-unaccounted" };
    segs.push({ label: style.label, bytes: part.bytes, cssClass: style.cssClass });
  }
  return segs;
}

/** The server's breakdown as an SVG bar, with the request drawn under it. */
export function memoryChartSvg(b: Breakdown | null | undefined, requestedBytes?: number): string {
  const segs = memorySegments(b);
  if (!segs.length) return "";
  const sum = segs.reduce((s, x) => s + x.bytes, 0);
  const total = typeof b?.total_bytes === "number" && b.total_bytes > 0 ? b.total_bytes : sum;
  const width = 600;
  let x = 0;
  const rects = segs
    .map((s) => {
      const w = Math.min((s.bytes / total) * width, width - x);
      const r = `<rect class="${s.cssClass}" x="${x.toFixed(1)}" y="0" width="${w.toFixed(1)}" height="24"><title>${escapeHtml(
        `${s.label}: ${formatBytes(s.bytes)}`,
      )}</title></rect>`;
      x += w;
      return r;
    })
    .join("");
  const requested =
    typeof requestedBytes === "number"
      ? `<rect class="seg-request" x="0" y="30" width="${Math.min(width, (requestedBytes / total) * width).toFixed(1)}" height="8"><title>${escapeHtml(
          `requested ${formatBytes(requestedBytes)}`,
        )}</title></rect>`
      : "";
  const legend = segs
    .map((s) => `<li><span class="swatch ${s.cssClass}"></span>${escapeHtml(s.label)} <b>${escapeHtml(formatBytes(s.bytes))}</b></li>`)
    .join("");
  const requestLegend =
    typeof requestedBytes === "number"
      ? `<li><span class="swatch seg-request"></span>requested <b>${escapeHtml(formatBytes(requestedBytes))}</b></li>`
      : "";
  return `<figure class="chart"><svg viewBox="0 0 ${width} 40" width="100%" role="img" aria-label="memory breakdown of ${escapeHtml(
    formatBytes(total),
  )}">${rects}${requested}</svg><figcaption>memory of ${escapeHtml(formatBytes(total))}</figcaption><ul class="legend">${legend}${requestLegend}</ul></figure>`;
}

/** The script a fix applies to: the one the verification command runs, else the user's failing frame. */
export function scriptOf(incident: Incident): string | undefined {
  const m = /(?:^|\s)(?:"([^"]+\.py)"|'([^']+\.py)'|(\S+\.py))(?=\s|$)/.exec(incident.verify ?? "");
  const fromVerify = m ? (m[1] ?? m[2] ?? m[3]) : undefined;
  return fromVerify ?? incident.location?.file ?? undefined;
}

export function baseName(file: string): string {
  const parts = file.split(/[\\/]/);
  return parts[parts.length - 1] || file;
}

/** Whether a fix can be applied to the script by the server's `oomlens.fixScript`. */
export function applicableFix(fix: Fix): "env" | "snapshot" | "empty_cache" | undefined {
  if (fix.kind === "env" && fix.env?.name && fix.env.value !== undefined) return "env";
  const title = fix.title ?? "";
  if (/^Record a memory snapshot/i.test(title)) return "snapshot";
  if (/empty_cache\(\)/.test(title)) return "empty_cache";
  return undefined;
}

function button(label: string, action: Record<string, string | number>, primary = false): string {
  const attrs = Object.entries(action)
    .map(([k, v]) => `data-${k}="${escapeHtml(v)}"`)
    .join(" ");
  return `<button class="${primary ? "primary" : "secondary"}" ${attrs}>${escapeHtml(label)}</button>`;
}

function fixHtml(fix: Fix, incident: Incident, i: number, k: number): string {
  const safety = fix.safety ?? "display-only";
  const script = scriptOf(incident);
  const buttons: string[] = [];
  const applicable = applicableFix(fix);
  // The empty_cache advice is "do not add it": only a script that has it
  // needs the edit, and the server's source rule (OOM301) finds those.
  if (applicable && applicable !== "empty_cache")
    buttons.push(button(`Apply fix to ${script ? baseName(script) : "script"}`, { action: "applyFix", incident: i, fix: k }, safety === "safe"));
  if (applicable === "empty_cache") buttons.push(button("Check script for empty_cache()", { action: "applyFix", incident: i, fix: k }));
  if (fix.kind === "env" && fix.env?.name) buttons.push(button("Copy setting", { action: "copyFix", incident: i, fix: k }));
  if (fix.kind === "command" && fix.command) {
    buttons.push(button("Run in Terminal", { action: "runFix", incident: i, fix: k }));
    buttons.push(button("Copy", { action: "copyFix", incident: i, fix: k }));
  }
  return `<li class="fix"><span class="safety safety-${escapeHtml(safety)}">${escapeHtml(safety)}</span> <span class="fix-title">${escapeHtml(
    fix.title ?? "",
  )}</span>${fix.detail ? `<div class="detail">${escapeHtml(fix.detail)}</div>` : ""}${
    buttons.length ? `<div class="buttons">${buttons.join(" ")}</div>` : ""
  }</li>`;
}

function incidentHtml(incident: Incident, i: number): string {
  const cls = incident.class ?? "unknown";
  const where = incident.location?.file
    ? `<p class="where">in your code: <a href="#" data-action="openLocation" data-incident="${i}">${escapeHtml(incident.location.file)}:${escapeHtml(
        incident.location.line ?? "",
      )}</a>${incident.location.function ? ` in <code>${escapeHtml(incident.location.function)}</code>` : ""}</p>`
    : "";
  const arithmetic = (incident.arithmetic ?? []).map((a) => `<li>${escapeHtml(a)}</li>`).join("");
  const notes = (incident.notes ?? []).map((a) => `<li>${escapeHtml(a)}</li>`).join("");
  const fixes = (incident.fixes ?? []).map((f, k) => fixHtml(f, incident, i, k)).join("");
  const verify = incident.verify
    ? `<section class="verify"><h3>Verify</h3><pre><code>${escapeHtml(incident.verify)}</code></pre><div class="buttons">${button("Copy", {
        action: "copyVerify",
        incident: i,
      })} ${button("Run in Terminal", { action: "runVerify", incident: i })}</div></section>`
    : "";
  const lineInfo = typeof incident.line === "number" ? ` · line ${escapeHtml(incident.line)}` : "";
  return `<article class="incident class-${escapeHtml(cls)}">
<h2><span class="badge">${escapeHtml(cls)}</span> ${escapeHtml(incident.rule ?? "")} ${escapeHtml(incident.name ?? "")}</h2>
<p class="message">${escapeHtml(incident.message ?? "")}<span class="line">${lineInfo}</span> ${
    incident.rule ? button("Explain rule", { action: "explain", incident: i }) : ""
  }</p>
${where}
${memoryChartSvg(incident.breakdown, incident.numbers?.requested_bytes)}
${arithmetic ? `<h3>Why</h3><ul class="arithmetic">${arithmetic}</ul>` : ""}
${notes ? `<h3>Notes</h3><ul class="notes">${notes}</ul>` : ""}
${fixes ? `<h3>Fixes</h3><ul class="fixes">${fixes}</ul>` : ""}
${verify}
${incident.explanation ? `<details><summary>Explanation</summary>${renderMarkdownSafe(incident.explanation)}</details>` : ""}
${incident.text ? `<details><summary>The message as printed</summary><pre class="logtext">${escapeHtml(incident.text)}</pre></details>` : ""}
</article>`;
}

const STYLE = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em 2em; line-height: 1.45; }
h1 { font-size: 1.3em; } h2 { font-size: 1.15em; } h3 { font-size: 1em; margin-bottom: .3em; }
.badge { background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); border-radius: 3px; padding: 0 .4em; }
.incident { border-top: 1px solid var(--vscode-panel-border, #8884); padding-top: .5em; margin-top: 1em; }
code, pre { font-family: var(--vscode-editor-font-family); }
pre { background: var(--vscode-textCodeBlock-background, #8882); padding: .5em; overflow-x: auto; white-space: pre-wrap; word-break: break-all; }
button { margin: .2em .3em .2em 0; padding: .25em .8em; border: none; cursor: pointer; border-radius: 2px; }
button.primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
button.secondary { background: var(--vscode-button-secondaryBackground, #5554); color: var(--vscode-button-secondaryForeground, inherit); }
.safety { font-size: .85em; border: 1px solid currentColor; border-radius: 3px; padding: 0 .3em; }
.safety-safe { color: var(--vscode-testing-iconPassed, #3a3); } .safety-unsafe { color: var(--vscode-editorWarning-foreground, #c80); }
.fix { margin-bottom: .6em; } .detail { opacity: .85; font-size: .92em; }
.chart svg { max-width: 600px; } .legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: .3em 1.2em; font-size: .9em; }
.swatch { display: inline-block; width: .9em; height: .9em; margin-right: .3em; vertical-align: middle; }
.seg-alloc { fill: #3b82f6; background: #3b82f6; }
.seg-cache { fill: #f59e0b; background: #f59e0b; } .seg-nonpt { fill: #ef4444; background: #ef4444; }
.seg-other { fill: #ec4899; background: #ec4899; } .seg-free { fill: #9ca3af55; background: #9ca3af55; }
.seg-unaccounted { fill: #6b7280; background: #6b7280; }
.seg-request { fill: #10b981; background: #10b981; }
.empty { opacity: .8; }
`;

const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (e) => {
  const el = e.target.closest('[data-action]');
  if (!el) return;
  e.preventDefault();
  const msg = { type: el.dataset.action, incident: Number(el.dataset.incident) };
  if (el.dataset.fix !== undefined) msg.fix = Number(el.dataset.fix);
  vscode.postMessage(msg);
});
`;

export function renderReportHtml(result: DiagnoseResult, options: ReportPageOptions): string {
  const incidents = result.json?.incidents ?? [];
  const findings = result.json?.findings ?? [];
  const body = incidents.length
    ? incidents.map((inc, i) => incidentHtml(inc, i)).join("\n")
    : `<p class="empty">No GPU out-of-memory failure found in this text.</p>`;
  const findingsHtml = findings.length
    ? `<h2>Also found</h2><ul class="findings">${findings
        .map(
          (f) =>
            `<li><b>${escapeHtml(f.rule ?? "")}</b> ${escapeHtml(f.name ?? "")}${typeof f.line === "number" ? ` (line ${escapeHtml(f.line)})` : ""}: ${escapeHtml(
              f.message ?? "",
            )}${f.text ? `<pre class="logtext">${escapeHtml(f.text)}</pre>` : ""}</li>`,
        )
        .join("")}</ul>`
    : "";
  const csp = [
    "default-src 'none'",
    `style-src ${options.cspSource} 'nonce-${options.nonce}'`,
    `script-src 'nonce-${options.nonce}'`,
    "img-src data:",
  ].join("; ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(options.title)}</title>
<style nonce="${options.nonce}">${STYLE}</style></head>
<body>
<h1>${escapeHtml(options.title)}</h1>
<p class="summary">${escapeHtml(`${incidents.length} GPU out-of-memory failure${incidents.length === 1 ? "" : "s"}, ${findings.length} other finding${findings.length === 1 ? "" : "s"}`)} · analysed locally by oomlens, nothing uploaded</p>
${body}
${findingsHtml}
<script nonce="${options.nonce}">${SCRIPT}</script>
</body></html>`;
}
