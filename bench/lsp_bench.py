#!/usr/bin/env python3
"""How fast is `oomlens lsp`? The "Speed" figures of the language server.

    bench/lsp_bench.py [--size 100M] [--runs 5] [--init-runs 20] [--requests 200]
                       [--warmup 1] [--log FILE] [--oomlens PATH] [--gen PATH]
                       [--only init,push,pull,edit] [--edits 20]

Starts the real `oomlens lsp` over pipes (one fresh process per run, speaking
JSON-RPC through tests/lsp_e2e/lsp_client.py) and reports medians of:

- initialize: the round trip of `initialize`, sent as soon as the process is
  spawned (so it includes whatever start-up the server still has to do);
- push: from the first byte of a `didOpen` carrying a generated training log
  (gen_training_log, 100 MiB by default) to the arrival of its
  `publishDiagnostics`, for a client without pull diagnostics;
- pull: the same to the answer of a `textDocument/diagnostic` request written
  right behind the `didOpen`, for a client with pull diagnostics;
- edit: with the log open and analysed, --edits one-line edits (a line
  typed in at spread-out places, one at a time, as a user types), each from
  the first byte of its incremental `didChange` to the `publishDiagnostics`
  of that version;
- codeAction and hover: p50 and p99 latency over --requests sequential
  requests each on the log's OOM lines (push runs);
- memory: VmRSS of the server once the document is open and analysed, minus
  the document's size (and VmHWM, the peak, for information).

Times run from just before the client writes a request (already encoded)
to the moment the reply's last byte has been read from the pipe, before the
client decodes it: they include the pipes and the client's reader thread
waking up, not the Python json module's time to decode the reply.

Everything printed also goes to bench/results/lsp-<date>-<time>.txt. The
script exits non-zero only when it cannot measure, never because a target is
missed: a timing is a measurement to read, not an assertion.
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from typing import Any, Callable, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lsp_e2e"))
from lsp_client import LspServer, client_capabilities, encode, frame  # noqa: E402

MIB = 1024 * 1024

# The targets of the "Speed" section.
TARGET_INIT_MS = 20.0
TARGET_DIAGNOSTICS_MS = 150.0
TARGET_REQUEST_P99_MS = 1.0
TARGET_RSS_MIB = 50.0


class TimedServer(LspServer):
    """An LspServer that stamps each message with the time its last byte was
    read from the pipe, before the client decodes it (Python's json takes
    about 0.2 ms for a 20 KB code action reply: the client's cost, not the
    server's)."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.arrival: dict[int, float] = {}  # id(message) -> perf_counter()
        self._body_read_at = 0.0
        super().__init__(*args, **kwargs)

    def _read_stdout(self) -> None:
        # LspServer._read_stdout with a time stamp once a body is read: the
        # same framing checks, the same records.
        stream = io.BufferedReader(self.proc.stdout, buffer_size=1 << 16)  # type: ignore[arg-type]
        try:
            while True:
                length = None
                while True:
                    line = stream.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    if not line.endswith(b"\r\n"):
                        self._protocol_error(f"header line not ended by CRLF: {line!r}")
                    key, _, value = line.decode("ascii", "replace").partition(":")
                    if key.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    self._protocol_error("header block without Content-Length")
                    continue
                body = stream.read(length)
                self._body_read_at = time.perf_counter()
                if len(body) < length:
                    self._protocol_error(f"output ended inside a body ({len(body)} of {length} bytes)")
                    return
                try:
                    message = json.loads(body.decode("utf-8"))
                except (UnicodeDecodeError, json.JSONDecodeError) as e:
                    self._protocol_error(f"server sent a body that is not UTF-8 JSON: {e}")
                    continue
                self._dispatch(message)
        except Exception as e:  # noqa: BLE001 - recorded, reported by the run
            self._protocol_error(f"reader failed: {e!r}")
        finally:
            with self._cond:
                self.stdout_closed = True
                self._cond.notify_all()

    def _dispatch(self, message: dict) -> None:  # runs on the reader thread
        with self._cond:
            self.arrival[id(message)] = self._body_read_at
        super()._dispatch(message)

    def arrived(self, message: dict) -> float:
        with self._cond:
            return self.arrival[id(message)]

    def rss_kib(self) -> dict[str, int]:
        values = {}
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    values[key] = int(rest.split()[0])
        return values


# --------------------------------------------------------------------- output

class Report:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def fail(text: str) -> None:
    print(f"lsp_bench: {text}", file=sys.stderr)
    sys.exit(2)


def parse_size(text: str) -> int:
    units = {"": 1, "K": 1024, "M": MIB, "G": 1024 * MIB}
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    unit = t[-1] if t and t[-1] in "KMG" else ""
    try:
        return int(t[: len(t) - len(unit)]) * units[unit]
    except ValueError:
        fail(f"bad size: {text}")
        raise


def human(n: float) -> str:
    if n >= 1024 * MIB:
        return f"{n / (1024 * MIB):.2f} GiB"
    if n >= MIB:
        return f"{n / MIB:.1f} MiB"
    return f"{n / 1024:.1f} KiB"


def percentile(values: list[float], p: float) -> float:
    """Nearest-rank percentile (p99 of 200 samples is the 198th smallest)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * p // 100))  # ceil
    return ordered[int(rank) - 1]


# ----------------------------------------------------------------------- data

def data_path(size: int) -> str:
    if size % (1024 * MIB) == 0:
        name = f"train-{size // (1024 * MIB)}g.log"
    elif size % MIB == 0:
        name = f"train-{size // MIB}m.log"
    else:
        name = f"train-{size}.log"
    return os.path.join(ROOT, "bench", "data", name)


def gen_source_id() -> str:
    """The generator's source hash, as diagnose_vs_ripgrep.sh records it."""
    with open(os.path.join(ROOT, "bench", "gen_training_log.cpp"), "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:16]


def ensure_log(size: int, gen: str) -> tuple[str, str]:
    """The generated log (made once, reused while the generator source is unchanged) and its summary."""
    path = data_path(size)
    summary = path + ".gen.txt"
    source = f"source: {gen_source_id()}"
    if os.path.isfile(path) and os.path.getsize(path) == size and os.path.isfile(summary):
        with open(summary) as f:
            text = f.read()
        if source in text.splitlines():
            return path, text
    if not os.access(gen, os.X_OK):
        fail(f"generator not found at {gen} (build it: cmake --build build; or pass --gen)")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    print(f"generating {os.path.relpath(path, ROOT)} ({human(size)}) ...", file=sys.stderr, flush=True)
    done = subprocess.run([gen, "--size", str(size), path + ".tmp"], stderr=subprocess.PIPE, text=True)
    if done.returncode != 0:
        fail(f"generator failed: {done.stderr}")
    os.sync()
    os.replace(path + ".tmp", path)
    text = done.stderr + source + "\n"
    with open(summary, "w") as f:
        f.write(text)
    return path, text


# ------------------------------------------------------------------ scenarios

def start(binary: str, pull: bool) -> TimedServer:
    s = TimedServer(binary, ("lsp",), name="bench")
    s.initialize(client_capabilities(pull=pull, utf8=False), timeout=30)
    return s


def stop(s: TimedServer) -> None:
    try:
        s.shutdown_and_exit(timeout=30)
    finally:
        s.kill()


def measure_initialize(binary: str) -> float:
    """Round trip of initialize sent right after spawning the server, in ms."""
    s = TimedServer(binary, ("lsp",), name="bench-init")
    try:
        params = {"processId": os.getpid(), "rootUri": None, "clientInfo": {"name": "lsp_bench", "version": "1"},
                  "capabilities": client_capabilities()}
        rid, data = s.request_bytes("initialize", params)
        t0 = time.perf_counter()
        s.send_raw(data)
        reply = s.wait_response(rid, timeout=30)
        if "error" in reply:
            fail(f"initialize failed: {reply['error']}")
        s.notify("initialized", {})
        return (s.arrived(reply) - t0) * 1000
    finally:
        stop(s)


def incident_diagnostics(diagnostics: list) -> list:
    return [d for d in diagnostics if str((d.get("data") or {}).get("oomlens", "")).startswith("incident:")]


def timed_requests(s: TimedServer, n: int, make: Callable[[int], tuple[str, dict]],
                   ok: Callable[[Any], bool]) -> tuple[list[float], int]:
    """Latencies (ms) of n sequential requests, and how many answered as expected."""
    latencies, good = [], 0
    for i in range(n):
        method, params = make(i)
        rid, data = s.request_bytes(method, params)
        t0 = time.perf_counter()
        s.send_raw(data)
        reply = s.wait_response(rid, timeout=30)
        latencies.append((s.arrived(reply) - t0) * 1000)
        good += "error" not in reply and ok(reply.get("result"))
    return latencies, good


class RunResult:
    def __init__(self) -> None:
        self.diagnostics_ms = 0.0
        self.write_ms = 0.0  # how long the client's write of the didOpen took (the server reading it)
        self.incidents = 0
        self.diagnostics = 0
        self.rss: dict[str, int] = {}
        self.hover: list[float] = []
        self.code_action: list[float] = []
        self.hover_ok = 0
        self.code_action_ok = 0


def measure_document(binary: str, did_open: bytes, uri: str, doc_bytes: int, pull: bool,
                     requests: int) -> RunResult:
    r = RunResult()
    s = start(binary, pull)
    try:
        s.settle(0.1)
        if pull:
            rid, pull_request = s.request_bytes("textDocument/diagnostic", {"textDocument": {"uri": uri}})
            # Two writes right after each other, as a client that asks at once
            # sends them (VS Code writes each message on its own). Not one
            # write of a new 102 MiB buffer: on these machines the first write
            # from freshly filled pages takes about twice as long as from the
            # buffer the push runs reuse, which timed the client, not the server.
            t0 = time.perf_counter()
            s.send_raw(did_open)
            s.send_raw(pull_request)
            r.write_ms = (time.perf_counter() - t0) * 1000
            reply = s.wait_response(rid, timeout=120)
            if "error" in reply:
                fail(f"textDocument/diagnostic failed: {reply['error']}")
            diagnostics = reply["result"]["items"]
            r.diagnostics_ms = (s.arrived(reply) - t0) * 1000
        else:
            mark = s.mark()
            t0 = time.perf_counter()
            s.send_raw(did_open)
            r.write_ms = (time.perf_counter() - t0) * 1000

            def published():
                for m in s.messages[mark:]:
                    if m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri:
                        return m
                return None
            message = s.wait_for(published, 120, "publishDiagnostics")
            diagnostics = message["params"]["diagnostics"]
            r.diagnostics_ms = (s.arrived(message) - t0) * 1000
        r.diagnostics = len(diagnostics)
        incidents = incident_diagnostics(diagnostics)
        r.incidents = len(incidents)
        # Open and analysed: let the process settle (worker freeing its
        # buffers), then read its resident memory.
        s.settle(0.2)
        r.rss = s.rss_kib()
        r.rss["doc"] = doc_bytes // 1024
        if requests and incidents:
            def hover(i: int) -> tuple[str, dict]:
                d = incidents[i % len(incidents)]
                start_pos = d["range"]["start"]
                return "textDocument/hover", {"textDocument": {"uri": uri},
                                              "position": {"line": start_pos["line"],
                                                           "character": start_pos["character"] + (i % 7)}}

            def code_action(i: int) -> tuple[str, dict]:
                d = incidents[i % len(incidents)]
                return "textDocument/codeAction", {"textDocument": {"uri": uri}, "range": d["range"],
                                                   "context": {"diagnostics": [d]}}
            r.hover, r.hover_ok = timed_requests(s, requests, hover, lambda res: bool(res and res.get("contents")))
            r.code_action, r.code_action_ok = timed_requests(s, requests, code_action, lambda res: bool(res))
    finally:
        stop(s)
    return r


def measure_edits(binary: str, did_open: bytes, uri: str, lines: int, edits: int) -> list[float]:
    """Milliseconds from each didChange to the publishDiagnostics of its version."""
    s = start(binary, False)
    times = []
    try:
        s.settle(0.1)
        mark = s.mark()
        s.send_raw(did_open)

        def published_version(version: int, after: int):
            def find():
                for m in s.messages[after:]:
                    if (m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
                            and m["params"].get("version") == version):
                        return m
                return None
            return find
        s.wait_for(published_version(1, mark), 120, "publishDiagnostics of the opened log")
        for k in range(edits):
            version = k + 2
            line = (k * 7919 + 13) * lines // (edits * 7919 + 29)  # spread over the log, not in order
            change = LspServer.notification_bytes("textDocument/didChange", {
                "textDocument": {"uri": uri, "version": version},
                "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                              "end": {"line": line, "character": 0}},
                                    "text": f"edit {k}: step {k} loss 2.5\n"}]})
            mark = s.mark()
            t0 = time.perf_counter()
            s.send_raw(change)
            message = s.wait_for(published_version(version, mark), 60, f"publishDiagnostics of version {version}")
            times.append((s.arrived(message) - t0) * 1000)
    finally:
        stop(s)
    return times


