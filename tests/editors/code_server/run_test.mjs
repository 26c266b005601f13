// The extension in a real VS Code: code-server (VS Code in the browser, from
// the npm registry) driven in Debian's Chromium by playwright-core.
//
//   node run_test.mjs --code-server BIN --vsix FILE --artifacts DIR
//
// Installs the .vsix (which bundles the oomlens binary), opens a workspace with
// a fixture log and a training script, and checks that
//   1. the log's diagnostics (OOM101) reach the Problems panel,
//   2. a quick fix on the log runs: "Run the verification command" opens a
//      terminal named for it (the extension's executeCommand middleware),
//   3. "oomlens: Diagnose Selection" opens the report beside the editor,
//   4. when the server has its Python rules: OOM301 on the script, and the
//      quick fix "Remove the `torch.cuda.empty_cache()` call" edits it,
//   5. the snapshot view shows the verdict, its figures and the pictures
//      (two runs compared: both peaks and the sites that grew and shrank; a
//      folder of ranks: the highest rank and the imbalance),
//      and a script's lines show the memory they held at the snapshot's peak,
//   6. a Jupyter notebook's Python cell gets OOM301 through the notebook
//      sync, and the same quick fix edits that cell (and only that cell).
// What the extension saw is read from OOMLENS_VSCODE_TEST_STATE (a file the
// extension writes in test runs); screenshots go to the artifacts folder.
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../../..");
const require = createRequire(path.join(repo, "vscode-extension", "package.json"));
const { chromium } = require("playwright-core");

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : fallback;
}
const codeServer = arg("code-server");
const vsix = arg("vsix");
const artifacts = path.resolve(arg("artifacts", path.join(repo, "build/ci-artifacts")));
const chromiumPath = arg("chromium", "/usr/bin/chromium");
if (!codeServer || !vsix) {
  console.error("usage: run_test.mjs --code-server BIN --vsix FILE [--artifacts DIR]");
  process.exit(2);
}
fs.mkdirSync(artifacts, { recursive: true });

const started = Date.now();
const log = (msg) => console.log(`[code-server test ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
const results = [];
function check(name, ok, detail = "") {
  results.push({ name, ok, detail });
  log(`${ok ? "PASS" : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "oomlens-code-server-"));
const userData = path.join(tmp, "user-data");
const extensions = path.join(tmp, "extensions");
const workspace = path.join(tmp, "workspace");
const statePath = path.join(tmp, "state.json");
const browserProfile = path.join(tmp, "chromium");
for (const d of [path.join(userData, "User"), extensions, workspace, browserProfile]) fs.mkdirSync(d, { recursive: true });

const logName = "pytorch26_fragmentation.log";
const scriptName = "empty_cache_in_loop.py";
fs.copyFileSync(path.join(repo, "fixtures/logs", logName), path.join(workspace, logName));
fs.copyFileSync(path.join(repo, "fixtures/scripts", scriptName), path.join(workspace, scriptName));
// The traceback names /home/kai/seg3d/train.py: the extension finds the
// workspace's seg3d/train.py by its path suffix.
fs.mkdirSync(path.join(workspace, "seg3d"));
fs.writeFileSync(path.join(workspace, "seg3d", "train.py"), "import torch\n\n\ndef main():\n    model = torch.nn.Linear(8, 8).cuda()\n\n\nif __name__ == \"__main__\":\n    main()\n");
const notebookName = "train.ipynb";
fs.copyFileSync(path.join(repo, "fixtures/notebooks", notebookName), path.join(workspace, notebookName));
const snapshotName = "fragmentation_p4.pickle";
// A snapshot of train_lines.py's run, whose frames name the script relative
// to the folder it ran in (here the workspace).
const linesSnapshotName = "script_lines_p4.pickle";
const linesScriptName = "train_lines.py";
fs.copyFileSync(path.join(repo, "fixtures/snapshots", linesSnapshotName), path.join(workspace, linesSnapshotName));
fs.copyFileSync(path.join(repo, "fixtures/snapshots/script_lines", linesScriptName), path.join(workspace, linesScriptName));
fs.copyFileSync(path.join(repo, "fixtures/snapshots", snapshotName), path.join(workspace, snapshotName));
// Two runs to compare, and a folder of per-rank snapshots.
const compareNames = ["compare_before_p4.pickle", "compare_after_p4.pickle"];
for (const name of compareNames) fs.copyFileSync(path.join(repo, "fixtures/snapshots", name), path.join(workspace, name));
const ranksName = "job_ranks";
fs.cpSync(path.join(repo, "fixtures/snapshots", ranksName), path.join(workspace, ranksName), { recursive: true });
// A traceback pasted into notes: not a log the server watches, so a diagnosed
// selection gets its own diagnostics.
const notesName = "notes.md";
fs.writeFileSync(path.join(workspace, notesName), "# Friday's run\n\nIt died with:\n\n" + fs.readFileSync(path.join(repo, "fixtures/logs", logName), "utf8").split("\n").slice(7).join("\n") + "\nTODO: look at this.\n");
const notesUri = pathToFileURL(path.join(workspace, notesName)).toString();
const trainUri = pathToFileURL(path.join(workspace, "seg3d", "train.py")).toString();
const logUri = pathToFileURL(path.join(workspace, logName)).toString();
const scriptUri = pathToFileURL(path.join(workspace, scriptName)).toString();

