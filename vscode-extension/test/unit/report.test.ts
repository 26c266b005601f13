// Report rendering from a recorded server response (test/fixtures/
// diagnose_response.json, written by the integration test with
// OOMLENS_RECORD=1), and escaping of everything that came from the log.
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import type { DiagnoseResult } from "../../src/contract";
import { escapeHtml, renderMarkdownSafe } from "../../src/html";
import { applicableFix, formatBytes, memorySegments, parseReportAction, renderReportHtml, scriptOf } from "../../src/report";
import { withStrictCsp } from "../../src/panels";

const recorded = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../../test/fixtures/diagnose_response.json"), "utf8")) as DiagnoseResult;
const options = { title: "oomlens: train.log", nonce: "NONCE123", cspSource: "vscode-resource:" };

describe("report rendering", () => {
  const html = renderReportHtml(recorded, options);

  it("shows the class, rule, arithmetic and verification command", () => {
    assert.match(html, /<span class="badge">fragmentation<\/span> OOM101 allocator-fragmentation/);
    assert.match(html, /reserved 77\.26 GiB − allocated 47\.12 GiB = 30\.14 GiB cached but unallocated/);
    assert.match(html, /PYTORCH_CUDA_ALLOC_CONF=&#39;expandable_segments:True&#39; python \/home\/kai\/seg3d\/train\.py/);
  });

  it("draws the memory breakdown as an SVG bar", () => {
    assert.match(html, /<svg[^>]*aria-label="memory breakdown of 79\.15 GiB"/);
    assert.match(html, /class="seg-alloc"[^>]*><title>allocated \(live tensors\): 47\.12 GiB<\/title>/);
    assert.match(html, /class="seg-cache"/);
    const segs = memorySegments(recorded.json?.incidents?.[0]?.breakdown);
    assert.deepEqual(
      segs.map((s) => s.cssClass),
      ["seg-alloc", "seg-cache", "seg-nonpt", "seg-free"],
    );
  });

  it("draws the parts the server sent, and nothing when it sent none", () => {
    const inc = recorded.json!.incidents![0]!;
    const served: DiagnoseResult = {
      json: {
        incidents: [
          {
            ...inc,
            breakdown: {
              total_bytes: 8 * 1024 ** 3,
              total_is_device: true,
              parts: [
                { kind: "allocated", label: "allocated", bytes: 6 * 1024 ** 3 },
                { kind: "unaccounted", label: "unaccounted", bytes: 1024 ** 3 },
                { kind: "a_future_kind", label: "something new", bytes: 512 * 1024 ** 2 },
              ],
            },
          },
        ],
      },
    };
    const out = renderReportHtml(served, options);
    assert.match(out, /aria-label="memory breakdown of 8\.00 GiB"/);
    assert.match(out, /<title>unaccounted: 1\.00 GiB<\/title>/);
    assert.match(out, /<title>something new: 512\.00 MiB<\/title>/);
    assert.ok(!/seg-free/.test(out.replace(/\.seg-free[^}]*}/g, "")), "no part the server did not send");
    const without = renderReportHtml({ json: { incidents: [{ ...inc, breakdown: null }] } }, options);
    assert.ok(!/<svg/.test(without), "numbers alone are not redrawn into a chart");
  });

  it("offers fixes as buttons: apply to train.py, copy, and run/copy for verification", () => {
    assert.match(html, /<button class="primary" data-action="applyFix" data-incident="0" data-fix="0">Apply fix to train\.py<\/button>/);
    assert.match(html, /data-action="copyFix" data-incident="0" data-fix="0"/);
    assert.match(html, /data-action="runVerify" data-incident="0">Run in Terminal/);
    assert.match(html, /data-action="copyVerify" data-incident="0">Copy/);
    assert.match(html, /<span class="safety safety-unsafe">unsafe<\/span>/);
  });

  it("has a strict CSP: no remote content, scripts only with the nonce", () => {
    assert.match(html, /Content-Security-Policy" content="default-src 'none'; style-src vscode-resource: 'nonce-NONCE123'; script-src 'nonce-NONCE123'/);
    const scripts = html.match(/<script[^>]*>/g) ?? [];
    assert.deepEqual(scripts, ['<script nonce="NONCE123">']);
  });

  it("renders log text containing HTML or script as text", () => {
    const hostile: DiagnoseResult = JSON.parse(JSON.stringify(recorded)) as DiagnoseResult;
    const inc = hostile.json!.incidents![0]!;
    inc.text = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`;
    inc.message = `tried to allocate <b onmouseover="x()">8 GiB</b>`;
    inc.arithmetic = ["</li><script>evil()</script>"];
    inc.explanation = "**bold** <iframe src=javascript:alert(1)> `code<script>`";
    inc.location = { file: `"><svg onload=alert(1)>.py`, line: 3, function: "<f>" };
    inc.fixes![0]!.title = "<a href=javascript:x>click</a>";
    hostile.json!.findings = [{ rule: "OOM205", message: "<script>1</script>", text: "<style>*{}</style>", line: 2 }];
    const out = renderReportHtml(hostile, options);
    assert.equal((out.match(/<script/g) ?? []).length, 1, "only the page's own script");
    assert.ok(!/<img|<iframe|<svg onload|<b onmouseover|<a href=javascript|<style>\*/.test(out));
    assert.match(out, /&lt;script&gt;alert\(&quot;pwned&quot;\)&lt;\/script&gt;/);
    assert.match(out, /<strong>bold<\/strong> &lt;iframe src=javascript:alert\(1\)&gt; <code>code&lt;script&gt;<\/code>/);
  });

  it("says so when there is no OOM", () => {
    const out = renderReportHtml({ json: { incidents: [], findings: [] } }, options);
    assert.match(out, /No GPU out-of-memory failure found/);
  });
});

