#!/usr/bin/env python3
"""Hostile inputs, one named case each: the real binary gets a clear error (a
non-zero exit naming the input and the reason) or a correct answer, within a
memory bound, and never dies from a signal.

    hostile_inputs_e2e.py BINARY FIXTURES_DIR [--memory-bound-mib M] [NAME_SUBSTRING...]

Memory is each process's peak resident set (ru_maxrss from wait4), or VmHWM
for the language server. Time is never asserted: the timeouts only stop a hang.
Large inputs are generated streams or sparse files, so the test needs little disk.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
from typing import Callable

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lsp_e2e"))
from lsp_client import LspServer, client_capabilities, encode, frame  # noqa: E402

HANG_GUARD_S = 600  # only a hang hits this: a 4 GiB read takes seconds
MIB = 1 << 20
GIB = 1 << 30
REQUEST_FAILED, METHOD_NOT_FOUND = -32803, -32601

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Run:
    def __init__(self, rc: int, out: str, err: str, maxrss_kib: int):
        self.rc, self.out, self.err, self.maxrss_kib = rc, out, err, maxrss_kib


class Ctx:
    def __init__(self, binary: str, fixtures: str, bound_mib: int, tmp: str):
        self.binary, self.fixtures, self.bound_kib, self.tmp = binary, fixtures, bound_mib * 1024, tmp

    def path(self, name: str) -> str:
        return os.path.join(self.tmp, name)

    def write(self, name: str, data: bytes) -> str:
        with open(self.path(name), "wb") as f:
            f.write(data)
        return self.path(name)

    def run(self, *args: str, stdin_chunks=None, during=None) -> Run:
        """The binary with args; stdin_chunks (an iterable of bytes) is streamed
        to its standard input; during(pid) runs while it reads."""
        proc = subprocess.Popen([self.binary, *args], stdin=subprocess.PIPE if stdin_chunks is not None else
                                subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        out, err = bytearray(), bytearray()
        readers = [threading.Thread(target=lambda s=s, b=b: b.extend(s.read()), daemon=True)
                   for s, b in ((proc.stdout, out), (proc.stderr, err))]
        for t in readers:
            t.start()
        guard = threading.Timer(HANG_GUARD_S, proc.kill)
        guard.start()
        if stdin_chunks is not None:
            try:
                for chunk in stdin_chunks:
                    proc.stdin.write(chunk)
            except BrokenPipeError:
                pass  # it stopped reading: its exit says why
            finally:
                try:
                    proc.stdin.close()
                except BrokenPipeError:
                    pass
        if during is not None:
            during(proc.pid)
        _, status, usage = os.wait4(proc.pid, 0)
        guard.cancel()
        proc.returncode = os.waitstatus_to_exitcode(status)
        for t in readers:
            t.join()
        run = Run(proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), usage.ru_maxrss)
        check(run.rc >= 0, f"{args}: died from signal {-run.rc}; stderr: {run.err[-500:]}")
        check(run.maxrss_kib <= self.bound_kib,
              f"{args}: peak resident memory {run.maxrss_kib} KiB over the bound of {self.bound_kib} KiB")
        return run


def check(condition, message: str) -> None:
    if not condition:
        raise AssertionError(message)


def refused(run: Run, name: str, reason: str) -> None:
    """A clear error: exit 2, stderr names the input and the reason, nothing on stdout."""
    check(run.rc == 2 and name in run.err and reason in run.err and not run.out.strip(),
          f"expected exit 2 naming {name!r} and {reason!r}; got {run.rc}, stderr {run.err[-400:]!r}")


def no_oom(run: Run, name: str) -> None:
    check(run.rc == 0 and run.out.startswith("No GPU out-of-memory failure in ") and name in run.out,
          f"expected 'no OOM' for {name}; got {run.rc}: {run.out[-300:]!r} {run.err[-300:]!r}")


def fixture_log(ctx: Ctx) -> bytes:
    with open(os.path.join(ctx.fixtures, "logs", "pytorch26_fragmentation.log"), "rb") as f:
        return f.read()


# ---------------------------------------------------------------------------
# logs

@case
def log_one_gib_single_line_on_stdin(ctx: Ctx):
    line = b"x" * MIB
    run = ctx.run("diagnose", "-", stdin_chunks=(line for _ in range(1024)))
    no_oom(run, "standard input (1 lines)")


@case
def log_ten_mib_of_random_bytes(ctx: Ctx):
    path = ctx.write("random.log", random.Random(14).randbytes(10 * MIB))
    no_oom(ctx.run("diagnose", path), "random.log (41267 lines)")
    refused(ctx.run("snapshot", path), "random.log", "at byte 0")
    lint = ctx.run("lint", "--stdin-filename", "random.py", "-", stdin_chunks=[random.Random(15).randbytes(MIB)])
    check(lint.rc in (0, 1), f"lint of random bytes: exit {lint.rc}, {lint.err[-300:]!r}")


@case
def log_of_only_carriage_returns(ctx: Ctx):
    no_oom(ctx.run("diagnose", "-", stdin_chunks=(b"\r" * MIB for _ in range(64))), "standard input (1 lines)")


@case
def log_with_nul_bytes_around_an_oom(ctx: Ctx):
    # NULs before, inside a line and after: the OOM is still found, on its line.
    log = fixture_log(ctx)
    text = b"\0" * MIB + log.replace(b"loss", b"lo\0ss") + b"\0" * MIB
    path = ctx.write("nul.log", text)
    run = ctx.run("diagnose", path)
    check(run.rc == 1 and "nul.log:31: error[OOM101]" in run.out, f"the OOM among NULs: {run.rc} {run.out[:300]!r}")


@case
def log_sparse_four_gib_file(ctx: Ctx):
    path = ctx.path("sparse.log")
    with open(path, "wb") as f:
        f.truncate(4 * GIB)
    no_oom(ctx.run("diagnose", path), "sparse.log (1 lines)")
    refused(ctx.run("snapshot", path), "sparse.log", "sparse.log")
    os.unlink(path)


def cut_and_regrown_once(ctx: Ctx, path: str, reading: Callable[[int], bool], period: float):
    """A `during` for ctx.run: waits (at most 4000 periods) until reading(pid)
    says oomlens is reading `path`, then cuts the file to nothing and writes
    the fixture log (with an OOM) into it."""
    def mutate(pid: int) -> None:
        for _ in range(4000):
            try:
                if reading(pid):
                    break
            except (OSError, ValueError, IndexError):
                pass
            threading.Event().wait(period)
        with open(path, "r+b") as f:
            f.truncate(0)
        with open(path, "ab") as f:
            f.write(fixture_log(ctx))
    return mutate


@case
def log_truncated_and_grown_while_read(ctx: Ctx):
    # 1 GiB (sparse) that is cut to nothing, then grows again with an OOM,
    # while oomlens reads it: whatever it saw, it ends normally.
    path = ctx.path("moving.log")
    with open(path, "wb") as f:
        f.truncate(GIB)

    def offset_moved(pid: int) -> bool:
        fdinfo = f"/proc/{pid}/fdinfo"
        return any(int(open(f"{fdinfo}/{fd}").read().split()[1]) > 0 for fd in os.listdir(fdinfo)
                   if os.readlink(f"/proc/{pid}/fd/{fd}") == path)

    run = ctx.run("diagnose", path, during=cut_and_regrown_once(ctx, path, offset_moved, 0.005))
    check(run.rc in (0, 1), f"a file that moved under the reader: exit {run.rc}, {run.err[-300:]!r}")
    os.unlink(path)


@case
def long_log_cut_short_while_mapped(ctx: Ctx):
    # A long log is read in pieces, each mapped. Cut to nothing while
    # mapped (the pages past the new end would raise SIGBUS), then grown again
    # with an OOM: whatever it saw, it ends normally.
    path = ctx.path("rotated.log")
    line = b"[rank0]: step 100 loss 2.5\n"
    with open(path, "wb") as f:
        for k in range(GIB // MIB):
            f.seek(k * MIB)
            f.write(line)
        f.truncate(GIB)

    def mapped(pid: int) -> bool:
        return path in open(f"/proc/{pid}/maps").read()

    run = ctx.run("diagnose", path, during=cut_and_regrown_once(ctx, path, mapped, 0.001))
    check(run.rc in (0, 1), f"a mapped log cut short: exit {run.rc}, {run.err[-300:]!r}")
    os.unlink(path)


@case
def log_fifo_and_dev_zero(ctx: Ctx):
    fifo = ctx.path("job.fifo")
    os.mkfifo(fifo)
    log = fixture_log(ctx)
    writer = threading.Thread(target=lambda: open(fifo, "wb").write(log), daemon=True)
    writer.start()
    run = ctx.run("diagnose", fifo)
    writer.join(10)
    check(run.rc == 1 and "job.fifo:31: error[OOM101]" in run.out, f"a log from a FIFO: {run.rc} {run.out[:200]!r}")
    # /dev/zero never ends: refused at once, not read forever.
    refused(ctx.run("diagnose", "/dev/zero"), "/dev/zero", "is a device")
    refused(ctx.run("snapshot", "/dev/zero"), "/dev/zero", "is a device")
    refused(ctx.run("lint", "--stdin-filename", "x.py", "/dev/zero"), "/dev/zero", "is a device")
    # The null device is an empty file, as it always was.
    no_oom(ctx.run("diagnose", "/dev/null"), "/dev/null")


# ---------------------------------------------------------------------------
# snapshots

def snapshot_with_frames(frames_bytes: bytes) -> bytes:
    """A small protocol-2 snapshot whose one trace entry's frames are `frames_bytes`."""
    import pickle
    snap = {"segments": [], "device_traces": [[{"action": "alloc", "addr": 1 << 30, "size": MIB, "stream": 0,
                                                "frames": "FRAMES_PLACEHOLDER"}]]}
    data = pickle.dumps(snap, protocol=2)
    needle = b"X" + struct.pack("<I", 18) + b"FRAMES_PLACEHOLDER"
    assert data.count(needle) == 1
    return data.replace(needle, frames_bytes)