fs.writeFileSync(
  path.join(userData, "User", "settings.json"),
  JSON.stringify(
    {
      "chat.disableAIFeatures": true,
      "security.workspace.trust.enabled": false,
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.welcomePage.walkthroughs.openOnInstall": false,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "update.mode": "none",
      "editor.lightbulb.enabled": "off",
      "python.languageServer": "None",
      "terminal.integrated.shellIntegration.enabled": true,
      "oomlens.watchTerminals": true,
    },
    null,
    1,
  ),
);
const config = path.join(tmp, "config.yaml");
fs.writeFileSync(config, "auth: none\ncert: false\n");

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on("error", reject);
  });
}

function readState() {
  try {
    return JSON.parse(fs.readFileSync(statePath, "utf8"));
  } catch {
    return { diagnostics: {}, documents: {}, events: [] };
  }
}

async function waitFor(what, cond, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await cond();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let server;
let context;
let page;
async function shot(name) {
  if (!page) return;
  const file = path.join(artifacts, name);
  await page.screenshot({ path: file }).catch((e) => log(`screenshot ${name} failed: ${e.message}`));
  log(`screenshot: ${file}`);
}

async function runCommand(title) {
  // On a busy machine the palette can close again before it takes the text
  // (a late focus change): then open it once more.
  for (let attempt = 1; ; attempt++) {
    try {
      await page.keyboard.press("F1");
      const input = page.locator(".quick-input-widget input");
      await input.waitFor({ state: "visible", timeout: 10000 });
      await input.fill(`>${title}`, { timeout: 10000 });
      await page.locator(".quick-input-list .monaco-list-row", { hasText: title }).first().waitFor({ timeout: 10000 });
      break;
    } catch (e) {
      if (attempt === 2) throw e;
      log(`the command palette did not take "${title}"; opening it again`);
      await page.keyboard.press("Escape");
      await page.waitForTimeout(1000);
    }
  }
  await page.keyboard.press("Enter");
}

async function openFile(name) {
  // Quick Open finds files through a file search that, just after the
  // workbench appears on a busy machine, may not have indexed the workspace
  // yet; its list does not refresh by itself, so ask again as a user would.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+P");
    const input = page.locator(".quick-input-widget input");
    await input.waitFor({ state: "visible", timeout: 10000 });
    await input.fill(name);
    const found = await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 15000 }).then(() => true, () => false);
    if (found) break;
    if (attempt === 3) throw new Error(`Quick Open did not list ${name}`);
    log(`Quick Open did not list ${name} yet; asking again`);
    await page.keyboard.press("Escape");
    await page.waitForTimeout(2000);
  }
  await page.keyboard.press("Enter");
  await page.locator(".tab", { hasText: name }).first().waitFor({ timeout: 15000 });
}

async function goToLine(line) {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible", timeout: 10000 });
  await input.fill(`:${line}`);
  await page.keyboard.press("Enter");
}

/** Opens the quick-fix menu at the cursor and picks the entry with this text. */
async function applyQuickFix(text) {
  await page.locator(".monaco-editor textarea").first().focus();
  const item = page.locator(".action-widget .monaco-list-row", { hasText: text }).first();
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press("Control+.");
    // The first request can race the server's analysis of a just-opened file: ask again once.
    if (await item.waitFor({ state: "visible", timeout: 10000 }).then(() => true, () => false)) break;
    if (attempt === 2) throw new Error(`no quick fix "${text}" offered`);
    await page.keyboard.press("Escape");
    await page.waitForTimeout(1000);
  }
  const titles = await page.locator(".action-widget .monaco-list-row").allInnerTexts();
  log(`quick fixes offered: ${titles.map((t) => t.replace(/\s+/g, " ").trim()).join(" | ")}`);
  // Keyboard, as a user would: a pointer-block layer covers the menu for clicks.
  for (let i = 0; i < 30; i++) {
    const focused = await page.locator(".action-widget .monaco-list-row.focused").first().innerText().catch(() => "");
    if (focused.includes(text)) break;
    await page.keyboard.press("ArrowDown");
  }
  await page.keyboard.press("Enter");
}

