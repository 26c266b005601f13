#!/usr/bin/env python3
"""Checks a generated log against its manifest, and oomlens' answer against both.

    bench/manifest_check.py verify LOG MANIFEST [--full]
    bench/manifest_check.py compare MANIFEST OOMLENS_JSON [--tsv]

verify: is the ground truth true? Independently of the generator:
  - `grep -n -b -a -E 'out of memory|RESOURCE_EXHAUSTED' LOG` must list exactly
    the manifest's OOM message lines and its look-alike lines marked "rg", with
    the same line numbers and line offsets;
  - every manifest entry (OOM or look-alike) is checked by counting '\\n' bytes
    up to its offset: its line number is 1 + the '\\n' before its line, its line
    offset follows a '\\n' (or is 0), no '\\n' lies between the line's start and
    the entry's offset, and the line holds the entry's text;
  - with --full, the figures the manifest's "measured" block claims (bare '\\r',
    lines with memory/allocat/cuda, traceback lines, longest line...) are
    recounted line by line (slow: about 20 s a GiB).
  Exit status 1 when anything disagrees.

compare: what oomlens reported (`oomlens diagnose --format json LOG`) against
  the manifest. Each incident's `line` and its `echoes[].line` are the OOM
  message lines it found; they should be exactly the manifest's. Prints one
  summary (or, with --tsv, one tab-separated line: incidents found, incidents
  planted, messages planted, reported lines not planted, planted lines missed,
  findings, finding lines on planted look-alike lines, planted look-alike lines
  without a finding). Exit status 0 whatever the comparison says; 2 when a file
  cannot be read.

Python 3's standard library only.
"""

import argparse
import json
import re
import subprocess
import sys

RG_PATTERN = "out of memory|RESOURCE_EXHAUSTED"

# The text each kind of look-alike line holds (the generator's "what").
WHAT_TEXT = {
    "invoked_oom_killer": b"invoked oom-killer",
    "oom_kill_constraint": b"oom-kill:constraint",
    "kernel_killed_process": b"Out of memory: Killed process",
    "cgroup_out_of_memory_killed_process": b"Memory cgroup out of memory: Killed process",
    "bash_killed": b" Killed ",
    "slurm_oom_kill_event": b"oom-kill event",
    "kubernetes_oomkilled": b"OOMKilled",
    "bus_error_shm": b"Unexpected bus error",
    "killed_by_signal": b"is killed by signal",
    "exited_unexpectedly": b"exited unexpectedly",
    "default_cpu_allocator": b"DefaultCPUAllocator: can't allocate memory",
    "numpy_unable_to_allocate": b"Unable to allocate",
    "illegal_memory_access": b"an illegal memory access was encountered",
    "misaligned_address": b"misaligned address",
    "device_side_assert": b"device-side assert triggered",
    "deepspeed_cache_flushes": b"allocator cache flushes since last step",
    "tf_bfc_not_a_failure": b"freed_by_count=0",
    "tf_bfc_garbage_collection": b"Garbage collection: deallocate free memory regions",
    "nccl_watchdog_timeout": b"Watchdog caught collective operation timeout",
    "sigterm": b"SIGTERM",
    "exitcode": b"exitcode",
    "srun_task_exit": b"Exited with exit code",
    "slurm_step_cancelled": b"CANCELLED AT",
    "mpirun_exit": b"mpirun detected",
    "child_failed_error": b"ChildFailedError",
    "pytorch_cuda_alloc_conf": b"PYTORCH_CUDA_ALLOC_CONF=",
}


def load(path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"manifest_check: cannot read {path}: {e}", file=sys.stderr)
        sys.exit(2)


# ------------------------------------------------------------------ verify

def grep_lines(log):
    """(line, line offset) of every matching line, as grep -n -b prints them."""
    done = subprocess.run(["grep", "-n", "-b", "-a", "-E", RG_PATTERN, log], stdout=subprocess.PIPE)
    if done.returncode not in (0, 1):
        print("manifest_check: grep failed", file=sys.stderr)
        sys.exit(2)
    out = set()
    for raw in done.stdout.split(b"\n"):
        if not raw:
            continue
        line, offset, _ = raw.split(b":", 2)
        out.add((int(line), int(offset)))
    return out