@case
def snapshot_string_of_two_to_the_forty_bytes(ctx: Ctx):
    path = ctx.write("huge_string.pickle", b"\x80\x04\x8d" + struct.pack("<Q", 1 << 40) + b"abc")
    refused(ctx.run("snapshot", path), "huge_string.pickle", "declares 1099511627776 bytes")


@case
def snapshot_of_100000_nested_lists(ctx: Ctx):
    n = 100_000
    path = ctx.write("nested.pickle", b"\x80\x02" + b"]" * n + b"a" * (n - 1) + b".")
    refused(ctx.run("snapshot", path), "nested.pickle", "APPEND")


@case
def snapshot_with_cyclic_memo_references(ctx: Ctx):
    # A list memoized, fetched back and appended into itself.
    path = ctx.write("cycle.pickle", b"\x80\x02]q\x00h\x00a.")
    refused(ctx.run("snapshot", path), "cycle.pickle", "recursive structures are not read")


@case
def snapshot_trace_with_frames_that_do_not_exist(ctx: Ctx):
    path = ctx.write("no_frames.pickle", snapshot_with_frames(b"h\x63"))  # BINGET 99: never stored
    refused(ctx.run("snapshot", path), "no_frames.pickle", "memo index 99 was never stored")
    good = ctx.write("empty_frames.pickle", snapshot_with_frames(b"]"))  # the control: an empty stack reads
    check(ctx.run("snapshot", good).rc == 0, "the same snapshot with empty frames is read")