/** "Analyze Memory Snapshot" from the explorer's context menu on a file; resolves to the snapshot event. */
async function analyzeSnapshotFromExplorer(name) {
  const before = readState().events.filter((e) => e.startsWith("snapshot:")).length;
  await page.locator(".explorer-folders-view .monaco-list-row", { hasText: name }).first().click({ button: "right" });
  const menuItem = page.locator(".context-view .action-item", { hasText: "Analyze Memory Snapshot" }).first();
  await menuItem.hover({ timeout: 10000 });
  await page.keyboard.press("Enter"); // clicks land on the menu's pointer-block layer
  return waitFor(`the snapshot report of ${name}`, () => readState().events.filter((e) => e.startsWith("snapshot:"))[before], 20000).catch(() => undefined);
}

/** "Compare Memory Snapshots…" on two files selected in the explorer; resolves to the compare event. */
// The menu offers the command only with both files selected. The first click
// opens a file, and the editor it opens can take the focus while the
// Control-click lands, leaving one file selected (CI saw it): the selection
// is checked, and made again, before the menu is read.
async function compareSnapshotsFromExplorer(a, b) {
  const before = readState().events.filter((e) => e.startsWith("compare:")).length;
  const rowA = page.locator(".explorer-folders-view .monaco-list-row", { hasText: a }).first();
  const rowB = page.locator(".explorer-folders-view .monaco-list-row", { hasText: b }).first();
  const menuItem = page.locator(".context-view .action-item", { hasText: "Compare Memory Snapshots" }).first();
  for (let attempt = 1; ; attempt++) {
    await rowA.click();
    await rowB.click({ modifiers: ["Control"] });
    const both = await waitFor(`${a} and ${b} selected`, async () =>
      (await page.locator(".explorer-folders-view .monaco-list-row.selected").count()) >= 2, 3000).catch(() => false);
    if (both) {
      await rowB.click({ button: "right" });
      const shown = await menuItem.hover({ timeout: 5000 }).then(() => true, () => false);
      if (shown) break;
    }
    await page.keyboard.press("Escape");
    if (attempt === 3) throw new Error(`the explorer did not offer Compare Memory Snapshots for ${a} and ${b}`);
  }
  await page.keyboard.press("Enter");
  return waitFor(`the comparison of ${a} and ${b}`, () => readState().events.filter((e) => e.startsWith("compare:"))[before], 20000).catch(() => undefined);
}

/** The text and pictures of the webview whose page heading includes `heading`. */
function webviewWithHeading(heading) {
  return waitFor(`the view headed "${heading}"`, async () => {
    for (const frame of page.frames()) {
      const title = (await frame.locator("h1").allInnerTexts().catch(() => [])).join(" ");
      if (!title.includes(heading)) continue;
      const text = await frame.locator("body").innerText().catch(() => "");
      const pictures = await frame.locator("svg[role=img]").evaluateAll((svgs) => svgs.map((e) => e.getAttribute("aria-label"))).catch(() => []);
      return { text, pictures };
    }
    return undefined;
  }, 15000).catch(() => undefined);
}

/** Starts code-server on a free port and opens the workspace in a fresh Chromium page. */
async function openSession(logFile) {
  const port = await freePort();
  log(`starting code-server on 127.0.0.1:${port}`);
  server = spawn(
    codeServer,
    [
      "--auth", "none", "--bind-addr", `127.0.0.1:${port}`, "--disable-telemetry", "--disable-update-check",
      "--disable-workspace-trust", "--extensions-dir", extensions, "--user-data-dir", userData, "--config", config, workspace,
    ],
    { env: { ...process.env, OOMLENS_VSCODE_TEST_STATE: statePath, PATH: "/usr/bin:/bin" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  const serverLog = fs.createWriteStream(path.join(artifacts, logFile));
  server.stdout.pipe(serverLog);
  server.stderr.pipe(serverLog);
  await waitFor(
    "code-server to listen",
    () => new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => { s.destroy(); resolve(true); });
      s.on("error", () => resolve(false));
    }),
    60000,
  );
  context = await chromium.launchPersistentContext(browserProfile, {
    executablePath: chromiumPath,
    headless: true,
    viewport: { width: 1600, height: 1000 },
    // The terminal's selection reaches the extension through the clipboard.
    permissions: ["clipboard-read", "clipboard-write"],
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 60000 });
  log("workbench visible");
}

async function closeSession() {
  await context?.close().catch(() => undefined);
  context = undefined;
  page = undefined;
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once("exit", r));
    server.kill("SIGTERM");
    await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  }
  server = undefined;
}