describe("report helpers", () => {
  it("escapes all five HTML specials", () => {
    assert.equal(escapeHtml(`<a href="x" title='y'>&</a>`), "&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;");
  });
  it("renders lists and paragraphs of the server's Markdown", () => {
    assert.equal(renderMarkdownSafe("Intro **x**.\n\n- one\n- `two`\n"), "<p>Intro <strong>x</strong>.</p>\n<ul><li>one</li><li><code>two</code></li></ul>");
  });
  it("renders headings and fenced code, escaped", () => {
    assert.equal(
      renderMarkdownSafe("# OOM101 <x>\n\nText.\n\n```python\nif a < b:\n    torch.cuda.empty_cache()\n```\n"),
      "<h2>OOM101 &lt;x&gt;</h2>\n<p>Text.</p>\n<pre><code>if a &lt; b:\n    torch.cuda.empty_cache()</code></pre>",
    );
  });
  it("finds the script from the verification command, else the failing frame", () => {
    assert.equal(scriptOf({ verify: "PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' python /home/kai/train.py --cfg a.yaml" }), "/home/kai/train.py");
    assert.equal(scriptOf({ verify: "torchrun --nproc_per_node=4 'my dir/train.py'" }), "my dir/train.py");
    assert.equal(scriptOf({ location: { file: "/a/model.py", line: 3 } }), "/a/model.py");
  });
  it("knows which fixes the server can apply to a script", () => {
    assert.equal(applicableFix({ kind: "env", env: { name: "PYTORCH_CUDA_ALLOC_CONF", value: "expandable_segments:True" } }), "env");
    assert.equal(applicableFix({ kind: "advice", title: "Record a memory snapshot of the failing step" }), "snapshot");
    assert.equal(applicableFix({ kind: "advice", title: "Do not add torch.cuda.empty_cache() to the loop" }), "empty_cache");
    assert.equal(applicableFix({ kind: "advice", title: "Lower the batch size" }), undefined);
  });
  it("accepts only well-formed messages from the webview", () => {
    assert.deepEqual(parseReportAction({ type: "applyFix", incident: 0, fix: 1 }), { type: "applyFix", incident: 0, fix: 1 });
    assert.equal(parseReportAction({ type: "applyFix", incident: 0 }), undefined);
    assert.equal(parseReportAction({ type: "runShell", incident: 0, command: "rm -rf /" }), undefined);
    assert.equal(parseReportAction({ type: "runVerify", incident: -1 }), undefined);
    assert.equal(parseReportAction("runVerify"), undefined);
  });
  it("formats sizes as PyTorch does", () => {
    assert.equal(formatBytes(8589934592), "8.00 GiB");
    assert.equal(formatBytes(851905085), "812.44 MiB");
  });
  it("puts a strict CSP first in the snapshot page's head", () => {
    const page = withStrictCsp("<!doctype html><html><head><title>s</title></head><body><svg></svg></body></html>");
    assert.match(page, /^<!doctype html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"><title>/);
    assert.match(withStrictCsp("<svg/>"), /^<!doctype html><html><head><meta http-equiv="Content-Security-Policy"/);
  });
});
