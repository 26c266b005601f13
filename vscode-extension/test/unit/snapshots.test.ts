// Choosing the snapshots to read: a file or a folder of ranks to analyse, two
// runs to compare (one dialog with both selected, or one dialog each), and the
// comparison's title naming both.
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import * as vscode from "vscode";
import {
  analyzeDialogs,
  compareTitle,
  explorerPair,
  PICK_FILE,
  PICK_FOLDER,
  pickSnapshotOrFolder,
  pickSnapshotPair,
  type OpenDialog,
} from "../../src/snapshots";
import { SERVER_COMMANDS, ServerApi, type Requester } from "../../src/serverApi";

const file = (p: string) => vscode.Uri.file(p);

/** A dialog answering `answers` in turn, recording the options it was shown with. */
function dialog(...answers: (vscode.Uri[] | undefined)[]): OpenDialog & { asked: vscode.OpenDialogOptions[] } {
  const asked: vscode.OpenDialogOptions[] = [];
  const fn = (options: vscode.OpenDialogOptions) => {
    asked.push(options);
    return Promise.resolve(answers.shift());
  };
  return Object.assign(fn, { asked });
}

describe("analyze a snapshot or a folder", () => {
  it("lets macOS pick either in one dialog; elsewhere asks which first", async () => {
    const mac1 = analyzeDialogs("darwin");
    assert.deepEqual([mac1.file.canSelectFiles, mac1.file.canSelectFolders, mac1.folder], [true, true, undefined]);
    const mac = dialog([file("/runs/job")]);
    const neverPick = () => Promise.reject(new Error("no quick pick on macOS"));
    assert.equal((await pickSnapshotOrFolder("darwin", mac, neverPick))?.path, "/runs/job");

    const picks: string[][] = [];
    const linux = dialog([file("/runs/job")]);
    const chosen = await pickSnapshotOrFolder("linux", linux, (labels) => (picks.push(labels), Promise.resolve(PICK_FOLDER)));
    assert.deepEqual(picks, [[PICK_FILE, PICK_FOLDER]]);
    assert.equal(chosen?.path, "/runs/job");
    assert.deepEqual([linux.asked[0]?.canSelectFiles, linux.asked[0]?.canSelectFolders], [false, true], "a folder dialog");

    const files = dialog([file("/runs/a.pickle")]);
    await pickSnapshotOrFolder("win32", files, () => Promise.resolve(PICK_FILE));
    assert.deepEqual([files.asked[0]?.canSelectFiles, files.asked[0]?.canSelectFolders], [true, false], "a file dialog");
    assert.ok(files.asked[0]?.filters?.["Memory snapshots"]?.includes("pickle"));

    const gaveUp = dialog();
    assert.equal(await pickSnapshotOrFolder("linux", gaveUp, () => Promise.resolve(undefined)), undefined);
    assert.equal(gaveUp.asked.length, 0, "no dialog once the pick is dismissed");
  });
});

describe("compare two snapshots", () => {
  it("takes both runs from one dialog when two are selected", async () => {
    const open = dialog([file("/runs/before.pickle"), file("/runs/after.pickle")]);
    const pair = await pickSnapshotPair(open);
    assert.deepEqual(pair?.map((u) => u.path), ["/runs/before.pickle", "/runs/after.pickle"]);
    assert.equal(open.asked.length, 1);
    assert.equal(open.asked[0]?.canSelectMany, true);
  });

  it("asks for B in a second dialog naming A", async () => {
    const open = dialog([file("/runs/before.pickle")], [file("/runs/after.pickle")]);
    const pair = await pickSnapshotPair(open);
    assert.deepEqual(pair?.map((u) => u.path), ["/runs/before.pickle", "/runs/after.pickle"]);
    assert.equal(open.asked.length, 2);
    assert.match(open.asked[1]?.title ?? "", /run B, to compare with before\.pickle/);
  });

  it("gives up when a dialog is dismissed or more than two are chosen", async () => {
    assert.equal(await pickSnapshotPair(dialog(undefined)), undefined);
    assert.equal(await pickSnapshotPair(dialog([file("/a.pickle")], undefined)), undefined);
    assert.equal(await pickSnapshotPair(dialog([file("/a.pickle"), file("/b.pickle"), file("/c.pickle")])), undefined);
  });

  it("takes two files selected in the explorer, and nothing else", () => {
    const a = file("/runs/a.pickle"), b = file("/runs/b.pickle");
    assert.deepEqual(explorerPair([a, b]), [a, b]);
    assert.equal(explorerPair([a]), undefined);
    assert.equal(explorerPair(undefined), undefined);
    assert.equal(explorerPair(["/runs/a.pickle", "/runs/b.pickle"]), undefined);
  });

  it("names both runs in the panel's title, with their folders when the names are alike", () => {
    assert.equal(compareTitle(file("/runs/before.pickle"), file("/runs/after.pickle")), "oomlens: before.pickle ↔ after.pickle");
    assert.equal(compareTitle(file("/runs/v1/snapshot.pickle"), file("/runs/v2/snapshot.pickle")), "oomlens: v1/snapshot.pickle ↔ v2/snapshot.pickle");
  });

  it("sends both paths to oomlens.compareSnapshots", async () => {
    const sent: unknown[] = [];
    const requester: Requester = {
      sendRequest: <R>(method: string, params: unknown) => (sent.push({ method, params }), Promise.resolve({ html: "<p>ok</p>" } as R)),
    };
    const api = new ServerApi(requester, () => [SERVER_COMMANDS.compareSnapshots]);
    assert.equal((await api.compareSnapshots("/runs/a.pickle", "/runs/b.pickle")).html, "<p>ok</p>");
    assert.deepEqual(sent, [
      { method: "workspace/executeCommand", params: { command: "oomlens.compareSnapshots", arguments: [{ path: "/runs/a.pickle" }, { path: "/runs/b.pickle" }] } },
    ]);
    const older = new ServerApi(requester, () => [SERVER_COMMANDS.analyzeSnapshot]);
    await assert.rejects(older.compareSnapshots("/a", "/b"), /does not offer "oomlens.compareSnapshots"/);
  });
});
