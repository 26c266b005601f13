// Which finished terminal commands are worth sending to the server when
// `oomlens.watchTerminals` is on. This is a cheap pre-filter only: the server
// decides whether the output really holds a GPU out-of-memory failure.

/** Words every GPU OOM message family the server knows contains one of. */
const OOM_HINT =
  /out of memory|OutOfMemoryError|RESOURCE_EXHAUSTED|CUDA_ERROR_OUT_OF_MEMORY|ALLOC_FAILED|hipErrorOutOfMemory|OOM when allocating|Failed to allocate|MPS backend out of memory/i;

/** Most output the watcher keeps of one command (its tail). */
export const MAX_WATCHED_OUTPUT = 8 * 1024 * 1024;

export interface FinishedCommand {
  commandLine: string;
  exitCode: number | undefined;
  output: string;
}

export function shouldDiagnose(cmd: FinishedCommand): boolean {
  // A command that succeeded did not die of an OOM it printed (a retried OOM
  // is the training script's business); an unknown exit code may be a crash.
  if (cmd.exitCode === 0) return false;
  if (!cmd.output) return false;
  return OOM_HINT.test(cmd.output);
}

/** Terminal control sequences the shell integration leaves in raw output (OSC 633 marks, titles). */
export function stripTerminalControls(raw: string): string {
  // OSC ... BEL / ST; the server strips colour (CSI) codes itself.
  // eslint-disable-next-line no-control-regex
  return raw.replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g, "");
}

/** Keeps the last `limit` characters of a growing output. */
export class OutputTail {
  private chunks: string[] = [];
  private size = 0;
  constructor(private readonly limit = MAX_WATCHED_OUTPUT) {}
  push(chunk: string): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    // Drop whole chunks only while what remains still fills the limit.
    while (this.chunks.length > 1 && this.size - this.chunks[0]!.length >= this.limit) this.size -= this.chunks.shift()!.length;
  }
  text(): string {
    const all = this.chunks.join("");
    return all.length > this.limit ? all.slice(all.length - this.limit) : all;
  }
}
