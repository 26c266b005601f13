// The extension's language-client code path against the real `oomlens lsp`:
// the capabilities VS Code's client declares, pull diagnostics on a fixture
// log, code actions, and ServerApi (the typed executeCommand wrapper the
// extension uses) for diagnoseText / explain / analyzeSnapshot /
// compareSnapshots / fixScript.
// OOMLENS_BIN names the binary (default: ../build/oomlens).
// OOMLENS_RECORD=1 rewrites test/fixtures/diagnose_response.json, the
// recorded response the report-rendering unit test reads.
import { strict as assert } from "node:assert";
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  type ProtocolConnection,
} from "vscode-languageserver-protocol/node";
import { SERVER_COMMANDS, ServerApi, UnsupportedCommandError } from "../../src/serverApi";

const extRoot = path.resolve(__dirname, "../../..");
const repo = path.resolve(extRoot, "..");
const binary = process.env.OOMLENS_BIN ?? path.join(repo, "build", "oomlens");
const fixtureLog = path.join(repo, "fixtures/logs/pytorch26_fragmentation.log");
const fixtureScript = path.join(repo, "fixtures/scripts/empty_cache_in_loop.py");
const snapshot = path.join(repo, "fixtures/snapshots/fragmentation_p4.pickle");
const compareA = path.join(repo, "fixtures/snapshots/compare_before_p4.pickle");
const compareB = path.join(repo, "fixtures/snapshots/compare_after_p4.pickle");
const ranks = path.join(repo, "fixtures/snapshots/job_ranks");

// The parts of VS Code's client capabilities the server reads (vscode-languageclient 9).
const clientCapabilities = {
  general: { positionEncodings: ["utf-16"] },
  workspace: {
    configuration: true,
    workspaceEdit: { documentChanges: true, resourceOperations: ["create", "rename", "delete"] },
    diagnostics: { refreshSupport: true },
    executeCommand: { dynamicRegistration: true },
    didChangeConfiguration: { dynamicRegistration: true },
  },
  window: { workDoneProgress: true, showMessage: {} },
  textDocument: {
    synchronization: { dynamicRegistration: true, didSave: true },
    hover: { contentFormat: ["markdown", "plaintext"] },
    diagnostic: { dynamicRegistration: true, relatedDocumentSupport: false },
    codeAction: {
      dynamicRegistration: true,
      isPreferredSupport: true,
      disabledSupport: true,
      dataSupport: true,
      resolveSupport: { properties: ["edit"] },
      codeActionLiteralSupport: {
        codeActionKind: { valueSet: ["", "quickfix", "refactor", "source", "source.organizeImports", "source.fixAll"] },
      },
    },
    publishDiagnostics: { relatedInformation: true, versionSupport: false, codeDescriptionSupport: true, dataSupport: true },
  },
};

interface Diagnostic {
  code?: string;
  message: string;
  range: { start: { line: number } };
  data?: unknown;
}
interface CodeAction {
  title: string;
  kind?: string;
  command?: { command: string; arguments?: unknown[] };
  edit?: unknown;
  data?: unknown;
}

/** Pull diagnostics as VS Code does: a ContentModified answer (re-analysis after a settings change) is retried. */
async function pull(conn: ProtocolConnection, uri: string): Promise<{ kind: string; items: Diagnostic[] }> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await conn.sendRequest<{ kind: string; items: Diagnostic[] }>("textDocument/diagnostic", { textDocument: { uri } });
    } catch (err) {
      if ((err as { code?: number }).code !== -32801 || attempt >= 5) throw err;
    }
  }
}

