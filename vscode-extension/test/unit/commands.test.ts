// Command registration: every command package.json contributes is
// registered, none twice, and none collides with a server command (which
// vscode-languageclient registers under the same global ids).
import { strict as assert } from "node:assert";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import * as vscode from "vscode";
import { CLIENT_COMMANDS, registerCommands, type CommandHandlers } from "../../src/commands";
import { SERVER_COMMANDS } from "../../src/serverApi";

const stub = vscode as unknown as { registered: Map<string, (...args: unknown[]) => unknown> };
const manifest = JSON.parse(fs.readFileSync(path.resolve(__dirname, "../../../package.json"), "utf8")) as {
  contributes: {
    commands: { command: string }[];
    menus: Record<string, { command: string }[]>;
    keybindings: { command: string }[];
  };
};

describe("commands", () => {
  it("registers every contributed command and routes calls to its handler", async () => {
    const calls: string[] = [];
    const handlers = Object.fromEntries(
      Object.values(CLIENT_COMMANDS).map((id) => [id, (...args: unknown[]) => calls.push(`${id}(${args.join(",")})`)]),
    ) as CommandHandlers;
    const disposables = registerCommands(handlers);
    const contributed = manifest.contributes.commands.map((c) => c.command).sort();
    assert.deepEqual([...stub.registered.keys()].sort(), contributed);
    await vscode.commands.executeCommand(CLIENT_COMMANDS.verifyFix, "python train.py");
    assert.deepEqual(calls, ["oomlens.verifyFix(python train.py)"]);
    for (const d of disposables) d.dispose();
    assert.equal(stub.registered.size, 0, "disposing unregisters");
  });

  it("never uses a server command's id", () => {
    const server = new Set<string>(Object.values(SERVER_COMMANDS));
    for (const id of Object.values(CLIENT_COMMANDS)) assert.ok(!server.has(id), `${id} collides with a server command`);
  });

  it("menus and keybindings name contributed commands only", () => {
    const known = new Set(manifest.contributes.commands.map((c) => c.command));
    const used = [...Object.values(manifest.contributes.menus).flat(), ...manifest.contributes.keybindings].map((c) => c.command);
    for (const id of used) assert.ok(known.has(id), `${id} is not contributed`);
    assert.ok(used.includes(CLIENT_COMMANDS.diagnoseSelection));
    const explorer = (manifest.contributes.menus["explorer/context"] ?? []) as { command: string; when?: string }[];
    const analyze = explorer.find((m) => m.command === CLIENT_COMMANDS.analyzeSnapshotFile);
    assert.ok(analyze?.when?.includes("explorerResourceIsFolder"), "Analyze Memory Snapshot on a folder of ranks");
    const compare = explorer.find((m) => m.command === CLIENT_COMMANDS.compareSnapshotFiles);
    assert.ok(compare?.when?.includes("listDoubleSelection"), "Compare on two selected snapshots");
  });
});
