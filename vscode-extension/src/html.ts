// HTML escaping for webview content. Every string that came from the server
// (and so from a log someone else may have written) passes through here.

export function escapeHtml(value: string | number | boolean | null | undefined): string {
  return String(value ?? "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/**
 * A small, safe subset of Markdown for the server's explanations: paragraphs,
 * "- " lists, `code` and **bold**. The text is escaped first, so nothing the
 * server sends can become markup.
 */
export function renderMarkdownSafe(markdown: string): string {
  const inline = (s: string) =>
    escapeHtml(s)
      .replace(/`([^`]+)`/g, "<code>$1</code>")
      .replace(/\*\*([^*]+)\*\*/g, "<strong>$1</strong>");
  const out: string[] = [];
  let list: string[] = [];
  let para: string[] = [];
  const flush = () => {
    if (para.length) out.push(`<p>${para.map(inline).join(" ")}</p>`);
    if (list.length) out.push(`<ul>${list.map((li) => `<li>${inline(li)}</li>`).join("")}</ul>`);
    para = [];
    list = [];
  };
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trimEnd();
    const item = /^\s*[-*] (.*)$/.exec(line);
    if (item) {
      if (para.length) {
        out.push(`<p>${para.map(inline).join(" ")}</p>`);
        para = [];
      }
      list.push(item[1] ?? "");
    } else if (!line.trim()) {
      flush();
    } else {
      if (list.length) flush();
      para.push(line.replace(/^#+\s*/, ""));
    }
  }
  flush();
  return out.join("\n");
}

export function makeNonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}