let exitCode = 1;
try {
  const binary = path.join(extensions, "oomlens.oomlens-0.1.0-linux-x64", "bin", "oomlens");
  log(`installing ${vsix}`);
  const install = spawnSync(codeServer, ["--extensions-dir", extensions, "--user-data-dir", userData, "--install-extension", vsix], {
    encoding: "utf8",
    timeout: 120000,
  });
  check("the .vsix installs into code-server", install.status === 0, (install.stdout + install.stderr).trim().split("\n").pop());
  if (install.status !== 0) throw new Error("install failed");
  const installedBinary = fs.readdirSync(extensions).map((d) => path.join(extensions, d, "bin", "oomlens")).find((f) => fs.existsSync(f));
  check("the .vsix bundles the oomlens binary", Boolean(installedBinary), installedBinary ?? binary);

  await openSession("code-server.log");

  // 1. The log's diagnostics reach the extension and the Problems panel.
  await openFile(logName);
  const logDiags = await waitFor("OOM101 on the log", () => readState().diagnostics[logUri]?.find((d) => d.code === "OOM101"), 60000).catch((e) => (check("the log gets OOM101", false, e.message), undefined));
  if (logDiags) check("the log gets OOM101 from the server", true, `line ${logDiags.line + 1}: ${logDiags.message}`);
  await page.keyboard.press("Control+Shift+M");
  const problemRow = page.locator(".markers-panel .monaco-list-row", { hasText: "OOM101" }).first();
  const inPanel = await problemRow.waitFor({ timeout: 30000 }).then(() => true, () => false);
  const rows = await page.locator(".markers-panel .monaco-list-row").count();
  check("the Problems panel shows OOM101", inPanel, `${rows} rows in the Problems panel`);
  await shot("code-server-problems.png");

  // 1b. The server's hover on the OOM line: the arithmetic (the threshold is
  // in the hover's "why", not in the diagnostic's message).
  if (logDiags) {
    await goToLine(logDiags.line + 1);
    await runCommand("Show or Focus Hover");
    const hover = await waitFor("the hover", async () => {
      const text = (await page.locator(".monaco-hover").allInnerTexts()).join("\n");
      return text.includes("threshold 10%") ? text : undefined;
    }, 15000).catch(() => undefined);
    check("hovering the OOM line shows the diagnosis with its arithmetic", Boolean(hover),
      hover ? hover.split("\n").find((l) => l.includes("threshold")) : "no hover with the arithmetic");
    await shot("code-server-hover.png");
    await page.keyboard.press("Escape");
  }

  // 2. A quick fix on the log: the server's "run" command is carried out by the extension in a terminal.
  if (logDiags) {
    await page.locator(".editor-instance .monaco-editor").first().click();
    await goToLine(logDiags.line + 1);
    await applyQuickFix("Run the verification command");
    const ran = await waitFor("the verification command to run", () => readState().events.find((e) => e.startsWith("ran:")), 20000).catch(() => undefined);
    const terminalTab = await page.locator(".terminal-tabs-entry, .single-terminal-tab, .terminal-tab", { hasText: "oomlens verify" }).count().catch(() => 0);
    check("the log's quick fix runs the verification command in a terminal", Boolean(ran), `${ran ?? "no run event"}; terminal tabs named for it: ${terminalTab}`);
  }

  // 3. Diagnose Selection opens the report beside the editor.
  await page.locator(".tab", { hasText: logName }).first().click();
  await page.locator(".editor-instance .monaco-editor").first().click();
  await page.keyboard.press("Control+A");
  await runCommand("oomlens: Diagnose Selection");
  const report = await waitFor("the report", () => readState().events.find((e) => e.startsWith("report:")), 30000).catch(() => undefined);
  const reportTab = await page.locator(".tab", { hasText: `oomlens: ${logName}` }).first().waitFor({ timeout: 15000 }).then(() => true, () => false);
  check("Diagnose Selection opens the report beside the editor", report === "report:1" && reportTab, `${report ?? "no report event"}, tab ${reportTab}`);
  await page.waitForTimeout(1500); // let the webview paint
  await shot("code-server-report.png");

  // 3b. The report's "Apply fix to train.py" edits the script through the server's oomlens.fixScript.
  const serverCommands = (readState().events.find((e) => e.startsWith("server-started:")) ?? "").split(":")[1]?.split(",") ?? [];
  if (!serverCommands.includes("oomlens.fixScript")) {
    check("Apply fix to train.py (skipped: this oomlens has no oomlens.fixScript)", true, "SKIP");
  } else {
    const webview = page.frameLocator("iframe.webview.ready").frameLocator("#active-frame");
    await webview.locator("button", { hasText: "Apply fix to train.py" }).first().click({ timeout: 15000 });
    const edited = await waitFor("train.py to get the allocator setting", () => {
      const text = readState().documents[trainUri];
      return text && text.includes("PYTORCH_CUDA_ALLOC_CONF") ? text : undefined;
    }, 20000).catch(() => undefined);
    check("the report's \"Apply fix to train.py\" edits seg3d/train.py", Boolean(edited), edited ? edited.split("\n").filter((l) => l.includes("PYTORCH_CUDA_ALLOC_CONF")).join(" / ") : "no edit");
    await shot("code-server-apply-fix.png");
  }

  // 3c. A memory snapshot from the explorer's context menu.
  if (!serverCommands.includes("oomlens.analyzeSnapshot")) {
    check("Analyze Memory Snapshot (skipped: this oomlens has no oomlens.analyzeSnapshot)", true, "SKIP");
  } else {
    const snap = await analyzeSnapshotFromExplorer(snapshotName);
    const snapTab = await page.locator(".tab", { hasText: `oomlens: ${snapshotName}` }).first().waitFor({ timeout: 10000 }).then(() => true, () => false);
    check("Analyze Memory Snapshot (explorer context menu) shows the snapshot report", Boolean(snap) && snapTab, `${snap ?? "no snapshot event"}, tab ${snapTab}`);
    // What the view shows, as a person reads it: the verdict with its
    // figures, and the pictures (the request against the largest free
    // block, memory over the trace, the segment map), drawn as SVG.
    const view = await waitFor("the snapshot view's content", async () => {
      for (const frame of page.frames()) {
        const title = (await frame.locator("h1").allInnerTexts().catch(() => [])).join(" ");
        if (!title.includes("Memory snapshot")) continue;
        const text = await frame.locator("body").innerText().catch(() => "");
        const pictures = await frame.locator("svg[role=img]").evaluateAll((svgs) => svgs.map((e) => e.getAttribute("aria-label"))).catch(() => []);
        return { text, pictures };
      }
      return undefined;
    }, 15000).catch(() => undefined);
    const verdict = view?.text.split("\n").find((l) => l.startsWith("Out of memory on device")) ?? "";
    check("the snapshot view shows the verdict with its figures and the memory pictures",
      verdict.includes("fragmentation") && view.text.includes("72.07 GiB") && view.text.includes("4.00 GiB") &&
        ["requested versus largest free block", "memory over the trace, device 0", "segment map"].every((p) => view.pictures.includes(p)),
      view ? `${verdict || "no verdict line"}; pictures: ${view.pictures.join(", ")}` : "no snapshot view content");
    await page.waitForTimeout(1500);
    await shot("code-server-snapshot.png");

    // 3d. Memory on the user's lines: with the snapshot of train_lines.py's
    // run analysed, the script's lines show what they allocated that was
    // alive at the peak (inlay hints at the line ends, as the editor draws them).
    await openFile(linesScriptName);
    const linesSnap = await analyzeSnapshotFromExplorer(linesSnapshotName);
    const hinted = await waitFor("memory hints on train_lines.py", async () => {
      const lines = (await page.locator(".editor-instance .view-line").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
      const shown = lines.filter((l) => l.includes("at peak"));
      return shown.length >= 4 ? shown : undefined;
    }, 20000).catch(() => undefined);
    check("the script's lines show the memory they allocated that was alive at the snapshot's peak",
      Boolean(linesSnap) && Boolean(hinted?.some((l) => l.includes("out = model(batch)") && l.includes("+6.00 GiB at peak, 3 blocks"))),
      hinted ? hinted.join(" | ") : `${linesSnap ?? "no snapshot event"}; no line shows "at peak"`);
    await shot("code-server-snapshot-lines.png");
  }

  // 3e. Two runs compared (two snapshots selected in the explorer), and a
  // folder of per-rank snapshots analysed: what each page shows.
  if (!serverCommands.includes("oomlens.compareSnapshots")) {
    check("Compare Memory Snapshots (skipped: this oomlens has no oomlens.compareSnapshots)", true, "SKIP");
  } else {
    const [a, b] = compareNames;
    const compared = await compareSnapshotsFromExplorer(a, b);
    const compareTab = await page.locator(".tab", { hasText: `oomlens: ${a} ↔ ${b}` }).first().waitFor({ timeout: 10000 }).then(() => true, () => false);
    check("Compare Memory Snapshots (two selected in the explorer) opens a tab naming both", Boolean(compared) && compareTab, `${compared ?? "no compare event"}, tab ${compareTab}`);
    const view = await webviewWithHeading("Two memory snapshots compared");
    const peaks = view?.text.split("\n").find((l) => l.startsWith("peak allocated")) ?? "";
    const grew = view?.text.split("\n").find((l) => l.startsWith("+2.00 GiB")) ?? "";
    const shrank = view?.text.split("\n").find((l) => l.startsWith("-12.00 GiB")) ?? "";
    check("the comparison shows both runs' peaks, both curves on one axis, and the sites that grew and shrank",
      peaks.includes("42.01 GiB") && peaks.includes("32.01 GiB") && grew.includes("0 bytes → 2.00 GiB") &&
        shrank.includes("18.00 GiB → 6.00 GiB") && view.text.includes("model.py:88") &&
        view.pictures.includes("memory over the traces, on one axis"),
      view ? `${peaks || "no peak row"}; grew ${grew || "none"}; shrank ${shrank || "none"}; pictures: ${view.pictures.join(", ")}` : "no comparison view content");
    await page.waitForTimeout(1500);
    await shot("code-server-snapshot-compare.png");

    // One click on the folder first: the two files are no longer selected.
    await page.locator(".explorer-folders-view .monaco-list-row", { hasText: ranksName }).first().click();
    const job = await analyzeSnapshotFromExplorer(ranksName);
    const jobView = await webviewWithHeading(`${ranksName}: 4 ranks`); // "Job /abs/.../job_ranks: 4 ranks"
    const highest = jobView?.text.split("\n").find((l) => l.startsWith("Highest peak")) ?? "";
    check("Analyze Memory Snapshot on a folder of ranks shows the ranks, the highest and the imbalance",
      Boolean(job) && highest.includes("rank 2") && highest.includes("44.01 GiB") && Boolean(jobView?.text.includes("Imbalance: 1.16")) &&
        jobView.pictures.filter((p) => p === "memory over the trace").length === 4,
      jobView ? `${highest || "no highest line"}; ${jobView.pictures.length} pictures` : `${job ?? "no snapshot event"}; no job view content`);
    await shot("code-server-snapshot-ranks.png");
  }

  // 3d. Diagnose Selection in a document the server does not analyse: the selection gets diagnostics.
  await openFile(notesName);
  await page.locator(".editor-instance .monaco-editor").first().click();
  await goToLine(5);
  await page.keyboard.press("Shift+Control+End");
  await runCommand("oomlens: Diagnose Selection");
  const notesDiag = await waitFor("diagnostics on the selection", () => readState().diagnostics[notesUri]?.find((d) => d.code === "OOM101"), 20000).catch(() => undefined);
  // The log's line 31 is the OOM; notes.md holds log lines 8.. from its line 5, so it is line 28.
  check("a diagnosed selection in notes.md gets an OOM101 diagnostic at the OOM line", notesDiag?.line === 27, notesDiag ? `line ${notesDiag.line + 1}` : "none");

  // 4. Watched terminals: a command that ends with a GPU OOM gets a notification.
  await runCommand("Terminal: Create New Terminal");
  await page.locator(".terminal-wrapper.active .xterm, .terminal .xterm").first().waitFor({ timeout: 15000 });
  // Commands are watched once the shell's integration has reported in.
  const integrations = readState().events.filter((e) => e.startsWith("shell-integration:")).length;
  await waitFor("shell integration in the new terminal", () => readState().events.filter((e) => e.startsWith("shell-integration:")).length > integrations, 20000).catch(() => log("no shell-integration event; typing anyway"));
  await page.waitForTimeout(500);
  // A command typed before the shell's integration is active is not watched
  // (VS Code reports no execution for it), and on a busy machine the
  // integration can report in after the wait above: then the command is typed
  // once more, as a user would run it again.
  let watched;
  for (let attempt = 1; attempt <= 2 && !watched; attempt++) {
    if (attempt > 1) log("no terminal-oom event after the first command; running it again");
    await page.keyboard.type(`cat ${logName}; false\n`, { delay: 5 });
    watched = await waitFor("the terminal watcher", () => readState().events.find((e) => e.startsWith("terminal-oom:")), attempt === 1 ? 20000 : 30000).catch(() => undefined);
  }
  const toast = await page.locator(".notifications-toasts .notification-toast", { hasText: "ran out of GPU memory" }).first().waitFor({ timeout: 10000 }).then(() => true, () => false);
  check("a watched terminal command that ends with a GPU OOM gets a notification", Boolean(watched) && toast, `${watched ?? "no terminal-oom event"}, notification ${toast}`);
  await shot("code-server-terminal.png");

  // 4b. Diagnose Terminal Selection on the same output.
  const reportsBefore = readState().events.filter((e) => e.startsWith("report:")).length;
  await runCommand("Terminal: Select All");
  await runCommand("oomlens: Diagnose Terminal Selection");
  const termReport = await waitFor("the terminal selection report", () => readState().events.filter((e) => e.startsWith("report:")).length > reportsBefore, 20000).catch(() => false);
  const termEvents = readState().events;
  check("Diagnose Terminal Selection opens a report with the OOM", termReport && termEvents.filter((e) => e.startsWith("report:")).pop() === "report:1",
    `${termEvents.filter((e) => e.startsWith("terminal-selection:")).pop() ?? "no selection read"} chars, ${termEvents.filter((e) => e.startsWith("report:")).pop()}`);

  // 4c. Verify Fix runs the report's verification command (after the user confirms it) in a terminal.
  const runsBefore = readState().events.filter((e) => e.startsWith("ran:")).length;
  await runCommand("oomlens: Verify Fix");
  const verifyInput = page.locator(".quick-input-widget input");
  await verifyInput.waitFor({ state: "visible", timeout: 10000 });
  const proposed = await verifyInput.inputValue();
  await page.keyboard.press("Enter");
  const verified = await waitFor("Verify Fix to run", () => readState().events.filter((e) => e.startsWith("ran:")).length > runsBefore, 15000).catch(() => false);
  check("Verify Fix proposes the verification command and runs it in a terminal", verified && proposed.includes("expandable_segments:True"), proposed);

  // 4d. Restart Server starts a new server, which analyses the open documents again.
  await runCommand("oomlens: Restart Server");
  const restarted = await waitFor("the restart", () => readState().events.filter((e) => e.startsWith("server-started:")).length >= 2, 20000).catch(() => false);
  check("Restart Server starts the server again", restarted);

  // 5. The training script: OOM301 and its quick fix, when the server has the Python rules.
  await openFile(scriptName);
  const pyDiag = await waitFor("OOM301 on the script", () => readState().diagnostics[scriptUri]?.find((d) => d.code === "OOM301"), 30000).catch(() => undefined);
  // Python diagnostics came with oomlens.fixScript: a server that lists it must report OOM301.
  if (!pyDiag && !serverCommands.includes("oomlens.fixScript")) {
    check("the script gets OOM301 (skipped: this oomlens has no Python diagnostics in the LSP yet)", true, "SKIP");
  } else if (!pyDiag) {
    check("the script gets OOM301", false, "no OOM301 within 30 s");
  } else {
    check("the script gets OOM301", true, `line ${pyDiag.line + 1}: ${pyDiag.message}`);
    const before = readState().documents[scriptUri] ?? fs.readFileSync(path.join(workspace, scriptName), "utf8");
    await page.locator(".editor-instance .monaco-editor").first().click();
    await goToLine(pyDiag.line + 1);
    await applyQuickFix("Remove the `torch.cuda.empty_cache()` call");
    const after = await waitFor("the script to change", () => {
      const text = readState().documents[scriptUri];
      return text !== undefined && text !== before ? text : undefined;
    }, 20000).catch(() => undefined);
    const expected = fs.readFileSync(path.join(repo, "fixtures/scripts", scriptName.replace(/\.py$/, ".fixed.py")), "utf8");
    check("the OOM301 quick fix edits the script as the fixture expects", after === expected, after === undefined ? "no edit" : after === expected ? "matches the .fixed.py fixture" : `got:\n${after}`);
    await page.keyboard.press("Control+Shift+M");
    await page.waitForTimeout(1000);
    await shot("code-server-python.png");
  }
  // 5b. A notebook: the cells are synchronised as a notebook document; the
  // training cell gets OOM301 and its quick fix edits that cell.
  if (!serverCommands.includes("oomlens.fixScript")) {
    check("the notebook's training cell gets OOM301 (skipped: this oomlens has no Python rules)", true, "SKIP");
  } else {
    await openFile(notebookName);
    const isCell = (uri) => uri.startsWith("vscode-notebook-cell:") && uri.includes(notebookName);
    const cellDiag = await waitFor("OOM301 on a notebook cell", () => {
      const entry = Object.entries(readState().diagnostics).find(([uri, list]) => isCell(uri) && list.some((d) => d.code === "OOM301"));
      return entry ? { uri: entry[0], diag: entry[1].find((d) => d.code === "OOM301") } : undefined;
    }, 45000).catch(() => undefined);
    check("the notebook's training cell gets OOM301 at the empty_cache line", cellDiag?.diag.line === 4,
      cellDiag ? `cell line ${cellDiag.diag.line + 1}: ${cellDiag.diag.message}` : `no OOM301 on a cell; diagnostics on: ${Object.keys(readState().diagnostics).join(", ")}`);
    await shot("code-server-notebook.png");
    if (cellDiag) {
      const fixedCells = JSON.parse(fs.readFileSync(path.join(repo, "fixtures/notebooks", notebookName.replace(/\.ipynb$/, ".fixed.ipynb")), "utf8")).cells;
      const expected = [].concat(fixedCells[2].source).join("");
      const cellsBefore = Object.fromEntries(Object.entries(readState().documents).filter(([uri]) => isCell(uri)));
      // The cursor on the call inside the cell, as a user clicks there; then
      // the quick fix menu at the cursor. The notebook may still be laying
      // out its cells when the diagnostic arrives, and a click on a cell not
      // yet holding its editor leaves the focus outside it, where Ctrl+. does
      // nothing: each attempt clicks again and says where the focus was.
      const item = page.locator(".action-widget .monaco-list-row", { hasText: "Remove the `torch.cuda.empty_cache()` call" }).first();
      let offered = false;
      const misses = [];
      for (let attempt = 1; attempt <= 3 && !offered; attempt++) {
        await page.locator(".notebook-editor .view-line", { hasText: "empty_cache" }).first().click({ timeout: 15000, position: { x: 2, y: 5 } });
        await page.keyboard.press("End");
        await page.waitForTimeout(500);
        const focus = await page.evaluate(() => {
          const el = document.activeElement;
          return el?.closest(".notebook-editor .monaco-editor") ? "in the cell's editor" : `on ${el?.tagName ?? "nothing"}.${el?.className ?? ""}`;
        });
        await page.keyboard.press("Control+.");
        offered = await item.waitFor({ state: "visible", timeout: 8000 }).then(() => true, () => false);
        if (!offered) {
          const menu = await page.locator(".action-widget").allInnerTexts().catch(() => []);
          misses.push(`attempt ${attempt}: focus ${focus}, menu ${JSON.stringify(menu.join(" | ").replace(/\s+/g, " ").trim())}`);
          await page.keyboard.press("Escape");
          await page.waitForTimeout(1000);
        }
      }
      if (misses.length) log(`notebook quick fix: ${misses.join("; ")}`);
      if (offered) {
        for (let i = 0; i < 30; i++) {
          const focused = await page.locator(".action-widget .monaco-list-row.focused").first().innerText().catch(() => "");
          if (focused.includes("empty_cache")) break;
          await page.keyboard.press("ArrowDown");
        }
        await page.keyboard.press("Enter");
      }
      const cellAfter = await waitFor("the cell to change", () => {
        const text = readState().documents[cellDiag.uri];
        return text !== undefined && text !== cellsBefore[cellDiag.uri] ? text : undefined;
      }, 20000).catch(() => undefined);
      const othersKept = Object.entries(cellsBefore).every(([uri, text]) => uri === cellDiag.uri || readState().documents[uri] === text);
      check("the notebook quick fix removes the call from that cell only, as the fixed notebook fixture has it",
        offered && cellAfter === expected && othersKept,
        !offered ? `no quick fix offered in the cell (${misses.join("; ")})` : cellAfter === undefined ? "no edit" : cellAfter === expected ? `matches; other cells kept: ${othersKept}` : `got:\n${cellAfter}`);
      await shot("code-server-notebook-fixed.png");
    }
  }
  await shot("code-server.png");

  // 6. A second session with a binary that crashes at once: a clear message naming oomlens.path.
  await closeSession();
  const crasher = path.join(tmp, "crashing-oomlens");
  fs.writeFileSync(crasher, "#!/bin/sh\necho 'oomlens: simulated crash' >&2\nexit 3\n", { mode: 0o755 });
  const settingsFile = path.join(userData, "User", "settings.json");
  fs.writeFileSync(settingsFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(settingsFile, "utf8")), "oomlens.path": crasher }, null, 1));
  await openSession("code-server-crash.log");
  const crashToast = page.locator(".notifications-toasts .notification-toast", { hasText: "oomlens.path" }).first();
  let crashShown = await crashToast.waitFor({ timeout: 45000 }).then(() => true, () => false);
  if (!crashShown) {
    // A clean-clone run once saw no message at all in 45 s: the extension
    // had started (its state file was rewritten) but the client's start was
    // left pending. The extension now says so after 20 s; should it start
    // late instead, opening the log is its other trigger, as a user's next
    // step would be.
    log(`no message naming oomlens.path within 45 s (extension events: ${readState().events.join(", ") || "none"}); opening ${logName}`);
    await openFile(logName).catch((err) => log(`opening ${logName} failed: ${err instanceof Error ? err.message : String(err)}`));
    crashShown = await crashToast.waitFor({ timeout: 45000 }).then(() => true, () => false);
  }
  const toasts = (await page.locator(".notifications-toasts .notification-toast").allInnerTexts()).map((t) => t.replace(/\s+/g, " ").trim());
  check("a crashing binary gets a message naming oomlens.path", crashShown,
    `${toasts.join(" | ").slice(0, 400)}${crashShown ? "" : ` (extension events: ${readState().events.join(", ") || "none"})`}`);
  await shot("code-server-crash.png");
  exitCode = results.every((r) => r.ok) ? 0 : 1;
} catch (err) {
  log(`error: ${err instanceof Error ? err.stack : String(err)}`);
  await shot("code-server-failure.png");
  exitCode = 1;
} finally {
  fs.writeFileSync(path.join(artifacts, "code-server-results.json"), JSON.stringify({ results, state: readState() }, null, 1));
  await closeSession();
  fs.rmSync(tmp, { recursive: true, force: true });
  const passed = results.filter((r) => r.ok).length;
  log(`${passed}/${results.length} checks passed`);
  process.exit(exitCode);
}