# ---------------------------------------------------------------------------
# scripts and launch files, on the command line and in the editor

def open_and_pull(ctx: Ctx, uri: str, language: str, text: str) -> list:
    s = LspServer(ctx.binary, name=language)
    try:
        s.initialize(client_capabilities(pull=True))
        s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": 1,
                                                           "text": text}})
        result = s.call_ok("textDocument/diagnostic", {"textDocument": {"uri": uri}}, timeout=120)
        s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 9}})
        check(not s.answered_once_problems(), f"{language}: {s.answered_once_problems()}")
        hwm = int(open(f"/proc/{s.proc.pid}/status").read().split("VmHWM:")[1].split()[0])
        check(hwm <= ctx.bound_kib, f"{language}: server peak {hwm} KiB over the bound")
        check(s.shutdown_and_exit(timeout=60) == 0, f"{language}: the server did not exit cleanly")
        return result["items"]
    finally:
        s.kill()


@case
def python_file_of_50000_nested_brackets(ctx: Ctx):
    text = "x = " + "[" * 50_000 + "]" * 50_000 + "\nimport torch\ntorch.cuda.empty_cache()\n"
    path = ctx.write("deep.py", text.encode())
    run = ctx.run("lint", path)
    check(run.rc in (0, 1) and "Traceback" not in run.err, f"lint of deep brackets: {run.rc} {run.err[-300:]!r}")
    unclosed = ctx.write("unclosed.py", ("x = " + "(" * 50_000 + "\n").encode())
    check(ctx.run("lint", unclosed).rc in (0, 1), "lint of 50,000 unclosed brackets")
    open_and_pull(ctx, "file:///tmp/hostile/deep.py", "python", text)


