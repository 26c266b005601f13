#!/usr/bin/env python3
"""Benchmark: a log dense with OOMs, the family the content matrix does not hold.

A training loop that catches the out-of-memory error and skips the batch
(fairseq's "ran out of memory with exception", hand-written try/except loops,
batch-size finders) prints a full traceback and PyTorch's message, with
figures of its own, every few dozen steps, for the whole run. The matrix logs
hold 36 to 50 OOMs a GiB; this one holds one every 20-80 lines.

It writes the log (deterministic for a seed; reused when present), then times
`oomlens diagnose --format json` and `rg -c 'out of memory|RESOURCE_EXHAUSTED'`
on the warm file, alternating, and prints medians, the ratio and oomlens's
peak RSS; then the Python peer of the content matrix (bench/python_peer.py,
the script a user would write), whose goal there is 10x slower than oomlens
at least. It checks that the report accounts for every planted message at
grep -n's line (as incident or echo), or counted in `ooms_not_analysed` past
the analyzer's bound. It reports and never fails on a ratio: it exits non-zero
only when it cannot measure or a line is wrong.

Usage: bench/oom_loop_bench.py [--size 256M] [--runs 5] [--peer-runs 1] [--log PATH]
Environment: OOMLENS (default build/oomlens).
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

TRACEBACK = """Traceback (most recent call last):
  File "/home/user/project/train.py", line 212, in train_step
    loss = model(batch).loss
  File "/usr/lib/python3/dist-packages/torch/nn/modules/module.py", line 1532, in _wrapped_call_impl
    return self._call_impl(*args, **kwargs)
"""
MESSAGE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req:.2f} GiB. GPU {gpu} has a total capacity of "
    "79.15 GiB of which {free:.2f} MiB is free. Including non-PyTorch memory, this process has {inuse:.2f} GiB memory "
    "in use. Of the allocated memory {alloc:.2f} GiB is allocated by PyTorch, and {res:.2f} GiB is reserved by PyTorch "
    "but unallocated. If reserved but unallocated memory is large try setting "
    "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n"
)


def parse_size(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)


def generate(path, size, seed):
    """Writes the log; returns the 1-based lines of the planted messages."""
    rng = random.Random(seed)
    lines_of_oom = []
    line = 0
    written = 0
    step = 0
    with open(path + ".tmp", "w") as out:
        while written < size:
            chunk = []
            for _ in range(rng.randint(20, 80)):
                step += 1
                chunk.append(f"[rank0]: step {step} | loss {rng.random():.4f} | lr 3.0e-04 | tokens/s {rng.randint(1000, 9000)}\n")
            alloc = rng.uniform(40, 70)
            res = rng.uniform(0.1, 9)
            chunk.append(TRACEBACK)
            chunk.append(MESSAGE.format(req=rng.uniform(0.5, 8), gpu=0, free=rng.uniform(10, 900),
                                        inuse=alloc + res + rng.uniform(0.5, 2), alloc=alloc, res=res))
            chunk.append("| WARNING: ran out of memory with exception, skipping batch\n")
            text = "".join(chunk)
            lines_of_oom.append(line + text[: text.index("torch.OutOfMemoryError")].count("\n") + 1)
            line += text.count("\n")
            out.write(text)
            written += len(text.encode())
    os.replace(path + ".tmp", path)
    with open(path + ".lines.json", "w") as f:
        json.dump(lines_of_oom, f)
    return lines_of_oom


def run(cmd):
    """Wall seconds and peak RSS (KiB) of one run; stdout kept."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        sys.exit(f"oom_loop_bench: {cmd[0]} died of signal {-code}")
    return wall, usage.ru_maxrss, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--size", default="256M")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--peer-runs", type=int, default=1, help="runs of the Python peer (0: none; it takes seconds)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--log", default=os.path.join(ROOT, "bench/data/oom-loop.log"))
    args = ap.parse_args()
    oomlens = os.environ.get("OOMLENS", os.path.join(ROOT, "build/oomlens"))
    if not os.access(oomlens, os.X_OK):
        sys.exit(f"oom_loop_bench: {oomlens} is not an executable (build first, or set OOMLENS)")
    size = parse_size(args.size)
    os.makedirs(os.path.dirname(os.path.abspath(args.log)), exist_ok=True)
    if os.path.exists(args.log) and os.path.exists(args.log + ".lines.json") and os.path.getsize(args.log) >= size:
        with open(args.log + ".lines.json") as f:
            planted = json.load(f)
    else:
        planted = generate(args.log, size, args.seed)
    with open(args.log, "rb") as f:  # warm the page cache
        while f.read(1 << 24):
            pass

    ours = [oomlens, "diagnose", "--format", "json", args.log]
    peer = ["rg", "-c", "out of memory|RESOURCE_EXHAUSTED", args.log]
    times = {"oomlens": [], "rg": []}
    rss = []
    report = None
    run(ours)
    run(peer)
    for _ in range(args.runs):
        wall, kib, out = run(ours)
        times["oomlens"].append(wall)
        rss.append(kib)
        report = out
        times["rg"].append(run(peer)[0])

    python_peer = [sys.executable, os.path.join(ROOT, "bench/python_peer.py"), args.log]
    times["python"] = [run(python_peer)[0] for _ in range(args.peer_runs)]

    doc = json.loads(report)
    found = set()
    for inc in doc["incidents"]:
        found.add(inc["line"])
        found.update(e["line"] for e in inc["echoes"])
    missing = sorted(set(planted) - found)
    extra = sorted(found - set(planted))
    # Past the analyzer's bound messages are counted, not analysed: those are
    # the missing ones, and the report must say how many.
    not_analysed = sum(f.get("ooms_not_analysed", 0) for f in doc["files"])
    med = {k: statistics.median(v) for k, v in times.items() if v}
    print(f"log: {args.log} ({os.path.getsize(args.log) / (1 << 20):.0f} MiB, {len(planted)} OOMs)")
    print(f"oomlens diagnose --format json: median {med['oomlens'] * 1000:.1f} ms, peak RSS {max(rss) / 1024:.1f} MiB")
    print(f"rg -c: median {med['rg'] * 1000:.1f} ms")
    print(f"oomlens/rg: {med['oomlens'] / med['rg']:.2f}x; per OOM: {med['oomlens'] / len(planted) * 1e6:.1f} us")
    if "python" in med:
        print(f"python peer: median {med['python']:.2f} s ({args.peer_runs} run(s)); python/oomlens: "
              f"{med['python'] / med['oomlens']:.1f}x (the matrix's goal: 10x at least)")
    print(f"incidents: {len(doc['incidents'])}; messages at grep -n's line: {len(planted) - len(missing)}/{len(planted)}"
          + (f"; counted, not analysed: {not_analysed}" if not_analysed else "")
          + (f"; missing {missing[:5]}" if len(missing) != not_analysed else "")
          + (f"; not planted {extra[:5]}" if extra else ""))
    return 1 if len(missing) != not_analysed or extra else 0


if __name__ == "__main__":
    sys.exit(main())