def newline_positions_check(log, entries):
    """For entries sorted by offset: the line number at each line offset, by
    counting '\\n' bytes; returns a list of problems."""
    problems = []
    order = sorted(range(len(entries)), key=lambda i: entries[i]["line_offset"])
    chunk_size = 16 << 20
    lines_before = 0  # '\n' in the file before `base`
    base = 0
    k = 0
    with open(log, "rb") as f:
        while k < len(order):
            chunk = f.read(chunk_size)
            if not chunk:
                break
            pos = 0  # '\n' counted in chunk[:pos]
            counted = 0
            end = base + len(chunk)
            while k < len(order) and entries[order[k]]["line_offset"] < end:
                e = entries[order[k]]
                rel = e["line_offset"] - base
                counted += chunk.count(b"\n", pos, rel)
                pos = rel
                want = lines_before + counted + 1
                if e["line"] != want:
                    problems.append(f"line {e['line']} (offset {e['line_offset']}): counting '\\n' gives line {want}")
                k += 1
            lines_before += counted + chunk.count(b"\n", pos)
            base = end
    if k < len(order):
        problems.append(f"{len(order) - k} entries lie past the end of the file")
    return problems


def line_at(f, line_offset, limit=4 << 20):
    f.seek(line_offset)
    data = f.read(limit)
    nl = data.find(b"\n")
    return data if nl < 0 else data[:nl]


def verify(args):
    m = load(args.manifest)
    ooms, looks = m["ooms"], m["lookalikes"]
    problems = []

    # 1. grep -n -b against the OOM lines and the rg look-alikes.
    want = {(o["line"], o["line_offset"]) for o in ooms} | {(l["line"], l["line_offset"]) for l in looks if l["rg"]}
    got = grep_lines(args.log)
    for line, off in sorted(got - want)[:10]:
        problems.append(f"grep -n finds line {line} (offset {off}) that the manifest does not list")
    for line, off in sorted(want - got)[:10]:
        problems.append(f"the manifest lists line {line} (offset {off}) that grep -n does not find")
    if got != want:
        problems.append(f"grep -n: {len(got)} lines, manifest: {len(want)} ({len(got - want)} extra, {len(want - got)} missing)")

    # 2. Every entry's line number by counting '\n', its offsets and its text.
    problems += newline_positions_check(args.log, ooms + looks)
    with open(args.log, "rb") as f:
        if f.seek(0, 2) != m["size"]:
            problems.append(f"the log has {f.tell()} bytes, the manifest says {m['size']}")
        for e in ooms + looks:
            name = f"{e.get('what', 'OOM')} at line {e['line']}"
            if e["line_offset"] > 0:
                f.seek(e["line_offset"] - 1)
                if f.read(1) != b"\n":
                    problems.append(f"{name}: line offset {e['line_offset']} is not a line start")
            text = line_at(f, e["line_offset"])
            rel = e["offset"] - e["line_offset"]
            if rel < 0 or rel > len(text):
                problems.append(f"{name}: offset {e['offset']} is not on its line")
                continue
            needle = WHAT_TEXT.get(e["what"]) if "what" in e else b"out of memory. Tried to allocate"
            if needle is None:
                problems.append(f"{name}: unknown kind of message")
            elif needle not in text[rel:]:
                problems.append(f"{name}: its text is not on the line after offset {e['offset']}")

    # 3. Optionally, recount the measured figures.
    if args.full:
        problems += recount(args.log, m["measured"])

    total = len(ooms) + len(looks)
    if problems:
        print(f"manifest check: {len(problems)} problem(s) in {len(ooms)} OOM and {len(looks)} look-alike entries:")
        for p in problems[:40]:
            print("  " + p)
        return 1
    rg_looks = sum(1 for l in looks if l["rg"])
    print(f"manifest check: OK: {len(ooms)} OOM message lines and {rg_looks} rg-counted look-alike lines = grep -n's "
          f"{len(got)} lines and offsets; all {total} entries' lines, offsets and texts agree with the bytes"
          + ("; measured figures recounted" if args.full else ""))
    return 0


WORDS = re.compile(rb"memory|allocat|cuda", re.IGNORECASE)


