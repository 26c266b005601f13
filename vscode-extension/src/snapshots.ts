// Choosing what the snapshot commands read: one snapshot or a folder of
// per-rank snapshots to analyse, two snapshots to compare. Only vscode types;
// the dialogs are passed in, so the choices can be tested without an editor.
import type * as vscode from "vscode";
import { baseName } from "./report";

export const SNAPSHOT_FILTERS = { "Memory snapshots": ["pickle", "pkl", "json", "gz"] };

/** What the open dialog would answer (vscode.window.showOpenDialog). */
export type OpenDialog = (options: vscode.OpenDialogOptions) => Thenable<vscode.Uri[] | undefined>;
/** What a quick pick of labels would answer (vscode.window.showQuickPick). */
export type PickOne = (labels: string[], options: { placeHolder: string }) => Thenable<string | undefined>;

export const PICK_FILE = "A snapshot file…";
export const PICK_FOLDER = "A folder of per-rank snapshots…";

/**
 * The dialogs that let a user pick a snapshot file or a folder of ranks. macOS
 * offers both in one dialog; on Windows and Linux a dialog that allows both
 * shows folders only, so the user first says which.
 */
export function analyzeDialogs(platform: string): { file: vscode.OpenDialogOptions; folder?: vscode.OpenDialogOptions } {
  const base = { canSelectMany: false, openLabel: "Analyze" };
  if (platform === "darwin") return { file: { ...base, canSelectFiles: true, canSelectFolders: true } };
  return {
    file: { ...base, canSelectFiles: true, canSelectFolders: false, filters: SNAPSHOT_FILTERS },
    folder: { ...base, canSelectFiles: false, canSelectFolders: true },
  };
}

/** A snapshot file or a folder of ranks, or undefined when the user gave up. */
export async function pickSnapshotOrFolder(platform: string, open: OpenDialog, pick: PickOne): Promise<vscode.Uri | undefined> {
  const dialogs = analyzeDialogs(platform);
  let options = dialogs.file;
  if (dialogs.folder) {
    const chosen = await pick([PICK_FILE, PICK_FOLDER], { placeHolder: "oomlens: analyze a memory snapshot or a folder of ranks" });
    if (!chosen) return undefined;
    if (chosen === PICK_FOLDER) options = dialogs.folder;
  }
  return (await open(options))?.[0];
}

/**
 * The two runs to compare, A then B: both from one dialog when the user
 * selects two files there, else the second from a dialog of its own.
 * Undefined when the user gave up or chose more than two.
 */
export async function pickSnapshotPair(open: OpenDialog): Promise<[vscode.Uri, vscode.Uri] | undefined> {
  const first = await open({
    canSelectMany: true,
    canSelectFiles: true,
    canSelectFolders: false,
    openLabel: "Compare",
    title: "oomlens: the snapshot of run A (or select both, A and B)",
    filters: SNAPSHOT_FILTERS,
  });
  const [a, b, ...more] = first ?? [];
  if (!a || more.length) return undefined;
  if (b) return [a, b];
  const second = await open({
    canSelectMany: false,
    canSelectFiles: true,
    canSelectFolders: false,
    openLabel: "Compare",
    title: `oomlens: the snapshot of run B, to compare with ${baseName(a.path)}`,
    filters: SNAPSHOT_FILTERS,
  });
  const chosen = second?.[0];
  return chosen ? [a, chosen] : undefined;
}

/** The two runs a command got from the explorer (a two-file selection), if any. */
export function explorerPair(selected: unknown): [vscode.Uri, vscode.Uri] | undefined {
  if (!Array.isArray(selected) || selected.length !== 2) return undefined;
  const [a, b] = selected as unknown[];
  const isUri = (u: unknown): u is vscode.Uri => typeof u === "object" && u !== null && "scheme" in u && "path" in u;
  if (!isUri(a) || !isUri(b)) return undefined;
  return [a, b];
}

/** The panel's title: both runs by file name (their folder too when the names are alike). */
export function compareTitle(a: vscode.Uri, b: vscode.Uri): string {
  const label = (u: vscode.Uri) => {
    const parts = u.path.split("/").filter(Boolean);
    return parts.slice(-2).join("/");
  };
  const [na, nb] = baseName(a.path) === baseName(b.path) ? [label(a), label(b)] : [baseName(a.path), baseName(b.path)];
  return `oomlens: ${na} ↔ ${nb}`;
}
