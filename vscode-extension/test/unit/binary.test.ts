// Binary discovery order: the oomlens.path setting, else the bundled binary,
// else PATH; an explicit setting that does not work is an error, never a
// silent fallback.
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { expandConfiguredPath, findBinary, type DiscoveryInput } from "../../src/binary";

function input(executables: string[], over: Partial<DiscoveryInput> = {}): DiscoveryInput {
  const set = new Set(executables);
  return {
    configured: "",
    extensionPath: "/ext",
    envPath: "/usr/local/bin:/usr/bin",
    platform: "linux",
    homeDir: "/home/u",
    workspaceFolder: "/ws",
    isExecutable: (f) => set.has(f),
    ...over,
  };
}

describe("binary discovery", () => {
  it("prefers the setting over the bundled binary and PATH", () => {
    const r = findBinary(input(["/opt/oomlens", "/ext/bin/oomlens", "/usr/bin/oomlens"], { configured: "/opt/oomlens" }));
    assert.ok(r.ok);
    assert.deepEqual(r.choice, { path: "/opt/oomlens", source: "setting" });
  });

  it("uses the bundled binary when no setting is given", () => {
    const r = findBinary(input(["/ext/bin/oomlens", "/usr/bin/oomlens"]));
    assert.ok(r.ok);
    assert.deepEqual(r.choice, { path: "/ext/bin/oomlens", source: "bundled" });
  });

  it("falls back to PATH, in PATH order", () => {
    const r = findBinary(input(["/usr/local/bin/oomlens", "/usr/bin/oomlens"]));
    assert.ok(r.ok);
    assert.deepEqual(r.choice, { path: "/usr/local/bin/oomlens", source: "PATH" });
    assert.deepEqual(r.tried, ["/ext/bin/oomlens", "/usr/local/bin/oomlens"]);
  });

  it("reports a broken setting instead of falling back", () => {
    const r = findBinary(input(["/ext/bin/oomlens"], { configured: "/nope/oomlens" }));
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.message.includes('"oomlens.path"'));
  });

  it("looks a bare name in the setting up on PATH", () => {
    const r = findBinary(input(["/usr/bin/oomlens-dev"], { configured: "oomlens-dev" }));
    assert.ok(r.ok);
    assert.deepEqual(r.choice, { path: "/usr/bin/oomlens-dev", source: "setting" });
  });

  it("says what to do when nothing is found", () => {
    const r = findBinary(input([]));
    assert.equal(r.ok, false);
    assert.ok(!r.ok && /oomlens\.path/.test(r.message));
  });

  it("expands ~, ${userHome} and ${workspaceFolder}, and relative paths", () => {
    const ctx = { homeDir: "/home/u", workspaceFolder: "/ws" };
    assert.equal(expandConfiguredPath("~/bin/oomlens", ctx), "/home/u/bin/oomlens");
    assert.equal(expandConfiguredPath("${userHome}/oomlens", ctx), "/home/u/oomlens");
    assert.equal(expandConfiguredPath("${workspaceFolder}/build/oomlens", ctx), "/ws/build/oomlens");
    assert.equal(expandConfiguredPath("build/oomlens", ctx), "/ws/build/oomlens");
  });

  it("uses oomlens.exe and ; on Windows", () => {
    const r = findBinary(input(["C:\\tools/oomlens.exe"], { platform: "win32", envPath: "C:\\tools", extensionPath: "C:\\ext" }));
    assert.ok(r.ok && r.choice.source === "PATH");
  });
});
