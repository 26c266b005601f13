"""End-to-end cases for logs that are one rank's file of a job (a file per
rank: torchrun --log-dir, rank3.log). run_tests.py imports this file once its
helpers are defined; the cases register with its `case`."""
from __future__ import annotations

import os
import shutil
import tempfile

import __main__ as harness  # run_tests.py, run as a script

case, check, eq = harness.case, harness.check, harness.eq
open_doc, change, pushed, pull = harness.open_doc, harness.change, harness.pushed, harness.pull

TORCHRUN = "jobs/torchrun_log_dir/run_5c1e9a/attempt_0"


def related_by_file(d: dict) -> dict:
    """{uri: [(LSP line, message), ...]} of a diagnostic's related locations."""
    out: dict = {}
    for r in d.get("relatedInformation", []):
        loc = r["location"]
        out.setdefault(loc["uri"], []).append((loc["range"]["start"]["line"], r["message"]))
    return out


def only_own_lines(diagnostics: list, text: str, uri: str) -> None:
    """Every range lies within this document (no line number of another file)."""
    lines = len(text.splitlines()) + 1
    for d in diagnostics:
        check(d["range"]["end"]["line"] < lines, f"{uri}: a range past this document's end: {d['range']}")


def opened(s, uri: str, text: str) -> list:
    """The diagnostics first pushed for a document opened now."""
    m = s.mark()
    open_doc(s, uri, text)
    items = pushed(s, uri, m)
    only_own_lines(items, text, uri)
    return items


def the_one(items: list, code: str, line: int) -> dict:
    """The only diagnostic with this code, checked to be on this LSP line."""
    found = [d for d in items if d["code"] == code]
    eq([d["range"]["start"]["line"] for d in found], [line], f"one {code} on line {line}: {items}")
    return found[0]


def related_at(d: dict, uri: str, line: int, words: str) -> bool:
    return any(at == line and words in msg for at, msg in related_by_file(d).get(uri, []))


def hover_at(s, uri: str, line: int):
    return s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": 5}})


@case
def job_torchrun_log_dir_relates_the_ranks_files(ctx):
    s = ctx.started(pull=False)
    rank = {r: ctx.log(f"{TORCHRUN}/{r}/stderr.log") for r in range(4)}
    # Rank 2 failed first; its file holds the incident's message.
    d = the_one(opened(s, *rank[2]), "OOM102", 18)
    check("rank 2, first of 2 ranks" in d["message"], d["message"])
    check(related_at(d, rank[0][0], 18, "rank 0 also ran out of memory"), f"rank 0's OOM in its file: {d}")
    for r in (1, 3):
        check(related_at(d, rank[r][0], 2, f"rank {r} failed as a consequence"), f"rank {r}'s NCCL timeout: {d}")

    # Rank 0's file: its echo gets the diagnostic, naming rank 2 and its file.
    d = the_one(opened(s, *rank[0]), "OOM102", 18)
    check("rank 0 also ran out of memory; rank 2 failed first, in 2/stderr.log" in d["message"], d["message"])
    eq(d["severity"], 1, "an OOM of its own is an error")
    check(related_at(d, rank[2][0], 18, "rank 2 ran out of memory first"), f"rank 2's OOM is related: {d}")
    check(not related_at(d, rank[0][0], 18, ""), "the diagnostic is not its own relative")
    hover = hover_at(s, rank[0][0], 18)
    check(hover and "OOM102" in hover["contents"]["value"], f"hover on rank 0's OOM line: {hover}")
    eq(hover_at(s, rank[0][0], 0), None, "hover on an ordinary line")
    actions = harness.code_actions(s, rank[0][0], d)
    check(any(a["title"] == "Run the verification command" for a in actions), f"the incident's actions: {actions}")

    # Rank 1 only timed out: a warning on its line, naming the cause.
    items = opened(s, *rank[1])
    eq([(d["code"], d["range"]["start"]["line"], d["severity"]) for d in items], [("OOM102", 2, 2)],
       "rank 1: one warning, on its NCCL timeout")
    check("rank 1 failed as a consequence; rank 2 failed first, in 2/stderr.log" in items[0]["message"],
          items[0]["message"])
    hover = hover_at(s, rank[1][0], 2)
    check(hover and "OOM102" in hover["contents"]["value"], f"hover on the line the incident is anchored on: {hover}")
    # stdout.log of rank 0 is part of the job but holds nothing of the failure.
    eq(opened(s, *ctx.log(f"{TORCHRUN}/0/stdout.log")), [], "nothing on a file with no line of the incident")


