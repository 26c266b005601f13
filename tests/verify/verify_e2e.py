#!/usr/bin/env python3
"""End-to-end tests of `oomlens verify` against the real binary, without a
GPU: fake training jobs (tests/verify/jobs/) run on a stand-in torch
(tests/verify/fake_torch/) that honours PYTORCH_CUDA_ALLOC_CONF as PyTorch
does and prints PyTorch's OOM message. One case imports Debian's real
python3-torch (CPU build) to show the probe is harmless where CUDA is absent.

usage: verify_e2e.py OOMLENS [FILTER]
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
JOBS = os.path.join(HERE, "jobs")
OOMLENS = os.path.abspath(sys.argv[1])
FILTER = sys.argv[2] if len(sys.argv) > 2 else ""
CASES = []
# What the last `oomlens verify` of the running case wrote on standard error,
# shown with a failure: an exit status alone does not say why.
LAST_STDERR = [""]


def case(fn):
    CASES.append(fn)
    return fn


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


def eq(got, want, what):
    if got != want:
        raise Failure(f"{what}: got {got!r}, want {want!r}")


def job(name, *args):
    return [sys.executable, os.path.join(JOBS, name), *args]


def verify(*args, fake_torch=True, env=None, timeout=60):
    """Runs oomlens verify --format json; returns (status, report, stderr)."""
    e = dict(os.environ)
    e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    if fake_torch:
        e["PYTHONPATH"] = os.path.join(HERE, "fake_torch")
    e.update(env or {})
    out = tempfile.mkdtemp(prefix="verify-e2e-")
    p = subprocess.run([OOMLENS, "verify", "--format", "json", "--out", out, *args], capture_output=True, text=True,
                       env=e, timeout=timeout)
    LAST_STDERR[0] = p.stderr
    report = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, report, p.stderr


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is not running
        return f.read().rsplit(")", 1)[1].split()[0] != "Z"


@case
def fragmentation_fixed_by_expandable_segments():
    status, r, err = verify("--baseline", "--conf", "expandable_segments:True", "--", *job("fragmenting_job.py"))
    eq(status, 0, "exit status of a fix that worked")
    eq(r["verdict"]["kind"], "fixed", "verdict")
    a, b = r["runs"]
    eq((a["run"], b["run"]), ("A", "B"), "run labels")
    eq((a["oom"]["class"], a["oom"]["rule"]), ("fragmentation", "OOM101"), "A's OOM, read from its output")
    eq(b["oom"], None, "B has no OOM")
    eq((a["exit_code"], b["exit_code"]), (1, 0), "exit codes")
    eq(a["num_alloc_retries"], 1, "A's allocator retries, from inside the process")
    eq(b["num_alloc_retries"], 0, "B's retries")
    eq(a["peak_reserved"], 14 << 30, "A's true peak reserved")
    pa, pb = a["processes"][0], b["processes"][0]
    eq(pa["ooms"][0]["requested"], 4 << 30, "the OOM observer saw the request (attached after CUDA started)")
    eq(pb["allocator_settings"]["expandable_segments"], "true", "B's setting as torch read it back")
    eq(pb["torch_version"], "2.5.1+fake", "torch version")
    check("step 3/3" in err and "training finished" in err, "the job's output is shown (on stderr with JSON)")
    check(os.path.exists(a["log"]) and "CUDA out of memory" in open(a["log"], errors="replace").read(), "A's log kept")


@case
def text_table_and_verdict_line():
    e = dict(os.environ, PYTHONPATH=os.path.join(HERE, "fake_torch"))
    e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    p = subprocess.run([OOMLENS, "verify", "--baseline", "--conf", "expandable_segments:True", "--",
                        *job("fragmenting_job.py")], capture_output=True, text=True, env=e, timeout=60)
    eq(p.returncode, 0, "exit status")
    lines = p.stdout.splitlines()
    header = next((l for l in lines if l.startswith("run ")), "")
    for column in ("exit", "wall", "OOM", "peak reserved", "peak allocated", "reserved-allocated", "retries"):
        check(column in header, f"column {column!r} in {header!r}")
    row_a = next(l for l in lines if l.startswith("A "))
    check("fragmentation (OOM101)" in row_a and "14.00 GiB" in row_a, row_a)
    check(any(l.startswith("fixed: run A ran out of memory") for l in lines), p.stdout)
    check("step 3/3" in p.stdout, "the job's output streams on standard output before the table")


@case
def text_table_of_a_single_run():
    e = dict(os.environ, PYTHONPATH=os.path.join(HERE, "fake_torch"))
    e.pop("PYTORCH_CUDA_ALLOC_CONF", None)
    p = subprocess.run([OOMLENS, "verify", "--conf", "expandable_segments:True", "--", *job("fragmenting_job.py")],
                       capture_output=True, text=True, env=e, timeout=60)
    eq(p.returncode, 0, "exit status")
    rows = [l for l in p.stdout.splitlines() if l.startswith("   with the setting")]
    eq(len(rows), 1, f"one row, for the one run: {p.stdout[-600:]}")
    check(any(l.startswith("passed: ") for l in p.stdout.splitlines()), p.stdout[-300:])


@case
def capacity_not_fixed():
    status, r, _ = verify("--baseline", "--conf", "expandable_segments:True", "--", *job("capacity_job.py"))
    eq(status, 1, "exit status when the fix did not work")
    eq(r["verdict"]["kind"], "not fixed", "verdict")
    eq(r["runs"][1]["oom"]["class"], "capacity", "B's OOM class")


@case
def setting_overridden_by_the_script_is_inconclusive():
    status, r, _ = verify("--baseline", "--conf", "expandable_segments:True", "--", *job("overriding_job.py"))
    eq(status, 3, "exit status")
    eq(r["verdict"]["kind"], "inconclusive", "verdict")
    check("not in effect" in r["verdict"]["summary"], r["verdict"]["summary"])
    check(any("changed PYTORCH_CUDA_ALLOC_CONF to 'max_split_size_mb:128' before CUDA started" in x
              for x in r["verdict"]["reasons"]), r["verdict"]["reasons"])


@case
def backend_that_ignores_the_option_is_inconclusive():
    status, r, _ = verify("--conf", "backend:cudaMallocAsync,expandable_segments:True", "--",
                          *job("fragmenting_job.py"))
    eq(status, 3, "exit status")
    check(any("ignored by the cudaMallocAsync backend" in x for x in r["verdict"]["reasons"]), r["verdict"])


@case
def a_job_without_torch_is_inconclusive_and_untouched():
    status, r, err = verify("--conf", "expandable_segments:True", "--", *job("no_torch_job.py"))
    eq(status, 3, "exit status")
    check("never saw torch" in r["verdict"]["summary"] + " ".join(r["verdict"]["reasons"]), r["verdict"])
    eq(r["runs"][0]["processes"], [], "no probe report from a process without torch")
    check("nothing to do with GPUs" in err, "the job ran")


@case
def a_torch_without_the_hooks_the_probe_uses_still_runs_and_is_judged_by_its_output():
    status, r, err = verify("--baseline", "--conf", "expandable_segments:True", "--", *job("fragmenting_job.py"),
                            env={"FAKE_TORCH_WITHOUT_HOOKS": "1"})
    eq(status, 0, "exit status")
    eq(r["verdict"]["kind"], "fixed", "the verdict from the runs' output and exit codes")
    a = r["runs"][0]
    eq(a["oom"]["rule"], "OOM101", "A's OOM, from its output")
    eq(a["processes"][0]["ooms"], [], "no observer could be attached")
    check("training finished" in err, "the job ran as without the probe")


@case
def single_run_without_oom_passes():
    status, r, _ = verify("--conf", "expandable_segments:True", "--", *job("fragmenting_job.py"))
    eq(status, 0, "exit status")
    eq(r["verdict"]["kind"], "passed", "verdict")
    check(any("--baseline" in x for x in r["verdict"]["reasons"]), "suggests a baseline")


@case
def snapshot_of_each_run_for_comparison():
    status, r, _ = verify("--snapshot", "--baseline", "--conf", "expandable_segments:True", "--",
                          *job("fragmenting_job.py"))
    eq(status, 0, "exit status")
    a, b = (run["processes"][0]["snapshot"] for run in r["runs"])
    check(a and os.path.basename(a).startswith("snapshot-A-") and os.path.getsize(a) > 0, "A's snapshot, at its OOM")
    check(b and os.path.basename(b).startswith("snapshot-B-") and os.path.getsize(b) > 0, "B's snapshot, at its end")


@case
def usage_errors_name_the_problem():
    status, r, err = verify("--", "no-such-program-oomlens")
    eq(status, 2, "exit status for a program that cannot start")
    check("cannot start 'no-such-program-oomlens': not found on PATH" in err, err)
    status, _, err = verify()
    eq(status, 2, "no command")
    check("no command to run" in err, err)
    status, _, err = verify("--baseline", "--", *job("no_torch_job.py"))
    eq(status, 2, "--baseline without a setting")
    check("--conf or --env" in err, err)
    status, _, err = verify("--env", "NOEQUALS", "--", *job("no_torch_job.py"))
    eq(status, 2, "--env without =")


@case
def max_seconds_stops_the_job_and_everything_it_started():
    with tempfile.NamedTemporaryFile("r") as pidfile:
        started = time.monotonic()
        status, r, _ = verify("--max-seconds", "6", "--", *job("slow_job.py", pidfile.name))
        took = time.monotonic() - started
        eq(status, 3, "exit status: stopped before it could fail, no baseline")
        run = r["runs"][0]
        check(run["timed_out"], "timed out")
        check(took < 30, f"stopped in time ({took:.1f} s)")
        eq(run["processes"][0]["written_at"], "sigterm", "the probe reported on SIGTERM")
        eq(run["peak_allocated"], 1 << 30, "what was measured before the stop")
        helper = int(pidfile.read())
        check(not alive(helper), f"the job's detached helper {helper} was stopped")


@case
def ctrl_c_stops_the_job_and_still_reports():
    with tempfile.NamedTemporaryFile("r") as pidfile:
        e = dict(os.environ, PYTHONPATH=os.path.join(HERE, "fake_torch"))
        p = subprocess.Popen([OOMLENS, "verify", "--format", "json", "--baseline", "--conf",
                              "expandable_segments:True", "--", *job("slow_job.py", pidfile.name)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=e)
        for line in p.stderr:
            if line.startswith("started"):
                break
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
        eq(p.returncode, 3, "exit status after Ctrl-C")
        r = json.loads(out)
        eq(len(r["runs"]), 1, "run B never started")
        check(r["runs"][0]["interrupted"], "run A marked as interrupted")
        check("Ctrl-C" in r["verdict"]["summary"], r["verdict"]["summary"])
        helper = int(pidfile.read())
        check(not alive(helper), f"the job's detached helper {helper} was stopped")


@case
def every_rank_of_a_launched_job_reports():
    status, r, err = verify("--baseline", "--conf", "expandable_segments:True", "--",
                            *job("fake_launcher.py", "3", sys.executable, os.path.join(JOBS, "rank_job.py")))
    eq(status, 0, "exit status")
    eq(r["verdict"]["kind"], "fixed", "verdict")
    a, b = r["runs"]
    eq(sorted(p["rank"] for p in b["processes"] if p["cuda_initialized"]), [0, 1, 2], "a report per rank")
    eq(a["oom"]["rule"], "OOM101", "rank 1's fragmentation OOM, read through the launcher's prefixes")
    eq([p["rank"] for p in a["processes"] if p["ooms"]], [1], "only rank 1 ran out of memory")


@case
def the_users_sitecustomize_still_loads():
    site = os.path.join(HERE, "user_site")
    status, r, err = verify("--", *job("report_env.py"),
                            env={"PYTHONPATH": os.path.join(HERE, "fake_torch") + ":" + site})
    eq(status, 0, "exit status")
    check("user sitecustomize: yes" in err, err[-500:])
    check(r["runs"][0]["processes"][0]["cuda_initialized"], "and the probe reported")


@case
def probe_is_harmless_under_real_torch_without_cuda():
    # Debian's interpreter, where python3-torch lives (another python3 may come first on PATH).
    python = "/usr/bin/python3"
    check(subprocess.run([python, "-c", "import torch"], capture_output=True).returncode == 0,
          "Debian's python3-torch is installed (scripts/setup.sh installs it)")
    code = "import torch; x = torch.ones(3) * 2; print('sum', x.sum().item())"
    plain = subprocess.run([python, "-c", code], capture_output=True, text=True)
    status, r, err = verify("--", python, "-c", code, fake_torch=False)
    eq(status, 0, "exit status")
    eq(r["verdict"]["kind"], "passed", "verdict")
    eq(plain.stdout.strip(), "sum 6.0", "the job's own output")
    check("sum 6.0" in err, "the same output under the probe")
    proc = r["runs"][0]["processes"]
    eq(len(proc), 1, "one report")
    check(proc[0]["torch_version"].startswith(("1.", "2.")), proc[0]["torch_version"])
    eq(proc[0]["cuda_initialized"], False, "the probe did not start CUDA")
    check(any("never used CUDA" in x for x in r["verdict"]["reasons"]), r["verdict"]["reasons"])


def main():
    failed = 0
    for fn in CASES:
        if FILTER not in fn.__name__:
            continue
        started = time.monotonic()
        LAST_STDERR[0] = ""
        try:
            fn()
            print(f"ok    {fn.__name__} ({time.monotonic() - started:.1f}s)")
        except Exception as e:  # noqa: BLE001 - a case's failure, whatever it is
            failed += 1
            print(f"FAIL  {fn.__name__}: {type(e).__name__}: {e}")
            if LAST_STDERR[0]:
                print("      its last oomlens verify said on standard error (the end):")
                print("".join(f"      | {line}\n" for line in LAST_STDERR[0].splitlines()[-15:]), end="")
    print(f"verify e2e: {len([c for c in CASES if FILTER in c.__name__]) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
