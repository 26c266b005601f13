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
 * A small, safe subset of Markdown for the server's explanations and rule
 * pages: headings, paragraphs, "- " lists, fenced code, `code` and **bold**. The text is escaped first, so nothing the
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
    if (para.length) out.push(`<p>${inline(para.join(" "))}</p>`);
    if (list.length) out.push(`<ul>${list.map((li) => `<li>${inline(li)}</li>`).join("")}</ul>`);
    para = [];
    list = [];
  };
  let fence: string[] | undefined;
  let indented: string[] | undefined;
  const flushIndented = () => {
    if (indented) out.push(`<pre><code>${escapeHtml(indented.join("\n").replace(/\n+$/, ""))}</code></pre>`);
    indented = undefined;
  };
  for (const raw of markdown.split(/\r?\n/)) {
    const line = raw.trimEnd();
    if (/^\s*```/.test(line)) {
      if (fence) {
        out.push(`<pre><code>${escapeHtml(fence.join("\n"))}</code></pre>`);
        fence = undefined;
      } else {
        flush();
        fence = [];
      }
      continue;
    }
    if (fence) {
      fence.push(raw);
      continue;
    }
    // An indented code block: starts after a blank line (not inside a list or paragraph).
    if (indented || (!list.length && !para.length && /^( {4}|\t)/.test(raw))) {
      if (/^( {4}|\t)/.test(raw) || (!line.trim() && indented)) {
        (indented ??= []).push(raw.replace(/^( {4}|\t)/, ""));
        continue;
      }
      flushIndented();
    }
    const heading = /^(#{1,4})\s+(.*)$/.exec(line);
    if (heading) {
      flush();
      const level = Math.min(heading[1]!.length + 1, 5);
      out.push(`<h${level}>${inline(heading[2] ?? "")}</h${level}>`);
      continue;
    }
    const item = /^\s*[-*] (.*)$/.exec(line);
    if (item) {
      if (para.length) {
        out.push(`<p>${inline(para.join(" "))}</p>`);
        para = [];
      }
      list.push(item[1] ?? "");
    } else if (list.length && /^\s+\S/.test(line)) {
      // A wrapped list item continues on an indented line.
      list[list.length - 1] += ` ${line.trim()}`;
    } else if (!line.trim()) {
      flush();
    } else {
      if (list.length) flush();
      para.push(line);
    }
  }
  flush();
  flushIndented();
  if (fence) out.push(`<pre><code>${escapeHtml(fence.join("\n"))}</code></pre>`);
  return out.join("\n");
}

export function makeNonce(): string {
  const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let s = "";
  for (let i = 0; i < 32; i++) s += chars.charAt(Math.floor(Math.random() * chars.length));
  return s;
}