@case
def job_rank_files_in_pull_mode(ctx):
    s = ctx.started(pull=True, refresh=True)
    (uri0, text0), (uri3, text3) = ctx.log("jobs/rank_files/rank0.log"), ctx.log("jobs/rank_files/rank3.log")
    open_doc(s, uri3, text3)
    d3 = the_one(pull(s, uri3)["items"], "OOM101", 14)
    for r in (0, 1, 2):
        check(related_at(d3, uri3.replace("rank3.log", f"rank{r}.log"), 2, f"rank {r}"),
              f"rank {r}'s timeout, read from disk, is related at its line: {d3}")
    open_doc(s, uri0, text0)
    items = pull(s, uri0)["items"]
    eq([(d["code"], d["range"]["start"]["line"]) for d in items], [("OOM101", 2)], "rank 0: its timeout")
    check("rank 3 failed first, in rank3.log" in items[0]["message"], items[0]["message"])
    check(related_at(items[0], uri3, 14, "rank 3"), "points at rank 3's OOM")
    # An edit of rank 3 changes rank 0's diagnostics: a pull client is asked to pull again.
    m = s.mark()
    change(s, uri3, 2, [{"text": "rank 3 was fine after all\n"}])
    s.wait_for(lambda: s.server_requests("workspace/diagnostic/refresh", m), what="workspace/diagnostic/refresh")
    eq([d for d in pull(s, uri0)["items"] if d["code"] == "OOM101"], [], "rank 0 after rank 3's OOM went away")


@case
def job_open_sibling_text_wins_over_the_disk(ctx):
    s = ctx.started(pull=False)
    (uri0, text0), (uri3, text3) = ctx.log("jobs/rank_files/rank0.log"), ctx.log("jobs/rank_files/rank3.log")
    eq([d["range"]["start"]["line"] for d in opened(s, uri0, text0)], [2], "rank 0's timeout, rank 3 read from disk")
    # Rank 3 open with two more lines above its OOM: rank 0 is analysed again
    # with the editor's text and points two lines lower.
    m = s.mark()
    open_doc(s, uri3, "added line\nanother\n" + text3)
    again = pushed(s, uri0, m)
    lines = [line for line, _ in related_by_file(again[0]).get(uri3, [])]
    eq(lines, [16], "rank 3's OOM where the editor has it")
    # Rank 3's OOM deleted in the editor: rank 0's timeout is no incident's any more.
    m = s.mark()
    change(s, uri3, 2, [{"text": "\n".join(text3.splitlines()[:5]) + "\n"}])
    gone = pushed(s, uri0, m)
    check(not any(d["code"] == "OOM101" for d in gone), f"no OOM101 once rank 3's OOM is gone: {gone}")
    # Closed: the file on disk counts again.
    m = s.mark()
    s.notify("textDocument/didClose", {"textDocument": {"uri": uri3}})
    back = pushed(s, uri0, m)
    eq([line for line, _ in related_by_file(back[0]).get(uri3, [])], [14], "rank 3 read from disk again")


@case
def job_unreadable_sibling_is_logged_and_left_out(ctx):
    if os.geteuid() == 0:
        print("      (skipped: root reads every file)")
        return
    tmp = tempfile.mkdtemp(prefix="oomlens-job-")
    try:
        job = os.path.join(tmp, "logs")
        shutil.copytree(os.path.join(ctx.fixtures, "logs", "jobs", "rank_files"), job)
        os.chmod(os.path.join(job, "rank1.log"), 0)
        s = ctx.started(pull=False)
        uri = "file://" + os.path.join(job, "rank3.log")
        with open(os.path.join(job, "rank3.log"), encoding="utf-8") as f:
            text = f.read()
        m = s.mark()
        d = opened(s, uri, text)
        msg = s.wait_notification("window/logMessage", lambda p: "rank1.log" in p["message"], m)
        check("Permission denied" in msg["message"], msg["message"])
        rel = related_by_file(d[0])
        check(uri.replace("rank3", "rank0") in rel and uri.replace("rank3", "rank1") not in rel,
              f"the job goes on without rank 1: {rel}")
    finally:
        os.chmod(os.path.join(tmp, "logs", "rank1.log"), 0o644)
        shutil.rmtree(tmp, ignore_errors=True)
