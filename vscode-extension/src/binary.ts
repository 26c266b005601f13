// Which oomlens binary to start: the `oomlens.path` setting, else the binary
// bundled in the extension, else `oomlens` on PATH. Pure (the file system is
// passed in) so the order is unit-tested; the caller logs the choice.
import * as path from "path";

export type BinarySource = "setting" | "bundled" | "PATH";

export interface BinaryChoice {
  path: string;
  source: BinarySource;
}

export interface DiscoveryInput {
  /** The `oomlens.path` setting, as the user wrote it. */
  configured: string;
  extensionPath: string;
  /** The PATH environment variable. */
  envPath: string;
  platform: NodeJS.Platform;
  homeDir: string;
  workspaceFolder?: string;
  isExecutable(file: string): boolean;
}

export type Discovery =
  | { ok: true; choice: BinaryChoice; tried: string[] }
  | { ok: false; tried: string[]; message: string };

function exeName(platform: NodeJS.Platform): string {
  return platform === "win32" ? "oomlens.exe" : "oomlens";
}

/** `~`, `${userHome}` and `${workspaceFolder}` expanded; relative paths taken from the workspace folder. */
export function expandConfiguredPath(configured: string, input: Pick<DiscoveryInput, "homeDir" | "workspaceFolder">): string {
  let p = configured.trim();
  if (p === "~" || p.startsWith("~/")) p = input.homeDir + p.slice(1);
  p = p.replace(/\$\{userHome\}/g, input.homeDir);
  if (input.workspaceFolder) p = p.replace(/\$\{workspaceFolder\}/g, input.workspaceFolder);
  if (!path.isAbsolute(p) && (p.includes("/") || p.includes("\\")) && input.workspaceFolder)
    p = path.join(input.workspaceFolder, p);
  return p;
}

function searchPath(name: string, input: DiscoveryInput, tried: string[]): string | undefined {
  const sep = input.platform === "win32" ? ";" : ":";
  for (const dir of input.envPath.split(sep)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    tried.push(candidate);
    if (input.isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function findBinary(input: DiscoveryInput): Discovery {
  const tried: string[] = [];
  const configured = input.configured.trim();
  if (configured) {
    const expanded = expandConfiguredPath(configured, input);
    // A bare name ("oomlens", "oomlens-dev") is looked up on PATH, as a shell would.
    const isBareName = !expanded.includes("/") && !expanded.includes("\\");
    const found = isBareName ? searchPath(expanded, input, tried) : (tried.push(expanded), input.isExecutable(expanded) ? expanded : undefined);
    if (found) return { ok: true, choice: { path: found, source: "setting" }, tried };
    // An explicit setting that does not work is an error, not a reason to
    // quietly start some other binary.
    return {
      ok: false,
      tried,
      message: `The oomlens binary set in "oomlens.path" (${configured}) was not found or is not executable. Change the "oomlens.path" setting, or clear it to use the bundled binary or oomlens on PATH.`,
    };
  }
  const bundled = path.join(input.extensionPath, "bin", exeName(input.platform));
  tried.push(bundled);
  if (input.isExecutable(bundled)) return { ok: true, choice: { path: bundled, source: "bundled" }, tried };
  const onPath = searchPath(exeName(input.platform), input, tried);
  if (onPath) return { ok: true, choice: { path: onPath, source: "PATH" }, tried };
  return {
    ok: false,
    tried,
    message:
      'No oomlens binary found: this extension has none bundled and "oomlens" is not on PATH. Build or install oomlens and set "oomlens.path" to it.',
  };
}