# ----------------------------------------------------------------------- main

def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
            mem = f", {kib / MIB:.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    return f"{cpu}, {os.cpu_count()} CPUs{mem}"


def commit() -> str:
    try:
        sha = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return sha + (" (with uncommitted changes)" if dirty else "") if sha else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def verdict(value: float, target: float) -> str:
    return "PASS" if value < target else "FAIL"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--oomlens", default=os.path.join(ROOT, "build", "oomlens"))
    ap.add_argument("--gen", default=os.path.join(ROOT, "build", "bench", "gen_training_log"))
    ap.add_argument("--size", default="100M", help="size of the generated log (default 100M)")
    ap.add_argument("--log", help="use this log file instead of a generated one")
    ap.add_argument("--runs", type=int, default=5, help="runs of each document scenario (default 5)")
    ap.add_argument("--init-runs", type=int, default=20, help="initialize round trips (default 20)")
    ap.add_argument("--requests", type=int, default=200, help="hover and codeAction requests per run (default 200)")
    ap.add_argument("--warmup", type=int, default=1, help="unrecorded runs before each scenario (default 1)")
    ap.add_argument("--only", default="init,push,pull,edit", help="scenarios to run: init,push,pull,edit")
    ap.add_argument("--edits", type=int, default=20, help="edits in the edit scenario (default 20)")
    args = ap.parse_args()
    scenarios = {x.strip() for x in args.only.split(",") if x.strip()}
    if not scenarios <= {"init", "push", "pull", "edit"}:
        fail(f"unknown scenario in --only: {args.only}")
    if args.runs < 1 or args.init_runs < 1:
        fail("--runs and --init-runs must be at least 1")
    binary = os.path.abspath(args.oomlens)
    if not os.access(binary, os.X_OK):
        fail(f"oomlens binary not found at {binary} (build it: cmake --build build; or pass --oomlens)")

    if args.log:
        log_path, gen_summary = os.path.abspath(args.log), ""
    else:
        log_path, gen_summary = ensure_log(parse_size(args.size), os.path.abspath(args.gen))
    with open(log_path, "rb") as f:
        raw = f.read()
    # What an editor holds: the file decoded as UTF-8 (invalid bytes replaced).
    text = raw.decode("utf-8", errors="replace")
    doc_bytes = len(text.encode("utf-8"))
    # LSP lines: '\n', '\r\n' and bare '\r' each end one.
    lsp_lines = text.count("\n") + text.count("\r") - text.count("\r\n")
    uri = "file://" + log_path
    did_open = LspServer.notification_bytes("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "log", "version": 1, "text": text}})
    del raw, text
    expected_incidents = None
    for line in gen_summary.splitlines():
        if " incidents" in line and "OOM messages in" in line:
            expected_incidents = int(line.split("OOM messages in ")[1].split()[0])

    out = Report()
    now = datetime.datetime.now()
    out(f"oomlens lsp benchmark, {now:%Y-%m-%d %H:%M:%S}")
    out(f"machine: {machine()}")
    out(f"commit:  {commit()}")
    out(f"server:  {binary}")
    out(f"log:     {os.path.relpath(log_path, ROOT) if log_path.startswith(ROOT) else log_path} "
        f"({human(doc_bytes)}; didOpen message {human(len(did_open))})")
    out()

    rows: list[tuple[str, str, str, str]] = []  # figure, value, target, verdict

    if "init" in scenarios:
        for _ in range(args.warmup):
            measure_initialize(binary)
        times = [measure_initialize(binary) for _ in range(args.init_runs)]
        med = statistics.median(times)
        out(f"initialize round trip, {len(times)} fresh servers: median {med:.2f} ms, "
            f"min {min(times):.2f}, max {max(times):.2f}")
        rows.append(("initialize round trip (median)", f"{med:.2f} ms", f"< {TARGET_INIT_MS:g} ms",
                     verdict(med, TARGET_INIT_MS)))

    push_results: list[RunResult] = []
    for mode in ("push", "pull"):
        if mode not in scenarios:
            continue
        pull = mode == "pull"
        for _ in range(args.warmup):
            measure_document(binary, did_open, uri, doc_bytes, pull, 0)
        results = []
        for i in range(args.runs):
            r = measure_document(binary, did_open, uri, doc_bytes, pull, args.requests if not pull else 0)
            results.append(r)
            extra = (f", RSS {r.rss['VmRSS'] / 1024:.1f} MiB (peak {r.rss['VmHWM'] / 1024:.1f})")
            out(f"  {mode} run {i + 1}: diagnostics after {r.diagnostics_ms:.1f} ms "
                f"(client write {r.write_ms:.1f} ms), {r.diagnostics} diagnostics, {r.incidents} incidents{extra}")
        med = statistics.median(r.diagnostics_ms for r in results)
        what = "publishDiagnostics" if not pull else "pull diagnostic answer"
        out(f"{mode}: didOpen -> {what}: median {med:.1f} ms, "
            f"min {min(r.diagnostics_ms for r in results):.1f}, max {max(r.diagnostics_ms for r in results):.1f}")
        rows.append((f"{human(doc_bytes)} didOpen -> {what} (median)", f"{med:.1f} ms",
                     f"< {TARGET_DIAGNOSTICS_MS:g} ms", verdict(med, TARGET_DIAGNOSTICS_MS)))
        incidents = {r.incidents for r in results}
        if expected_incidents is not None and incidents != {expected_incidents}:
            out(f"  WARNING: incidents reported {sorted(incidents)}, the generator wrote {expected_incidents}")
        if not pull:
            push_results = results
        beyond = [(r.rss["VmRSS"] - r.rss["doc"]) / 1024 for r in results]
        rows.append((f"resident memory beyond the text, {mode} (median)",
                     f"{statistics.median(beyond):.1f} MiB", f"< {TARGET_RSS_MIB:g} MiB",
                     verdict(statistics.median(beyond), TARGET_RSS_MIB)))
        out(f"{mode}: VmRSS - document: median {statistics.median(beyond):.1f} MiB "
            f"(VmRSS {statistics.median(r.rss['VmRSS'] for r in results) / 1024:.1f} MiB, "
            f"peak VmHWM {statistics.median(r.rss['VmHWM'] for r in results) / 1024:.1f} MiB)")
        out()

    if "edit" in scenarios:
        times = measure_edits(binary, did_open, uri, lsp_lines, args.edits)
        med = statistics.median(times)
        out(f"edit: {len(times)} one-line edits of the open log, didChange -> publishDiagnostics: median {med:.1f} ms, "
            f"min {min(times):.1f}, max {max(times):.1f} (the first {times[0]:.1f})")
        rows.append((f"{human(doc_bytes)} one-line edit -> publishDiagnostics (median)", f"{med:.1f} ms", "", ""))
        out()

    if push_results and args.requests:
        for name, attr, ok_attr in (("codeAction", "code_action", "code_action_ok"), ("hover", "hover", "hover_ok")):
            per_run = [getattr(r, attr) for r in push_results]
            p50s = [percentile(v, 50) for v in per_run if v]
            p99s = [percentile(v, 99) for v in per_run if v]
            pooled = [x for v in per_run for x in v]
            if not pooled:
                out(f"{name}: no OOM line to ask about")
                continue
            ok = sum(getattr(r, ok_attr) for r in push_results)
            out(f"{name}, {args.requests} requests x {len(per_run)} runs: p50 median {statistics.median(p50s):.3f} ms, "
                f"p99 median {statistics.median(p99s):.3f} ms (worst run {max(p99s):.3f}, pooled p99 "
                f"{percentile(pooled, 99):.3f}, max {max(pooled):.3f}); {ok}/{len(pooled)} useful answers")
            rows.append((f"{name} p50 (median of runs)", f"{statistics.median(p50s):.3f} ms", "", ""))
            rows.append((f"{name} p99 (median of runs)", f"{statistics.median(p99s):.3f} ms",
                         f"< {TARGET_REQUEST_P99_MS:g} ms", verdict(statistics.median(p99s), TARGET_REQUEST_P99_MS)))
        out()

    out("summary")
    width = max(len(r[0]) for r in rows) if rows else 10
    for figure, value, target, ok in rows:
        out(f"  {figure:<{width}}  {value:>11}  {target:<10}  {ok}")
    if expected_incidents is not None and push_results:
        out(f"  incidents: {push_results[0].incidents} reported, {expected_incidents} written by the generator")

    results_dir = os.path.join(ROOT, "bench", "results")
    os.makedirs(results_dir, exist_ok=True)
    path = os.path.join(results_dir, f"lsp-{now:%Y-%m-%d-%H%M%S}.txt")
    with open(path, "w") as f:
        f.write("\n".join(out.lines) + "\n")
    print(f"\nwritten to {os.path.relpath(path, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
