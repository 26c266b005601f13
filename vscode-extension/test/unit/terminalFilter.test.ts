// The terminal-watch pre-filter: only failed commands whose output mentions
// an out-of-memory error are sent to the server.
import { strict as assert } from "node:assert";
import { describe, it } from "node:test";
import { OutputTail, shouldDiagnose, stripTerminalControls } from "../../src/terminalFilter";

const oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB";

describe("terminal watch filter", () => {
  it("passes a failed command that printed a CUDA OOM", () => {
    assert.ok(shouldDiagnose({ commandLine: "python train.py", exitCode: 1, output: oom }));
  });
  it("passes an unknown exit code (killed, or shell integration without it)", () => {
    assert.ok(shouldDiagnose({ commandLine: "torchrun train.py", exitCode: undefined, output: oom }));
  });
  it("ignores commands that succeeded, even when they printed OOM text", () => {
    assert.equal(shouldDiagnose({ commandLine: "grep -r 'out of memory' logs/", exitCode: 0, output: oom }), false);
  });
  it("ignores failures without an OOM", () => {
    assert.equal(shouldDiagnose({ commandLine: "python train.py", exitCode: 1, output: "ModuleNotFoundError: No module named 'torch'" }), false);
    assert.equal(shouldDiagnose({ commandLine: "make", exitCode: 2, output: "" }), false);
  });
  it("knows the other frameworks' wording", () => {
    for (const text of [
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 17179869184 bytes.",
      "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[8192,8192]",
      "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
      "RuntimeError: MPS backend out of memory (MPS allocated: 17.00 GB",
    ])
      assert.ok(shouldDiagnose({ commandLine: "python x.py", exitCode: 1, output: text }), text);
  });
  it("strips shell-integration OSC sequences but keeps colour codes for the server", () => {
    const raw = "\x1b]633;C\x07\x1b[31mCUDA out of memory\x1b[0m\x1b]633;D;1\x07";
    assert.equal(stripTerminalControls(raw), "\x1b[31mCUDA out of memory\x1b[0m");
  });
  it("keeps only the tail of a long output", () => {
    const tail = new OutputTail(10);
    tail.push("0123456789");
    tail.push("abcdef");
    assert.equal(tail.text(), "6789abcdef");
  });
});