@case
def launch_json_of_one_mib_of_nesting(ctx: Ctx):
    os.makedirs(ctx.path(".vscode"), exist_ok=True)
    for name, text in (("open", '{"configurations": ' + "[" * MIB + "\n"),
                       ("closed", "[" * (MIB // 2) + "]" * (MIB // 2)),
                       ("objects", '{"a":' * (MIB // 5) + "1" + "}" * (MIB // 5))):
        path = ctx.write(".vscode/launch.json", text.encode())
        run = ctx.run("lint", path)
        check(run.rc in (0, 1), f"launch.json ({name}): exit {run.rc}, {run.err[-300:]!r}")
        open_and_pull(ctx, "file:///tmp/hostile/.vscode/launch.json", "jsonc", text)


# ---------------------------------------------------------------------------
# the language server's framing

@case
def lsp_content_length_of_two_to_the_63(ctx: Ctx):
    s = LspServer(ctx.binary, name="content-length")
    try:
        s.initialize()
        for n, rid in ((1 << 63, 901), ((1 << 63) - 1, 902), ((1 << 64) - 1, 903)):
            s.sent_ids.append(rid)
            s.send_raw(b"Content-Length: %d\r\n\r\n{}" % n + frame(encode(
                {"jsonrpc": "2.0", "id": rid, "method": "oomlens/ping"})))
            reply = s.wait_response(rid, timeout=30)
            check(reply["error"]["code"] == METHOD_NOT_FOUND, f"the request after Content-Length {n}: {reply}")
        # The log line was written before the replies, but on another pipe:
        # this client's stderr reader may not have read it yet.
        try:
            s.wait_for(lambda: "absurd" in s.stderr, timeout=30, what="the log line naming the length")
        except Exception:  # noqa: BLE001
            pass
        check("absurd" in s.stderr, f"the length is named absurd: {s.stderr[-300:]!r}")
        check(not s.answered_once_problems(), str(s.answered_once_problems()))
        check(s.shutdown_and_exit() == 0, "clean exit")
    finally:
        s.kill()


@case
def lsp_one_gib_request_that_is_not_a_document(ctx: Ctx):
    s = LspServer(ctx.binary, name="1 GiB request")
    try:
        s.initialize()
        # The id comes last, after the gigabyte: it is read as the bytes go by.
        head = b'{"jsonrpc":"2.0","method":"workspace/executeCommand","params":{"command":"oomlens.diagnoseText",' \
               b'"arguments":["'
        tail = b'"]},"id":4711}'
        fill = GIB - len(head) - len(tail)
        s.sent_ids.append(4711)
        s.send_raw(b"Content-Length: %d\r\n\r\n" % GIB + head)
        chunk = b"x" * MIB
        for _ in range(fill // MIB):
            s.send_raw(chunk)
        s.send_raw(b"x" * (fill % MIB) + tail)
        reply = s.wait_response(4711, timeout=120)
        check(reply.get("error", {}).get("code") == REQUEST_FAILED and "256 MiB" in reply["error"]["message"],
              f"the 1 GiB request is answered with the limit: {reply}")
        check(s.call("oomlens/ping")["error"]["code"] == METHOD_NOT_FOUND, "the server reads on")
        hwm = int(open(f"/proc/{s.proc.pid}/status").read().split("VmHWM:")[1].split()[0])
        check(hwm <= ctx.bound_kib, f"server peak {hwm} KiB over the bound of {ctx.bound_kib} KiB")
        check(not s.answered_once_problems(), str(s.answered_once_problems()))
        check(s.shutdown_and_exit() == 0, "clean exit")
    finally:
        s.kill()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("fixtures")
    # 256 MiB: oomlens streams logs in 1 MiB reads with a bounded lookback,
    # refuses a pickle before allocating what it declares, and skips an
    # oversized LSP body without buffering it; measured peaks here are under
    # 60 MiB (a 1 MiB launch.json's parse). A regression that buffers any of
    # these inputs whole (1 to 4 GiB) is far over it.
    ap.add_argument("--memory-bound-mib", type=int, default=256)
    ap.add_argument("filters", nargs="*")
    args = ap.parse_args()
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="oomlens-hostile-") as tmp:
        for fn in CASES:
            if args.filters and not any(f in fn.__name__ for f in args.filters):
                continue
            ctx = Ctx(os.path.abspath(args.binary), args.fixtures, args.memory_bound_mib, tmp)
            try:
                fn(ctx)
                passed += 1
                print(f"ok    {fn.__name__}", flush=True)
            except Exception:  # noqa: BLE001
                failed += 1
                print(f"FAIL  {fn.__name__}\n" + traceback.format_exc(limit=4), flush=True)
    print(f"hostile inputs: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