describe("oomlens lsp with the extension's client code", () => {
  let child: ChildProcessWithoutNullStreams;
  let conn: ProtocolConnection;
  let commands: string[] = [];
  let api: ServerApi;
  const configRequests: unknown[] = [];
  const messages: string[] = [];

  before(async () => {
    assert.ok(fs.existsSync(binary), `no oomlens binary at ${binary} (build it, or set OOMLENS_BIN)`);
    child = spawn(binary, ["lsp"], { stdio: "pipe" });
    child.stderr.on("data", () => undefined);
    conn = createProtocolConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    conn.onRequest("workspace/configuration", (params: { items: unknown[] }) => {
      configRequests.push(params);
      return params.items.map(() => ({ allocatorOption: "expandable_segments:True" }));
    });
    conn.onRequest("client/registerCapability", () => null);
    conn.onRequest("window/workDoneProgress/create", () => null);
    conn.onRequest("workspace/diagnostic/refresh", () => null);
    conn.onRequest("workspace/applyEdit", () => ({ applied: true }));
    conn.onNotification("window/showMessage", (p: { message: string }) => messages.push(p.message));
    conn.onNotification("window/logMessage", () => undefined);
    conn.onNotification("textDocument/publishDiagnostics", () => undefined);
    conn.listen();
    const init = await conn.sendRequest<{ capabilities: { executeCommandProvider?: { commands?: string[] }; diagnosticProvider?: unknown } }>(
      "initialize",
      {
        processId: process.pid,
        clientInfo: { name: "oomlens-vscode-test" },
        rootUri: pathToFileURL(repo).toString(),
        capabilities: clientCapabilities,
        initializationOptions: { allocatorOption: "expandable_segments:True" },
        workspaceFolders: null,
      },
    );
    commands = init.capabilities.executeCommandProvider?.commands ?? [];
    assert.ok(init.capabilities.diagnosticProvider, "the server offers pull diagnostics to a client that declares them");
    await conn.sendNotification("initialized", {});
    api = new ServerApi(conn, () => commands);
  });

  after(async () => {
    try {
      await conn.sendRequest("shutdown");
      await conn.sendNotification("exit");
    } catch {
      child.kill();
    }
    conn.dispose();
  });

  it("lists the commands the extension relies on", () => {
    for (const c of [SERVER_COMMANDS.diagnoseText, SERVER_COMMANDS.explain, SERVER_COMMANDS.runVerification, SERVER_COMMANDS.copyVerification, SERVER_COMMANDS.showFix])
      assert.ok(commands.includes(c), `${c} missing from ${commands.join(", ")}`);
  });

  it("pulls diagnostics for an open log and offers code actions", async () => {
    const uri = pathToFileURL(fixtureLog).toString();
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "log", version: 1, text: fs.readFileSync(fixtureLog, "utf8") } });
    const report = await pull(conn, uri);
    assert.equal(report.kind, "full");
    const oom = report.items.find((d) => d.code === "OOM101");
    assert.ok(oom, `OOM101 among ${report.items.map((d) => d.code).join(",")}`);
    const actions = await conn.sendRequest<CodeAction[]>("textDocument/codeAction", {
      textDocument: { uri },
      range: { start: oom.range.start, end: oom.range.start },
      context: { diagnostics: [oom], triggerKind: 1 },
    });
    const titles = actions.map((a) => a.title);
    assert.ok(titles.some((t) => t.includes("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True")), titles.join(" | "));
    assert.ok(titles.some((t) => /verification/i.test(t)), titles.join(" | "));
    await conn.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("diagnoses a selection through ServerApi.diagnoseText", async () => {
    const text = fs.readFileSync(fixtureLog, "utf8");
    const result = await api.diagnoseText(text, "pytorch26_fragmentation.log:1");
    const inc = result.json?.incidents?.[0];
    assert.equal(inc?.class, "fragmentation");
    assert.equal(inc?.rule, "OOM101");
    assert.ok(inc?.verify?.includes("expandable_segments:True"));
    assert.ok(typeof result.markdown === "string" && result.markdown.length > 0);
    if (process.env.OOMLENS_RECORD === "1")
      fs.writeFileSync(path.join(extRoot, "test/fixtures/diagnose_response.json"), JSON.stringify(result, null, 1) + "\n");
  });

  it("cancels a diagnosis without breaking the connection", async () => {
    const { CancellationTokenSource } = await import("vscode-languageserver-protocol/node");
    const source = new CancellationTokenSource();
    const big = fs.readFileSync(fixtureLog, "utf8").repeat(2000);
    const pending = api.diagnoseText(big, "big", source.token);
    source.cancel();
    await pending.then(
      () => undefined, // finished before the cancel arrived: fine
      (err: { code?: number }) => assert.equal(err.code, -32800),
    );
    const again = await api.explain("OOM101");
    assert.match(again.markdown ?? "", /OOM101|fragmentation/i);
  });

  it("answers runVerification with the command and runs nothing itself", async () => {
    const r = await conn.sendRequest<{ command: string }>("workspace/executeCommand", { command: SERVER_COMMANDS.runVerification, arguments: ["echo hi"] });
    assert.equal(r.command, "echo hi");
  });

  it("proposes the oomlens verify A/B run for an open script", async () => {
    const uri = "file:///w/my%20train.py";
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: 1, text: "import torch\n" } });
    const r = await api.verify(uri);
    assert.equal(r.command, "oomlens verify --baseline --conf expandable_segments:True -- python '/w/my train.py'");
    const other = await api.verify(uri, "max_split_size_mb:256");
    assert.ok(other.command?.includes("--conf max_split_size_mb:256"), other.command);
    await conn.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("analyzes a memory snapshot when the server offers it", async (t) => {
    if (!commands.includes(SERVER_COMMANDS.analyzeSnapshot)) {
      await assert.rejects(api.analyzeSnapshot(snapshot), UnsupportedCommandError);
      t.skip("this oomlens has no oomlens.analyzeSnapshot yet");
      return;
    }
    const r = await api.analyzeSnapshot(snapshot);
    assert.ok(r.html && /<svg/i.test(r.html), "an HTML page with an SVG segment map");
    assert.ok(!/<script/i.test(r.html ?? ""), "the snapshot page has no scripts");
  });

  it("compares two snapshots and analyzes a folder of ranks when the server offers it", async (t) => {
    if (!commands.includes(SERVER_COMMANDS.compareSnapshots)) {
      await assert.rejects(api.compareSnapshots(compareA, compareB), UnsupportedCommandError);
      t.skip("this oomlens has no oomlens.compareSnapshots yet");
      return;
    }
    const r = await api.compareSnapshots(compareA, compareB);
    const json = r.json as { a: { path: string; peak_timeline: unknown }; b: { path: string }; grew: unknown[] };
    assert.deepEqual([json.a.path, json.b.path], [compareA, compareB]);
    assert.ok(json.a.peak_timeline && json.grew.length > 0, "the runs' curves and the sites that grew");
    assert.ok(r.html && /<svg/i.test(r.html) && !/<script/i.test(r.html), "a page of curves, without scripts");
    const job = await api.analyzeSnapshot(ranks);
    assert.equal((job.json as { highest_rank: number }).highest_rank, 2);
    assert.match(job.markdown ?? "", /Highest peak: \*\*rank 2\*\*/);
  });

  it("edits a training script through fixScript when the server offers it", async (t) => {
    if (!commands.includes(SERVER_COMMANDS.fixScript)) {
      await assert.rejects(api.fixScript("file:///x.py", { kind: "empty_cache" }), UnsupportedCommandError);
      t.skip("this oomlens has no oomlens.fixScript yet");
      return;
    }
    const uri = pathToFileURL(fixtureScript).toString();
    await conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "python", version: 3, text: fs.readFileSync(fixtureScript, "utf8") } });
    const report = await pull(conn, uri);
    assert.ok(report.items.some((d) => d.code === "OOM301"), `OOM301 among ${report.items.map((d) => d.code).join(",")}`);
    const env = await api.fixScript(uri, { kind: "env", name: "PYTORCH_CUDA_ALLOC_CONF", value: "expandable_segments:True" });
    const changes = (env.edit as { documentChanges?: { textDocument: { uri: string; version: number | null }; edits: { newText: string }[] }[] })?.documentChanges;
    assert.ok(changes?.length, "a WorkspaceEdit with documentChanges");
    assert.equal(changes[0]!.textDocument.version, 3, "versioned for the open document");
    assert.ok(changes[0]!.edits.some((e) => e.newText.includes("PYTORCH_CUDA_ALLOC_CONF")));
    await conn.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });
});
