// Restart bounds and selection diagnostics.
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { boundedErrorHandler, CloseAction, ErrorAction, RestartBudget, withTimeout } from "../../src/restartBudget";
import { selectionDiagnostics } from "../../src/selectionDiagnostics";
import { commonSuffixLength } from "../../src/scripts";
import { commandWithBinary, terminalNameFor } from "../../src/terminals";

describe("restart budget", () => {
  it("allows three restarts in three minutes, then none until the window passes or a reset", () => {
    const b = new RestartBudget(3, 180_000);
    assert.deepEqual([b.allow(0), b.allow(1000), b.allow(2000), b.allow(3000)], [true, true, true, false]);
    assert.equal(b.allow(181_000), true, "the first restart left the window");
    b.reset();
    assert.equal(b.allow(181_001), true);
  });
});

describe("start timeout", () => {
  it("passes a start that settles in time through, and rejects one that does not with the message", async () => {
    assert.equal(await withTimeout(Promise.resolve(7), 1000, "late"), 7);
    await assert.rejects(withTimeout(Promise.reject(new Error("EPIPE")), 1000, "late"), /EPIPE/);
    await assert.rejects(withTimeout(new Promise<never>(() => undefined), 20, "no answer within 0.02 s"), /no answer within 0\.02 s/);
  });
});

describe("error handler", () => {
  it("restarts a crashing server three times, then stops with a message naming oomlens.path", () => {
    const gaveUp: string[] = [];
    const lines: string[] = [];
    const h = boundedErrorHandler({ budget: new RestartBudget(3, 180_000), binary: "/opt/oomlens", log: (l) => lines.push(l), onGaveUp: (m) => gaveUp.push(m) });
    const actions = [h.closed(), h.closed(), h.closed(), h.closed()].map((r) => r.action);
    assert.deepEqual(actions, [CloseAction.Restart, CloseAction.Restart, CloseAction.Restart, CloseAction.DoNotRestart]);
    assert.equal(gaveUp.length, 1);
    assert.match(gaveUp[0]!, /\/opt\/oomlens.*stopped 4 times in 3 minutes.*"oomlens\.path".*Restart Server/);
  });
  it("survives a few bad messages, then shuts the connection down", () => {
    const h = boundedErrorHandler({ budget: new RestartBudget(), binary: "b", log: () => undefined, onGaveUp: () => undefined });
    assert.equal(h.error(new Error("x"), undefined, 1).action, ErrorAction.Continue);
    assert.equal(h.error(new Error("x"), undefined, 4).action, ErrorAction.Shutdown);
  });
});

describe("selection diagnostics", () => {
  it("places incidents and findings at their lines within the selection", () => {
    const diags = selectionDiagnostics(
      {
        incidents: [{ line: 3, end_line: 4, rule: "OOM101", message: "GPU out of memory from fragmentation" }],
        findings: [{ line: 1, rule: "OOM201", severity: "warning", message: "cache flushes" }],
      },
      10,
      100,
    );
    assert.equal(diags.length, 2);
    assert.equal(diags[0]!.range.start.line, 12);
    assert.equal(diags[0]!.range.end.line, 13);
    assert.equal(diags[0]!.code, "OOM101");
    assert.equal(diags[0]!.source, "oomlens");
    assert.equal(diags[1]!.range.start.line, 10);
    assert.equal(diags[1]!.severity, 1 /* Warning */);
  });
  it("clamps to the document", () => {
    const diags = selectionDiagnostics({ incidents: [{ line: 50, rule: "OOM105" }] }, 0, 5);
    assert.equal(diags[0]!.range.start.line, 4);
  });
});

describe("script and terminal helpers", () => {
  it("scores workspace files by common path suffix", () => {
    assert.equal(commonSuffixLength("/ws/seg3d/train.py", "/home/kai/seg3d/train.py"), 2);
    assert.equal(commonSuffixLength("/ws/other/train.py", "/home/kai/seg3d/train.py"), 1);
  });
  it("names a verification terminal for its command", () => {
    assert.equal(terminalNameFor("python train.py"), "oomlens verify: python train.py");
    assert.ok(terminalNameFor("x".repeat(100)).length < 60);
    // oomlens verify runs through the binary the extension started.
    assert.equal(commandWithBinary("oomlens verify -- python t.py", "/opt/ext/bin/oomlens"), "/opt/ext/bin/oomlens verify -- python t.py");
    assert.equal(commandWithBinary("oomlens verify -- python t.py", "/my tools/oomlens"), "'/my tools/oomlens' verify -- python t.py");
    assert.equal(commandWithBinary("python t.py", "/opt/oomlens"), "python t.py");
    assert.equal(commandWithBinary("oomlensx run", "/opt/oomlens"), "oomlensx run");
  });
});
