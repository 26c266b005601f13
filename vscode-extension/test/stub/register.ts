// Makes `require("vscode")` load the stub below (node --require this file).
import Module from "module";
import * as path from "path";

const stub = path.join(__dirname, "vscode.js");
type Resolve = (request: string, ...rest: unknown[]) => string;
const mod = Module as unknown as { _resolveFilename: Resolve };
const original = mod._resolveFilename;
mod._resolveFilename = function (request: string, ...rest: unknown[]): string {
  if (request === "vscode") return stub;
  return original.call(this, request, ...rest);
};