def recount(log, measured):
    """The measured block, recounted a line at a time (a line = bytes up to '\\n')."""
    lines = bare_cr = crlf = longest = big = words = tb = rg = oom = oome = 0
    rg_re = re.compile(rb"out of memory|RESOURCE_EXHAUSTED")
    with open(log, "rb") as f:
        for raw in f:
            if raw.endswith(b"\n"):
                lines += 1
                body = raw[:-1]
            else:
                body = raw
            n = len(body)
            if n > longest:
                longest = n
            if n >= 100000:
                big += 1
            cr = body.count(b"\r")
            if body.endswith(b"\r"):
                crlf += 1
                cr -= 1
            bare_cr += cr
            if WORDS.search(body):
                words += 1
            if b"Traceback (most recent call last)" in body:
                tb += 1
            if rg_re.search(body):
                rg += 1
            if b"OOM" in body:
                oom += 1
            if b"OutOfMemory" in body:
                oome += 1
    mine = {"lines": lines, "bare_cr": bare_cr, "crlf_lines": crlf, "longest_line": longest, "lines_100k": big,
            "memory_word_lines": words, "traceback_lines": tb, "rg_lines": rg, "oom_word_lines": oom,
            "outofmemory_word_lines": oome}
    return [f"measured {k}: manifest says {measured.get(k)}, recounted {v}" for k, v in mine.items()
            if measured.get(k) != v]


# ------------------------------------------------------------------ compare

def compare(args):
    m = load(args.manifest)
    d = load(args.json)
    planted = {o["line"] for o in m["ooms"]}
    reported = set()
    for inc in d.get("incidents", []):
        if isinstance(inc.get("line"), int):
            reported.add(inc["line"])
        for e in inc.get("echoes") or []:
            if isinstance(e, dict) and isinstance(e.get("line"), int):
                reported.add(e["line"])
    wrong = reported - planted
    missed = planted - reported

    look_lines = {l["line"] for l in m["lookalikes"]}
    finding_lines = set()
    findings = 0
    for f in d.get("findings", []):
        findings += 1
        if isinstance(f.get("line"), int):
            finding_lines.add(f["line"])
    for inc in d.get("incidents", []):
        for c in inc.get("collateral") or []:
            if isinstance(c, dict) and isinstance(c.get("line"), int):
                findings += 1
                finding_lines.add(c["line"])
    on_planted = len(finding_lines & look_lines)
    unreported = len({l["line"] for l in m["lookalikes"] if l["kind"] != "allocator_setting"} - finding_lines)

    found = len(d.get("incidents", []))
    if args.tsv:
        print("\t".join(str(x) for x in (found, m["incidents"], len(planted), len(wrong), len(missed), findings,
                                         on_planted, unreported)))
        return 0
    print(f"incidents: oomlens {found}, planted {m['incidents']} ({len(planted)} messages)")
    print(f"OOM message lines: {len(reported)} reported, {len(wrong)} not a planted message line, "
          f"{len(missed)} planted lines not reported")
    for line in sorted(wrong)[:5]:
        near = min(planted, key=lambda p: abs(p - line)) if planted else None
        print(f"  reported line {line} (nearest planted: {near})")
    for line in sorted(missed)[:5]:
        print(f"  planted line {line} not reported")
    capped = any(isinstance(f, dict) and f.get("capped") for f in d.get("files", []))
    elsewhere = sorted(finding_lines - look_lines)
    print(f"findings: {findings} on {len(finding_lines)} lines: {on_planted} planted look-alike/collateral lines, "
          f"{len(elsewhere)} other lines; {unreported} planted look-alike lines without a finding"
          + (" (oomlens says it capped its findings)" if capped else ""))
    if elsewhere:
        print("  first other lines: " + ", ".join(str(x) for x in elsewhere[:5]))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("verify", help="check a log against its manifest")
    v.add_argument("log")
    v.add_argument("manifest")
    v.add_argument("--full", action="store_true", help="also recount the measured figures (slow)")
    c = sub.add_parser("compare", help="compare oomlens' JSON with the manifest")
    c.add_argument("manifest")
    c.add_argument("json")
    c.add_argument("--tsv", action="store_true", help="one tab-separated line of numbers")
    args = ap.parse_args()
    sys.exit(verify(args) if args.cmd == "verify" else compare(args))


if __name__ == "__main__":
    main()
