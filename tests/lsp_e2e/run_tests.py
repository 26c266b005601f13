#!/usr/bin/env python3
"""End-to-end tests of `oomlens lsp`: the real binary, JSON-RPC over pipes.

    run_tests.py BINARY FIXTURES_DIR [NAME_SUBSTRING...]

Each test case is a function; each starts its own server process(es). After
every case the runner checks, for every server the case started, that each
request was answered exactly once, that the server's output was well-framed
JSON, and that it did not die from a signal. The closing line is
`lsp e2e: N passed, M failed`; the exit status is non-zero on any failure.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspServer, LspTestError, client_capabilities, encode, frame  # noqa: E402

CASE_TIMEOUT_S = 40  # a case that takes longer has hung: fail it, go on

# LSP error codes
PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SERVER_NOT_INITIALIZED, REQUEST_CANCELLED, CONTENT_MODIFIED, SERVER_CANCELLED, REQUEST_FAILED = (
    -32002, -32800, -32801, -32802, -32803)

# Text that is slow to analyse and says nothing: every line is an anchor
# (the "watchdog" literal, and its gate passes on "timeout") that the
# stream cleans and the parsers read, and none claims (no NCCL watchdog
# message reads this way). About 35 ms a MB here, where plain lines go at
# GB/s. An earlier form of it (memory words and "CUDA OOMs: 0") came to
# cost nothing once the gates learnt to drop it, and the tests that need a
# request still waiting on an analysis when the next message is handled
# (cancels, duplicate ids, a change superseding an open, progress reports
# that start only once the client has answered window/workDoneProgress/
# create) turned flaky. Same length as that form, so the lines fall where
# they did.
SLOW_LINE = "[rank0]: NCCL watchdog timeout check passed: all 8 ranks alive, memory use 45%.\n"
CLEAN_LINE = "step 1234 | loss 2.3456 | lr 1.0e-4 | tokens/s 12345.6\n"


def slow_text(megabytes: float) -> str:
    return SLOW_LINE * int(megabytes * 1e6 / len(SLOW_LINE))



# ---------------------------------------------------------------------------
# the runner

CASES = []


def case(fn):
    CASES.append(fn)
    return fn


class Ctx:
    def __init__(self, binary: str, fixtures: str):
        self.binary = binary
        self.fixtures = fixtures
        self.servers: list[LspServer] = []

    def server(self, args: tuple = ("lsp",), name: str = "server") -> LspServer:
        s = LspServer(self.binary, args, name=name)
        s.check_answers = True  # type: ignore[attr-defined]
        self.servers.append(s)
        return s

    def started(self, capabilities: dict | None = None, options=None, **caps) -> LspServer:
        """A server past initialize/initialized."""
        s = self.server()
        s.initialize(capabilities if capabilities is not None else client_capabilities(**caps), options)
        return s

    def log_path(self, name: str) -> str:
        return os.path.join(self.fixtures, "logs", name)

    def log(self, name: str) -> tuple[str, str]:
        """(uri, text) of a fixture log as an editor holds it: decoded as UTF-8
        (invalid bytes replaced), line ends kept."""
        path = os.path.abspath(self.log_path(name))
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            return "file://" + path, f.read()

    def oom_line(self) -> str:
        """The fragmentation OOM line of pytorch26_fragmentation.log, without its newline."""
        _, text = self.log("pytorch26_fragmentation.log")
        return text.split("\n")[30]

    def teardown(self) -> list[str]:
        problems = []
        for s in self.servers:
            alive = s.proc.poll() is None
            if alive and s.check_answers:  # type: ignore[attr-defined]
                try:  # give answers still in flight a moment
                    s.wait_for(lambda: not s.answered_once_problems(), 3.0, "every request to be answered")
                except LspTestError:
                    pass
            if s.check_answers:  # type: ignore[attr-defined]
                problems += [f"{s.name}: {p}" for p in s.answered_once_problems()]
            problems += [f"{s.name}: bad output: {p}" for p in s.protocol_errors]
            if not alive and s.proc.returncode is not None and s.proc.returncode < 0:
                problems.append(f"{s.name}: died from signal {-s.proc.returncode}")
            s.kill()
        return problems


class CaseTimeout(Exception):
    pass


def _on_alarm(signum, frame_):  # noqa: ARG001
    raise CaseTimeout(f"the case took longer than {CASE_TIMEOUT_S}s")


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__)
        return 2
    binary, fixtures, filters = os.path.abspath(argv[1]), argv[2], argv[3:]
    signal.signal(signal.SIGALRM, _on_alarm)
    passed = failed = 0
    start = time.monotonic()
    for fn in CASES:
        if filters and not any(f in fn.__name__ for f in filters):
            continue
        ctx = Ctx(binary, fixtures)
        t0 = time.monotonic()
        error = None
        signal.alarm(CASE_TIMEOUT_S)
        try:
            fn(ctx)
        except Exception:  # noqa: BLE001
            error = traceback.format_exc(limit=6)
        finally:
            signal.alarm(0)
        problems = ctx.teardown()
        if error is None and problems:
            error = "after the case: " + "; ".join(problems)
        took = time.monotonic() - t0
        if error is None:
            passed += 1
            print(f"ok    {fn.__name__} ({took:.2f}s)", flush=True)
        else:
            failed += 1
            print(f"FAIL  {fn.__name__} ({took:.2f}s)\n" + _indent(error), flush=True)
            for s in ctx.servers:
                tail = s.stderr.strip().splitlines()[-8:]
                if tail:
                    print(_indent(f"{s.name} stderr (last lines):\n" + "\n".join(tail)), flush=True)
    print(f"({time.monotonic() - start:.1f}s)")
    print(f"lsp e2e: {passed} passed, {failed} failed")
    return 1 if failed or passed == 0 else 0


def _indent(text: str) -> str:
    return "\n".join("      " + line for line in text.rstrip().splitlines())


# ---------------------------------------------------------------------------
# small helpers

def check(condition, message: str = "check failed") -> None:
    if not condition:
        raise AssertionError(message)


def eq(actual, expected, what: str = "value") -> None:
    if actual != expected:
        raise AssertionError(f"{what}: expected {expected!r}, got {actual!r}")


def open_doc(s: LspServer, uri: str, text: str, version: int = 1, language: str = "log") -> None:
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": language, "version": version,
                                                       "text": text}})


def did_open_bytes(uri: str, text: str, version: int = 1, language: str = "log") -> bytes:
    return LspServer.notification_bytes("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": language, "version": version, "text": text}})


def change(s: LspServer, uri: str, version: int, changes: list) -> None:
    s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                        "contentChanges": changes})


def pushed(s: LspServer, uri: str, after: int = 0, version: int | None = None, timeout: float = 10) -> list:
    """The diagnostics of the next publishDiagnostics for uri (and version)."""
    params = s.wait_notification(
        "textDocument/publishDiagnostics",
        lambda p: p["uri"] == uri and (version is None or p.get("version") == version), after, timeout)
    return params["diagnostics"]


def pull(s: LspServer, uri: str, previous: str | None = None, timeout: float = 10) -> dict:
    params: dict = {"textDocument": {"uri": uri}}
    if previous is not None:
        params["previousResultId"] = previous
    return s.call_ok("textDocument/diagnostic", params, timeout)


def rng(l1: int, c1: int, l2: int, c2: int) -> dict:
    return {"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}}


def code_actions(s: LspServer, uri: str, diag: dict, only: list | None = None, send_diag: bool = True):
    context: dict = {"diagnostics": [diag] if send_diag else []}
    if only is not None:
        context["only"] = only
    return s.call_ok("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": diag["range"],
                                                 "context": context})


def lsp_line_of(text: str, newline_line: int) -> int:
    """The LSP line (0-based; \\n, \\r\\n and bare \\r end lines) where the
    1-based '\\n'-counted line starts."""
    start = 0
    for _ in range(newline_line - 1):
        start = text.index("\n", start) + 1
    return len(re.findall(r"\r\n|\r|\n", text[:start]))


def expect_still_serving(s: LspServer) -> None:
    """A valid request after bad input is still answered: an unknown method,
    harmless in every state, whose -32601 proves the server reads on."""
    err = s.call_error("oomlens/ping-after-bad-input", {})
    eq(err["code"], METHOD_NOT_FOUND, "error code of the request after the bad input")


# ---------------------------------------------------------------------------
# lifecycle

@case
def lifecycle_requests_before_initialize_get_32002(ctx: Ctx):
    s = ctx.server()
    for method, params in [("textDocument/hover", {"textDocument": {"uri": "file:///a.log"},
                                                    "position": {"line": 0, "character": 0}}),
                           ("shutdown", None), ("workspace/executeCommand", {"command": "oomlens.explain",
                                                                             "arguments": ["OOM101"]})]:
        err = s.call_error(method, params)
        eq(err["code"], SERVER_NOT_INITIALIZED, f"{method} before initialize")
    # The session is not spoiled: initialize still works.
    result = s.initialize()
    check("capabilities" in result, "initialize answered after early requests")
    eq(s.shutdown_and_exit(), 0, "exit status")


@case
def lifecycle_notifications_before_initialize_are_ignored(ctx: Ctx):
    s = ctx.server()
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)  # dropped: the server is not initialized
    s.notify("oomlens/somethingUnknown", {})
    s.notify("$/cancelRequest", {"id": 7})
    s.initialize(client_capabilities(pull=False))
    s.settle(0.3)
    eq(s.notifications("textDocument/publishDiagnostics"), [], "diagnostics for a document opened too early")
    # Nothing at all went out before the initialize reply (only log/showMessage/progress may).
    first = s.messages[0]
    check("result" in first and isinstance(first["result"], dict) and "capabilities" in first["result"],
          f"first message from the server should be the initialize reply, got {first}")
    # The document was never opened: requests about it are refused, not answered from stale state.
    err = s.call_error("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 30, "character": 0}})
    eq(err["code"], INVALID_PARAMS, "hover on a document opened before initialize")


@case
def lifecycle_shutdown_answers_requests_still_waiting(ctx: Ctx):
    """Requests sent before shutdown that wait for an analysis still get one answer."""
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/shutdown.log"
    hover_id, hover = s.request_bytes("textDocument/hover", {"textDocument": {"uri": uri},
                                                             "position": {"line": 0, "character": 0}})
    pull_id, pull_req = s.request_bytes("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    shutdown_id, shutdown = s.request_bytes("shutdown")
    s.send_raw(did_open_bytes(uri, slow_text(2.0) + ctx.oom_line()) + hover + pull_req + shutdown)
    eq(s.wait_response(shutdown_id).get("result", "missing"), None, "shutdown result")
    for rid in (hover_id, pull_id):
        reply = s.wait_response(rid, timeout=5)
        check("result" in reply or reply["error"]["code"] == REQUEST_FAILED, f"the answer to {rid}: {reply}")
    s.notify("exit")
    eq(s.wait_exit(), 0, "exit status")


@case
def lifecycle_initialize_twice_is_an_error(ctx: Ctx):
    s = ctx.started()
    err = s.call_error("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    eq(err["code"], INVALID_REQUEST, "second initialize")
    # The first session's state is intact: utf-16 still, documents still served.
    uri, text = ctx.log("pytorch25_capacity.log")
    m = s.mark()
    open_doc(s, uri, text)
    eq([d["code"] for d in pushed(s, uri, m)], ["OOM102"], "diagnostics after the refused second initialize")


@case
def lifecycle_shutdown_then_exit_exits_0(ctx: Ctx):
    s = ctx.started()
    eq(s.shutdown_and_exit(), 0, "exit status after shutdown + exit")


@case
def lifecycle_exit_without_shutdown_exits_1(ctx: Ctx):
    s = ctx.started()
    s.notify("exit")
    eq(s.wait_exit(), 1, "exit status after exit without shutdown")
    # Also before initialize: exit is the one notification that counts.
    s2 = ctx.server(name="uninitialized")
    s2.notify("exit")
    eq(s2.wait_exit(), 1, "exit status after exit before initialize")


@case
def lifecycle_eof_on_stdin_ends_the_server(ctx: Ctx):
    s = ctx.started()
    s.close_stdin()
    eq(s.wait_exit(), 1, "exit status at end of input without shutdown")
    s2 = ctx.started()
    s2.name = "after-shutdown"
    check(s2.call("shutdown")["result"] is None, "shutdown result")
    s2.close_stdin()
    eq(s2.wait_exit(), 0, "exit status at end of input after shutdown")
    s3 = ctx.server(name="never-initialized")
    s3.close_stdin()
    eq(s3.wait_exit(), 1, "exit status at end of input before initialize")


@case
def lifecycle_requests_after_shutdown_are_errors(ctx: Ctx):
    s = ctx.started()
    uri, text = ctx.log("pytorch25_capacity.log")
    open_doc(s, uri, text)
    check(s.call("shutdown")["result"] is None, "shutdown answers null")
    for method, params in [("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 20, "character": 0}}),
                           ("shutdown", None),
                           ("workspace/executeCommand", {"command": "oomlens.explain", "arguments": ["OOM101"]})]:
        eq(s.call_error(method, params)["code"], INVALID_REQUEST, f"{method} after shutdown")
    s.notify("exit")
    eq(s.wait_exit(), 0, "exit status")


@case
def initialize_negotiates_position_encoding_and_names_itself(ctx: Ctx):
    version = subprocess.run([ctx.binary, "--version"], capture_output=True, text=True).stdout.split()[-1]
    for offered, expected in [(["utf-8", "utf-16"], "utf-8"), (["utf-16", "utf-8"], "utf-8"), (["utf-16"], "utf-16"),
                              (["utf-32"], "utf-16"), (None, "utf-16")]:
        caps = client_capabilities()
        if offered is None:
            del caps["general"]
        else:
            caps["general"]["positionEncodings"] = offered
        s = ctx.server(name=f"offered {offered}")
        result = s.initialize(caps)
        eq(result["capabilities"].get("positionEncoding"), expected, f"positionEncoding when {offered} is offered")
        eq(result.get("serverInfo"), {"name": "oomlens", "version": version}, "serverInfo")
        eq(s.shutdown_and_exit(), 0, "exit status")
    # `oomlens --stdio` starts the same server.
    s = ctx.server(("--stdio",), name="--stdio")
    eq(s.initialize()["serverInfo"]["name"], "oomlens", "serverInfo via --stdio")
    eq(s.shutdown_and_exit(), 0, "exit status")


@case
def initialize_advertises_what_the_client_can_use(ctx: Ctx):
    push = ctx.started(pull=False, literals=False).messages[0]["result"]["capabilities"]
    check("diagnosticProvider" not in push, "no diagnosticProvider for a push-only client")
    eq(push["codeActionProvider"], True, "codeActionProvider without codeActionLiteralSupport")
    eq(push["textDocumentSync"]["change"], 2, "incremental sync")
    check(push["textDocumentSync"]["openClose"], "openClose")
    commands = push["executeCommandProvider"]["commands"]
    check({"oomlens.diagnoseText", "oomlens.explain"} <= set(commands), f"commands: {commands}")
    check(all(c.startswith("oomlens.") for c in commands), "commands carry the oomlens. prefix")
    pull_caps = ctx.started(pull=True, resolve_properties=["command"]).messages[0]["result"]["capabilities"]
    eq(pull_caps["diagnosticProvider"], {"identifier": "oomlens", "interFileDependencies": False,
                                         "workspaceDiagnostics": False}, "diagnosticProvider")
    action_caps = pull_caps["codeActionProvider"]
    check(action_caps.get("resolveProvider") is True, "resolveProvider when the client resolves")
    check({"quickfix", "source.oomlens.explain"} <= set(action_caps["codeActionKinds"]), f"kinds: {action_caps}")


# ---------------------------------------------------------------------------
# diagnostics for each class

CLASS_CASES = [
    # fixture, code, class, '\n'-counted OOM line, user frame file, frame line (1-based), a number in the message
    ("pytorch26_fragmentation.log", "OOM101", "fragmentation", 31, "/home/kai/seg3d/models/blocks.py", 88, "30.14 GiB"),
    ("pytorch25_capacity.log", "OOM102", "capacity", 21, "/home/lena/dpo/dpo.py", 241, "1.37 GiB"),
    ("pytorch22_era_e_external_process.log", "OOM103", "external", 29, "/home/farid/exp/contrastive/train.py", 64,
     "40.00 GiB"),
    ("pytorch26_era_h_allowed_limit.log", "OOM104", "limit", 37, "/home/ivan/vision/models/mae.py", 198, "31.66 GiB"),
    ("pytorch23_truncated_gpu0.log", "OOM105", "unquantified", 15, "/home/gina/whisper-ft/finetune.py", 109,
     "448.00 MiB"),
]


def check_oom_diagnostic(d: dict, text: str, fixture: str, code: str, cls: str, line: int, frame_file: str,
                         frame_line: int, number: str) -> None:
    where = f"{fixture}: "
    eq(d["code"], code, where + "code")
    eq(d["codeDescription"]["href"].rsplit("/", 1)[-1], f"{code}.md", where + "codeDescription.href")
    check(d["codeDescription"]["href"].startswith("https://"), where + "href is a web link")
    eq(d["severity"], 1, where + "severity of an OOM")
    eq(d["source"], "oomlens", where + "source")
    check(number in d["message"], where + f"message carries {number}: {d['message']}")
    oom_line = lsp_line_of(text, line)
    eq(d["range"]["start"], {"line": oom_line, "character": 0}, where + "range start")
    eq(d["range"]["end"]["line"], oom_line, where + "range end line")
    line_text = re.split(r"\r\n|\r|\n", text)[oom_line]
    eq(d["range"]["end"]["character"], len(line_text.encode("utf-16-le")) // 2, where + "range end (whole line)")
    related = d.get("relatedInformation") or []
    frame = [r for r in related if r["location"]["uri"] == "file://" + frame_file]
    check(frame, where + f"relatedInformation names the user frame {frame_file}: {related}")
    eq(frame[0]["location"]["range"]["start"]["line"], frame_line - 1, where + "frame line (0-based)")
    check(frame[0]["message"], where + "related message")
    data = d["data"]
    eq(data["class"], cls, where + "data.class")
    eq(data["oomlens"], "incident:0", where + "data.oomlens")
    eq(data["version"], 1, where + "data.version")
    check(isinstance(data["fixes"], list) and data["fixes"], where + "data.fixes")
    check(all(f["safety"] in ("safe", "unsafe", "display-only") for f in data["fixes"]), where + "fix safety")
    check(data["verify"], where + "data.verify")


@case
def diagnostics_for_each_class(ctx: Ctx):
    s = ctx.started(pull=False)
    for fixture, code, cls, line, frame_file, frame_line, number in CLASS_CASES:
        uri, text = ctx.log(fixture)
        m = s.mark()
        open_doc(s, uri, text)
        diags = pushed(s, uri, m, version=1)
        ooms = [d for d in diags if d["code"].startswith("OOM1")]
        eq(len(ooms), 1, f"{fixture}: OOM diagnostics")
        check_oom_diagnostic(ooms[0], text, fixture, code, cls, line, frame_file, frame_line, number)


@case
def diagnostics_multi_rank_relate_the_other_ranks(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("torchrun_4ranks_rank2_first.log")
    open_doc(s, uri, text)
    result = pull(s, uri)
    ooms = [d for d in result["items"] if d["code"].startswith("OOM1")]
    eq(len(ooms), 1, "one incident for the four ranks")
    d = ooms[0]
    check_oom_diagnostic(d, text, "torchrun", "OOM102", "capacity", 36, "/home/alice/proj/model.py", 344, "7.83 GiB")
    check("rank 2" in d["message"], f"the message names the first failing rank: {d['message']}")
    in_log = {r["location"]["range"]["start"]["line"] + 1: r["message"] for r in d["relatedInformation"]
              if r["location"]["uri"] == uri}
    # '\n'-counted lines of fixtures/README.md = LSP line + 1 (the file has no bare \r)
    check("rank 0" in in_log.get(62, ""), f"rank 0's echo (line 62) is related: {in_log}")
    check(143 in in_log, f"the repeat in the ChildFailedError summary (line 143) is related: {in_log}")
    for line, rank in [(63, 1), (67, 1), (77, 3), (81, 3)]:
        check(f"rank {rank}" in in_log.get(line, ""), f"rank {rank}'s NCCL timeout (line {line}) is related: {in_log}")
    check(108 in in_log, f"the ChildFailedError (line 108) is related: {in_log}")
    for r in d["relatedInformation"]:
        loc = r["location"]["range"]
        check(loc["start"]["line"] <= loc["end"]["line"], "related ranges are ordered")


@case
def diagnostics_lookalikes_and_clean_logs(ctx: Ctx):
    s = ctx.started(pull=False)
    uri, text = ctx.log("lookalike_host_oom_killer.log")
    m = s.mark()
    open_doc(s, uri, text)
    diags = pushed(s, uri, m)
    check(diags, "the host OOM killer is reported")
    check(all(not d["code"].startswith("OOM1") for d in diags), f"no GPU OOM in a host OOM log: {diags}")
    check(all(d["severity"] in (2, 3, 4) for d in diags), "look-alikes are not errors")
    check(all(d["code"] == "OOM202" for d in diags), f"codes: {[d['code'] for d in diags]}")
    # A clean run still gets a publish: an explicit empty array.
    uri, text = ctx.log("clean_training_run.log")
    m = s.mark()
    open_doc(s, uri, text)
    eq(pushed(s, uri, m), [], "diagnostics of a clean run")
    # Pre-OOM warnings are the incident's evidence: related to it, not
    # diagnostics of their own.
    uri, text = ctx.log("deepspeed_cache_flush_warnings.log")
    m = s.mark()
    open_doc(s, uri, text)
    diags = pushed(s, uri, m)
    codes = sorted((d["code"], d["range"]["start"]["line"] + 1) for d in diags)
    eq(codes, [("OOM101", 33)], "the incident alone")
    related = sorted(r["location"]["range"]["start"]["line"] + 1 for r in diags[0].get("relatedInformation", [])
                     if "pressure" in r["message"])
    eq(related, [9, 11, 12], "the cache-flush warnings related to the incident")


@case
def diagnostics_use_lsp_line_ends(ctx: Ctx):
    """Bare \\r (progress bars) ends an LSP line; CRLF is one line end."""
    s = ctx.started(pull=True)
    uri, text = ctx.log("tqdm_carriage_return.log")
    open_doc(s, uri, text)
    d = [d for d in pull(s, uri)["items"] if d["code"].startswith("OOM1")][0]
    expected = lsp_line_of(text, 33)
    check(expected > 40, f"the fixture has bare \\r redraws before the OOM ({expected})")
    eq(d["range"]["start"]["line"], expected, "LSP line of the OOM after bare \\r redraws")
    uri, text = ctx.log("windows_crlf.log")
    open_doc(s, uri, text)
    d = [d for d in pull(s, uri)["items"] if d["code"].startswith("OOM1")][0]
    eq(d["range"]["start"]["line"], 27, "LSP line of the OOM in a CRLF log")
    crlf_line = text.split("\r\n")[27]
    eq(d["range"]["end"]["character"], len(crlf_line.encode("utf-16-le")) // 2, "range end stops before \\r\\n")


@case
def diagnostics_by_document_kind(ctx: Ctx):
    """Logs by languageId or extension (untitled buffers included); other documents get none."""
    s = ctx.started(pull=True)
    oom = ctx.oom_line() + "\n"
    for uri, language, codes in [
        ("untitled:Untitled-1", "plaintext", ["OOM101"]),  # a pasted traceback
        ("file:///runs/job-4242.out", "", ["OOM101"]),
        ("file:///runs/job-4242.err", "unknown", ["OOM101"]),
        ("file:///runs/notes.txt", "", ["OOM101"]),
        ("file:///runs/output", "log", ["OOM101"]),
        ("file:///src/main.cpp", "cpp", []),
        ("file:///src/train.py", "python", ["E999"]),  # a log line is not Python: said once, no fixes
    ]:
        open_doc(s, uri, oom, language=language)
        eq([d["code"] for d in pull(s, uri)["items"]], codes, f"diagnostics of {uri} ({language!r})")


# ---------------------------------------------------------------------------
# push and pull

@case
def push_mode_publishes_and_clears_on_close(ctx: Ctx):
    s = ctx.started(pull=False)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    m = s.mark()
    open_doc(s, uri, text, version=7)
    params = s.wait_notification("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, m)
    eq(params.get("version"), 7, "published version")
    eq([d["code"] for d in params["diagnostics"]], ["OOM101"], "published codes")
    m = s.mark()
    s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    eq(pushed(s, uri, m), [], "diagnostics after close")
    # The pull request is not offered; a pull client would have to ask.
    s.settle(0.2)
    eq(len(s.notifications("textDocument/publishDiagnostics")), 2, "publishes in the session (open, close)")


@case
def pull_mode_never_pushes(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    first = pull(s, uri)
    eq(first["kind"], "full", "first pull")
    eq([d["code"] for d in first["items"]], ["OOM101"], "pulled codes")
    check(isinstance(first.get("resultId"), str) and first["resultId"], "resultId")
    second = pull(s, uri, previous=first["resultId"])
    eq(second, {"kind": "unchanged", "resultId": first["resultId"]}, "pull with the current previousResultId")
    # An edit makes the old result id stale.
    change(s, uri, 2, [{"text": text + "\nlater line\n"}])
    third = pull(s, uri, previous=first["resultId"])
    eq(third["kind"], "full", "pull after a change")
    check(third["resultId"] != first["resultId"], "a new resultId after a change")
    eq([d["code"] for d in third["items"]], ["OOM101"], "codes after the change")
    s.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    closed = pull(s, uri)
    eq(closed.get("items"), [], "pull of a closed document")
    s.settle(0.3)
    eq(s.notifications("textDocument/publishDiagnostics"), [], "publishDiagnostics to a pull client")


# ---------------------------------------------------------------------------
# text sync

@case
def incremental_sync_makes_diagnostics_follow_edits(ctx: Ctx):
    s = ctx.started(pull=False)
    uri = "file:///tmp/oomlens-e2e/incremental.log"
    clean = "".join(f"step {i} loss 0.{i}\n" for i in range(10))
    m = s.mark()
    open_doc(s, uri, clean)
    eq(pushed(s, uri, m, version=1), [], "diagnostics of the clean text")
    oom = ctx.oom_line()
    # Insert the OOM line before line 4.
    m = s.mark()
    change(s, uri, 2, [{"range": rng(4, 0, 4, 0), "text": oom + "\n"}])
    diags = pushed(s, uri, m, version=2)
    eq([(d["code"], d["range"]["start"]["line"]) for d in diags], [("OOM101", 4)], "diagnostic where the line went in")
    # Two changes in one notification, each against the text the previous left:
    # three lines in front, then remove the first line -> the OOM moves to line 6.
    m = s.mark()
    change(s, uri, 3, [{"range": rng(0, 0, 0, 0), "text": "a\nb\nc\n"}, {"range": rng(0, 0, 1, 0), "text": ""}])
    diags = pushed(s, uri, m, version=3)
    eq([(d["code"], d["range"]["start"]["line"]) for d in diags], [("OOM101", 6)], "diagnostic after two changes")
    # Delete the OOM line: the diagnostic goes away.
    m = s.mark()
    change(s, uri, 4, [{"range": rng(6, 0, 7, 0), "text": ""}])
    eq(pushed(s, uri, m, version=4), [], "diagnostics after the OOM line was deleted")
    # The OOM comes back, then its text is replaced.
    m = s.mark()
    change(s, uri, 5, [{"range": rng(2, 0, 2, 0), "text": oom + "\n"}])
    eq(len(pushed(s, uri, m, version=5)), 1, "the OOM is back")
    # Replace the message's text (a word broken inside it is not enough: what
    # remains of an allocator message, like a selection of part of one, is
    # still read as an OOM with its numbers).
    m = s.mark()
    change(s, uri, 6, [{"range": rng(2, 0, 2, len(oom)), "text": "training stopped by the user"}])
    eq(pushed(s, uri, m, version=6), [], "a replaced message is no OOM")


@case
def full_sync_makes_diagnostics_follow_edits(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/full.log"
    open_doc(s, uri, "nothing yet\n")
    eq(pull(s, uri)["items"], [], "no diagnostics at first")
    _, capacity = ctx.log("pytorch25_capacity.log")
    change(s, uri, 2, [{"text": capacity}])
    eq([d["code"] for d in pull(s, uri)["items"]], ["OOM102"], "after the full replacement")
    _, frag = ctx.log("pytorch26_fragmentation.log")
    change(s, uri, 3, [{"text": "x\n"}, {"text": frag}])  # the last full change wins
    eq([d["code"] for d in pull(s, uri)["items"]], ["OOM101"], "after two full replacements")
    change(s, uri, 4, [{"text": ""}])
    eq(pull(s, uri)["items"], [], "after emptying the document")


@case
def rejected_changes_leave_the_document_alone(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    before = pull(s, uri)
    m = s.mark()
    change(s, uri, 2, [{"range": rng(5000, 0, 5000, 1), "text": "x"}])  # past the end
    msg = s.wait_notification("window/logMessage", lambda p: p["type"] == 1, m)
    check(uri in msg["message"], f"the rejection names the document: {msg}")
    change(s, uri, 1, [{"text": ""}])  # a version that is not newer
    again = pull(s, uri, previous=before["resultId"])
    eq(again["kind"], "unchanged", "the document is unchanged after rejected edits")


# ---------------------------------------------------------------------------
# hover

@case
def hover_markdown_on_an_oom_line(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    d = pull(s, uri)["items"][0]
    hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 30, "character": 40}})
    eq(hover["contents"]["kind"], "markdown", "hover kind")
    value = hover["contents"]["value"]
    check(value.startswith("### OOM101"), f"hover starts with the rule: {value[:80]}")
    bar = re.search(r"^\[([█▓▒·░ ]+)\]$", value, re.M)
    check(bar and len(bar.group(1)) == 40, f"a 40-cell memory bar: {value[:600]}")
    check("reserved-unallocated 30.14 GiB" in value, "the legend names the numbers")
    check(f"```sh\n{d['data']['verify']}\n```" in value, "the verification command in a sh block")
    check("expandable_segments:True" in value and "**Fixes**" in value, "the fixes")
    check("/home/kai/seg3d/models/blocks.py:88" in value, "the user frame")
    # Off the OOM line: nothing.
    eq(s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 2, "character": 0}}),
       None, "hover on an ordinary line")
    # Past the end of the document: nothing, not an error.
    eq(s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 900, "character": 3}}),
       None, "hover past the end")


@case
def hover_plaintext_for_clients_without_markdown(ctx: Ctx):
    s = ctx.started(pull=True, markdown=False)
    uri, text = ctx.log("pytorch25_capacity.log")
    open_doc(s, uri, text)
    hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 20, "character": 0}})
    eq(hover["contents"]["kind"], "plaintext", "hover kind without markdown support")
    check("OOM102" in hover["contents"]["value"] and "python" in hover["contents"]["value"],
          "plaintext hover still carries the rule and the verification command")


# ---------------------------------------------------------------------------
# code actions

FRAG_TITLES = [
    "Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True for train.py",
    "Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:512 for train.py",
    "Record a memory snapshot in train.py",
    "Run the verification command",
    "Copy the verification command",
]


@case
def code_actions_quickfixes_and_preferred_only_when_safe(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    d = pull(s, uri)["items"][0]
    actions = code_actions(s, uri, d)
    eq([a["title"] for a in actions], FRAG_TITLES, "quick fix titles")
    check(all(a["kind"] == "quickfix" for a in actions), "all quick fixes")
    eq([a["title"] for a in actions if a.get("isPreferred")], [FRAG_TITLES[0]],
       "isPreferred only on the safe fix (expandable_segments)")
    safety = {f["env"]["value"]: f["safety"] for f in d["data"]["fixes"] if f["kind"] == "env"}
    eq(safety, {"expandable_segments:True": "safe", "max_split_size_mb:512": "unsafe"}, "fix safety in data")
    # Each action names the diagnostic it fixes by everything a client compares
    # (range, severity, code, source, message, related places) and by our
    # reference; the fixes, command and script stay on the published one.
    echo = {k: v for k, v in d.items() if k != "data"}
    echo["data"] = {"oomlens": d["data"]["oomlens"], "version": d["data"]["version"]}
    for a in actions:
        eq(a["diagnostics"], [echo], f"diagnostics of '{a['title']}'")
        check(a["command"]["command"].startswith("oomlens."), "commands are the server's")
    # Without the diagnostics in the context, the range alone finds them.
    by_range = code_actions(s, uri, d, send_diag=False)
    eq([a["title"] for a in by_range], FRAG_TITLES, "actions found by range")
    # A range on an ordinary line has none.
    none = s.call_ok("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": rng(2, 0, 2, 3),
                                                 "context": {"diagnostics": []}})
    eq(none, [], "actions away from the OOM")
    # The command of an action runs: the verification command comes back.
    run = [a for a in actions if a["title"] == "Run the verification command"][0]["command"]
    m = s.mark()
    result = s.call_ok("workspace/executeCommand", {"command": run["command"], "arguments": run["arguments"]})
    eq(result, {"command": d["data"]["verify"]}, "runVerification result")
    shown = s.wait_notification("window/showMessage", after=m)
    check(d["data"]["verify"] in shown["message"], "the command is shown to the user")


@case
def code_actions_honour_only_hierarchically(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    d = pull(s, uri)["items"][0]
    kinds = lambda only: [(a["kind"], a["title"]) for a in code_actions(s, uri, d, only)]  # noqa: E731
    eq([t for _, t in kinds(["quickfix"])], FRAG_TITLES, "only quickfix")
    explain = [("source.oomlens.explain", "Explain every out-of-memory failure in this log")]
    eq(kinds(["source"]), explain, "only source (hierarchical)")
    eq(kinds(["source.oomlens"]), explain, "only source.oomlens")
    eq(kinds(["source.oomlens.explain"]), explain, "only source.oomlens.explain")
    eq(kinds(["refactor"]), [], "only refactor")
    eq(kinds(["sour"]), [], "a prefix that is not a whole kind segment")
    eq(len(kinds(["quickfix", "source"])), len(FRAG_TITLES) + 1, "quickfix and source")
    check(all(k == "quickfix" for k, _ in kinds(None)), "no source action unless asked for")
    source = code_actions(s, uri, d, ["source"])[0]
    md = s.call_ok("workspace/executeCommand", {"command": source["command"]["command"],
                                                "arguments": source["command"]["arguments"]})
    check(md["markdown"].startswith("### OOM101"), "explainDocument returns the report")


@case
def code_actions_as_commands_without_literal_support(ctx: Ctx):
    s = ctx.started(pull=True, literals=False)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    d = pull(s, uri)["items"][0]
    actions = code_actions(s, uri, d)
    eq([a["title"] for a in actions], FRAG_TITLES, "Command titles")
    for a in actions:
        eq(sorted(a), ["arguments", "command", "title"], f"a Command, not a CodeAction: {a}")
        check(isinstance(a["command"], str), "command is the command's name")


@case
def code_action_resolve_fills_the_command(ctx: Ctx):
    s = ctx.started(pull=True, resolve_properties=["command"])
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    d = pull(s, uri)["items"][0]
    actions = code_actions(s, uri, d)
    eq([a["title"] for a in actions], FRAG_TITLES, "titles")
    for a in actions:
        check("command" not in a, f"the command is left to resolve: {a['title']}")
        check("data" in a, "the action carries data for resolve")
    resolved = s.call_ok("codeAction/resolve", actions[0])
    eq(resolved["command"]["command"], "oomlens.showFix", "resolved command")
    eq(resolved["command"]["arguments"][0]["value"], "expandable_segments:True", "resolved command arguments")
    for key in actions[0]:
        eq(resolved[key], actions[0][key], f"resolve keeps '{key}'")
    result = s.call_ok("workspace/executeCommand", {"command": resolved["command"]["command"],
                                                    "arguments": resolved["command"]["arguments"]})
    check("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in result["message"], f"showFix: {result}")
    # After an edit, the old action cannot be resolved: ContentModified.
    change(s, uri, 2, [{"text": text + "\n"}])
    eq(s.call_error("codeAction/resolve", actions[1])["code"], CONTENT_MODIFIED, "resolving a stale action")
    eq(s.call_error("codeAction/resolve", {"title": "x"})["code"], INVALID_PARAMS, "resolving a foreign action")
    # Without dataSupport the client cannot send data back: no resolve, commands at once.
    caps = client_capabilities(pull=True, resolve_properties=["command"])
    caps["textDocument"]["codeAction"]["dataSupport"] = False
    s3 = ctx.started(caps)
    s3.name = "no-dataSupport"
    check(s3.messages[0]["result"]["capabilities"]["codeActionProvider"].get("resolveProvider") is not True,
          "no resolveProvider without dataSupport")
    open_doc(s3, uri, text)
    d3 = pull(s3, uri)["items"][0]
    check(all("command" in a for a in code_actions(s3, uri, d3)), "commands present without dataSupport")
    # A client that resolves only edits gets the commands at once.
    s2 = ctx.started(pull=True, resolve_properties=["edit"])
    open_doc(s2, uri, text)
    d2 = pull(s2, uri)["items"][0]
    check(all("command" in a for a in code_actions(s2, uri, d2)), "commands present when only edits resolve")


# ---------------------------------------------------------------------------
# executeCommand

@case
def execute_diagnose_text_matches_the_cli_contract(ctx: Ctx):
    s = ctx.started()
    path = ctx.log_path("pytorch26_fragmentation.log")
    cli = json.loads(subprocess.run([ctx.binary, "diagnose", "--format", "json", path], capture_output=True,
                                    text=True).stdout)
    _, text = ctx.log("pytorch26_fragmentation.log")
    result = s.call_ok("workspace/executeCommand", {"command": "oomlens.diagnoseText", "arguments": [text]})
    # The command adds each incident's breakdown, for the extension to draw; the rest is the CLI's.
    strip = lambda incidents: [{k: v for k, v in i.items() if k not in ("file", "breakdown")}  # noqa: E731
                               for i in incidents]
    eq(strip(result["json"]["incidents"]), strip(cli["incidents"]), "incidents: LSP vs CLI")
    check("breakdown" not in cli["incidents"][0], "the CLI's contract has no breakdown")
    breakdown = result["json"]["incidents"][0]["breakdown"]
    eq([p["kind"] for p in breakdown["parts"]], ["allocated", "reserved_unallocated", "non_pytorch", "free"],
       "the breakdown's parts, in bar order")
    eq(breakdown["parts"][0]["bytes"], cli["incidents"][0]["numbers"]["allocated_bytes"], "allocated part")
    eq((breakdown["total_bytes"], breakdown["total_is_device"]), (cli["incidents"][0]["numbers"]["total_bytes"], True),
       "the bar's whole is the device")
    eq(result["json"]["version"], cli["version"], "contract version")
    eq(result["json"]["findings"], cli["findings"], "findings")
    check(result["markdown"].startswith("### OOM101"), "markdown")
    # The object form with a label for the source.
    labelled = s.call_ok("workspace/executeCommand", {"command": "oomlens.diagnoseText",
                                                      "arguments": [{"text": text, "source": "terminal"}]})
    eq(labelled["json"]["incidents"][0]["file"], "terminal", "the label names the source")
    empty = s.call_ok("workspace/executeCommand", {"command": "oomlens.diagnoseText", "arguments": ["no oom here\n"]})
    eq(empty["json"]["incidents"], [], "text without an OOM")
    eq(s.call_error("workspace/executeCommand", {"command": "oomlens.diagnoseText"})["code"], INVALID_PARAMS,
       "diagnoseText without text")


@case
def execute_explain_and_unknown_commands(ctx: Ctx):
    s = ctx.started()
    doc = s.call_ok("workspace/executeCommand", {"command": "oomlens.explain", "arguments": ["OOM101"]})
    page = subprocess.run([ctx.binary, "explain", "OOM101"], capture_output=True, text=True).stdout
    check(page.startswith("# OOM101"), "the CLI prints the doc page")
    eq(doc["markdown"], page, "oomlens.explain returns the rule's doc page (as `oomlens explain` prints it)")
    eq(s.call_error("workspace/executeCommand", {"command": "oomlens.explain", "arguments": ["OOM999"]})["code"],
       INVALID_PARAMS, "explain an unknown rule")
    eq(s.call_error("workspace/executeCommand", {"command": "oomlens.selfDestruct", "arguments": []})["code"],
       INVALID_PARAMS, "unknown command")
    eq(s.call_error("workspace/executeCommand", {"arguments": []})["code"], INVALID_PARAMS, "no command")


# ---------------------------------------------------------------------------
# encodings

@case
def encodings_count_utf8_bytes_and_utf16_units(ctx: Ctx):
    oom = ctx.oom_line()
    prefix = "[训练 ö 🔥] "  # 2 CJK, ö, an emoji (a surrogate pair in UTF-16)
    suffix = " 🚀ö"
    lines = ["Größe des Datensatzes: 数据集 bereit 🚀", "step 10 — ö 训练 🔥 loss 0.5", prefix + oom + suffix, "done"]
    text = "\n".join(lines) + "\n"
    oom_text = lines[2]
    u8, u16 = len(oom_text.encode("utf-8")), len(oom_text.encode("utf-16-le")) // 2
    # The exact numbers: the prefix is 17 UTF-8 bytes / 10 UTF-16 units, the suffix 7 / 4.
    eq((len(prefix.encode("utf-8")), len(prefix.encode("utf-16-le")) // 2), (17, 10), "test data")
    eq(len(oom), 568, "test data (the ASCII OOM line)")
    expected = {"utf-8": 592, "utf-16": 582}  # 568 + 17 + 7 bytes; 568 + 10 + 4 units
    eq(expected, {"utf-8": u8, "utf-16": u16}, "test data")
    for offered, encoding in [(True, "utf-8"), (False, "utf-16")]:
        s = ctx.server(name=encoding)
        result = s.initialize(client_capabilities(pull=True, utf8=offered))
        eq(result["capabilities"]["positionEncoding"], encoding, "negotiated")
        uri = f"file:///tmp/oomlens-e2e/{encoding}.log"
        open_doc(s, uri, text)
        d = pull(s, uri)["items"][0]
        eq(d["range"], rng(2, 0, 2, expected[encoding]), f"{encoding}: diagnostic range")
        # Delete the emoji and the space after it, addressed in this encoding.
        emoji_at = {"utf-8": len("[训练 ö ".encode("utf-8")), "utf-16": len("[训练 ö ")}[encoding]
        emoji_len = {"utf-8": 4, "utf-16": 2}[encoding]
        change(s, uri, 2, [{"range": rng(2, emoji_at, 2, emoji_at + emoji_len), "text": ""}])
        d2 = pull(s, uri)["items"][0]
        eq(d2["range"], rng(2, 0, 2, {"utf-8": 588, "utf-16": 580}[encoding]),
           f"{encoding}: range after deleting the emoji")
        # Hover on a character after the (remaining) non-ASCII text finds the OOM.
        after = {"utf-8": len("[训练 ö] torch".encode("utf-8")), "utf-16": len("[训练 ö] torch")}[encoding]
        hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 2, "character": after}})
        check(hover and "OOM101" in hover["contents"]["value"], f"{encoding}: hover after non-ASCII text")
        # A character offset past the end of the line clamps to the line (spec): still the OOM line.
        hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": 2, "character": 100000}})
        check(hover and "OOM101" in hover["contents"]["value"], f"{encoding}: hover past the line end")


# ---------------------------------------------------------------------------
# cancellation, superseded analyses, progress

@case
def cancel_a_slow_diagnose_text(ctx: Ctx):
    s = ctx.started()
    text = slow_text(2.0) + ctx.oom_line() + "\n"
    rid, request = s.request_bytes("workspace/executeCommand", {"command": "oomlens.diagnoseText", "arguments": [text]})
    cancel = LspServer.notification_bytes("$/cancelRequest", {"id": rid})
    t0 = time.monotonic()
    s.send_raw(request + cancel)
    err = s.wait_response(rid)
    eq(err.get("error", {}).get("code"), REQUEST_CANCELLED, "the cancelled diagnoseText")
    # Cancelling again, or an id never sent, sends nothing.
    s.notify("$/cancelRequest", {"id": rid})
    s.notify("$/cancelRequest", {"id": 424242})
    # The server goes on: a quick request after it is answered (once the
    # worker dropped the cancelled analysis).
    small = s.call_ok("workspace/executeCommand", {"command": "oomlens.diagnoseText", "arguments": [ctx.oom_line()]})
    eq(len(small["json"]["incidents"]), 1, "diagnoseText after a cancel")
    check(time.monotonic() - t0 < 8, "the cancelled analysis did not run to its end first")
    s.settle(0.6)
    eq(len(s.responses[json.dumps(rid)]), 1, "the cancelled request answered exactly once")


@case
def cancel_a_request_waiting_for_a_large_document(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/large.log"
    text = slow_text(2.0) + ctx.oom_line() + "\n"
    hover_id, hover = s.request_bytes("textDocument/hover", {"textDocument": {"uri": uri},
                                                             "position": {"line": 1, "character": 0}})
    pull_id, pull_req = s.request_bytes("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    cancel = LspServer.notification_bytes("$/cancelRequest", {"id": hover_id})
    s.send_raw(did_open_bytes(uri, text) + hover + pull_req + cancel)
    eq(s.wait_response(hover_id).get("error", {}).get("code"), REQUEST_CANCELLED, "the cancelled hover")
    pulled = s.wait_response(pull_id, timeout=20)
    eq([d["code"] for d in pulled["result"]["items"]], ["OOM101"], "the other waiting request still gets its answer")
    # Cancel after the answer: nothing more is sent for that id.
    s.notify("$/cancelRequest", {"id": pull_id})
    # Many requests and cancels interleaved: every id answered exactly once.
    ids = []
    batch = b""
    for i in range(30):
        rid, req = s.request_bytes("textDocument/hover", {"textDocument": {"uri": uri},
                                                          "position": {"line": 26315, "character": i}})
        ids.append(rid)
        batch += req
        if i % 3 == 0:
            batch += LspServer.notification_bytes("$/cancelRequest", {"id": rid})
    s.send_raw(batch)
    for rid in ids:
        s.wait_response(rid)
    s.settle(0.3)
    eq(s.answered_once_problems(), [], "answers per id over the session")


@case
def a_change_supersedes_a_pending_analysis(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/superseded.log"
    text = slow_text(2.0) + ctx.oom_line() + "\n"
    old_id, old_pull = s.request_bytes("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    edit = LspServer.notification_bytes("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "nothing to see\n"}]})
    new_id, new_pull = s.request_bytes("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    s.send_raw(did_open_bytes(uri, text) + old_pull + edit + new_pull)
    # A pull the edit superseded is cancelled with retriggerRequest (LSP 3.17),
    # so that a client pulls the new version rather than showing nothing.
    old_error = s.wait_response(old_id).get("error", {})
    eq(old_error.get("code"), SERVER_CANCELLED, "the pull for the old version")
    eq(old_error.get("data"), {"retriggerRequest": True}, "the cancelled pull asks to be retriggered")
    new = s.wait_response(new_id)
    eq(new["result"]["items"], [], "the new version's (empty) diagnostics")
    # In push mode a superseded analysis is never published.
    p = ctx.started(pull=False)
    p.name = "push"
    p.send_raw(did_open_bytes(uri, text) + LspServer.notification_bytes("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": ctx.oom_line() + "\n"}]}))
    eq([d["code"] for d in pushed(p, uri, version=2)], ["OOM101"], "the new version is published")
    p.settle(0.8)
    eq([n["params"].get("version") for n in p.notifications("textDocument/publishDiagnostics")], [2],
       "only the newest version is published")


@case
def progress_for_a_large_document(ctx: Ctx):
    s = ctx.started(pull=False, progress=True)
    uri = "file:///tmp/oomlens-e2e/progress.log"
    # Slow text first (so the client's answer to create arrives while the
    # analysis runs), then plain lines up to 50 MB: reports come every 16 MiB,
    # and start once the client has answered. Look-alike lines cost little
    # now, so a few megabytes of them are not enough margin on a loaded
    # machine: three report points leave a late answer room.
    text = slow_text(4)
    text += CLEAN_LINE * ((50_000_000 - len(text)) // len(CLEAN_LINE)) + ctx.oom_line() + "\n"
    m = s.mark()
    open_doc(s, uri, text)
    diags = pushed(s, uri, m, timeout=30)
    eq([d["code"] for d in diags], ["OOM101"], "diagnostics of the large document")
    creates = s.server_requests("window/workDoneProgress/create", m)
    eq(len(creates), 1, "one create request")
    token = creates[0]["params"]["token"]
    s.wait_notification("$/progress", lambda p: p["value"]["kind"] == "end", m)
    events = [n["params"] for n in s.notifications("$/progress", m)]
    check(all(e["token"] == token for e in events), "progress on the created token")
    kinds = [e["value"]["kind"] for e in events]
    check(kinds[0] == "begin" and kinds[-1] == "end" and kinds.count("begin") == 1 and kinds.count("end") == 1,
          f"begin ... end: {kinds}")
    check("report" in kinds, f"at least one report: {kinds}")
    check(events[0]["value"].get("title"), "begin has a title")
    pct = [e["value"]["percentage"] for e in events if "percentage" in e["value"]]
    check(pct == sorted(pct) and all(0 <= p <= 100 for p in pct), f"percentages rise within 0..100: {pct}")
    order = [i for i, msg in enumerate(s.messages[m:]) if msg.get("method") in ("window/workDoneProgress/create",
                                                                                "$/progress")]
    eq(s.messages[m + order[0]]["method"], "window/workDoneProgress/create", "create comes before any $/progress")
    # A small document gets no progress; a client without workDoneProgress never does.
    m = s.mark()
    open_doc(s, "file:///tmp/oomlens-e2e/small.log", ctx.oom_line())
    pushed(s, "file:///tmp/oomlens-e2e/small.log", m)
    eq(s.server_requests("window/workDoneProgress/create", m), [], "no progress for a small document")
    q = ctx.started(pull=False, progress=False)
    q.name = "no-progress"
    m = q.mark()
    open_doc(q, uri, text)
    pushed(q, uri, m, timeout=30)
    eq(q.server_requests("window/workDoneProgress/create", m) + q.notifications("$/progress", m), [],
       "no progress without window.workDoneProgress")


# ---------------------------------------------------------------------------
# settings

def frag_titles(s: LspServer, uri: str, pull_mode: bool, after: int = 0, version=None) -> list:
    d = (pull(s, uri)["items"] if pull_mode else pushed(s, uri, after, version))[0]
    return [a["title"] for a in code_actions(s, uri, d)]


@case
def settings_from_initialization_options(ctx: Ctx):
    s = ctx.started(client_capabilities(pull=True), {"allocatorOption": "max_split_size_mb:256"})
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    titles = frag_titles(s, uri, True)
    check("Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256 for train.py" in titles, f"titles: {titles}")
    check(not any("expandable_segments" in t for t in titles), f"the default option is not offered: {titles}")
    # The "oomlens" section form works too.
    s2 = ctx.started(client_capabilities(pull=True), {"oomlens": {"allocatorOption": "max_split_size_mb:128"}})
    open_doc(s2, uri, text)
    check("Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:128 for train.py" in frag_titles(s2, uri, True),
          "section form")
    # A bad value is reported and the default kept.
    s3 = ctx.server(name="bad-setting")
    m = s3.mark()
    s3.initialize(client_capabilities(pull=True), {"allocatorOption": 42})
    warning = s3.wait_notification("window/logMessage", lambda p: "allocatorOption" in p["message"], m)
    eq(warning["type"], 2, "a bad setting is a warning")
    open_doc(s3, uri, text)
    eq(frag_titles(s3, uri, True), FRAG_TITLES, "defaults after a bad setting")


@case
def settings_from_did_change_configuration(ctx: Ctx):
    s = ctx.started(pull=False)
    uri, text = ctx.log("pytorch26_fragmentation.log")
    m = s.mark()
    open_doc(s, uri, text)
    eq(frag_titles(s, uri, False, m), FRAG_TITLES, "default titles")
    m = s.mark()
    s.notify("workspace/didChangeConfiguration", {"settings": {"oomlens": {"allocatorOption": "max_split_size_mb:256"}}})
    titles = frag_titles(s, uri, False, m)
    check("Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:256 for train.py" in titles, f"titles after the change: {titles}")


@case
def pull_superseded_by_a_settings_change_is_answered_by_the_new_analysis(ctx: Ctx):
    # A pull waiting for an analysis that a settings change replaced is
    # answered once, by the new analysis of the same text: failing it would
    # leave a client that does not re-pull on refresh with nothing.
    s = ctx.started(pull=True)
    _, text = ctx.log("pytorch26_fragmentation.log")
    uri = "file:///w/big.log"
    big = slow_text(8.0) + text  # still being analysed when the pull and the settings change arrive
    open_doc(s, uri, big)
    rid = s.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
    s.notify("workspace/didChangeConfiguration", {"settings": {"oomlens": {"allocatorOption": "max_split_size_mb:256"}}})
    r = s.wait_response(rid, timeout=60)
    check("result" in r, f"answered with diagnostics, not an error: {str(r)[:200]}")
    eq([d["code"] for d in r["result"]["items"]], ["OOM101"], "the OOM")
    again = pull(s, uri, previous=r["result"]["resultId"], timeout=60)
    eq(again["kind"], "unchanged", "that answer was the newest analysis's")
    eq(s.answered_once_problems(), [], "every request answered exactly once")


@case
def settings_pulled_with_workspace_configuration(ctx: Ctx):
    s = ctx.server()
    answers = [{"allocatorOption": "max_split_size_mb:64"}]
    s.request_handlers["workspace/configuration"] = lambda params: [answers[-1] for _ in params["items"]]
    s.initialize(client_capabilities(pull=True, configuration=True, refresh=True))
    req = s.wait_for(lambda: s.server_requests("workspace/configuration"), what="a workspace/configuration request")
    eq(req[0]["params"]["items"][0].get("section"), "oomlens", "the section asked for")
    uri, text = ctx.log("pytorch26_fragmentation.log")
    open_doc(s, uri, text)
    s.wait_for(lambda: s.server_requests("workspace/diagnostic/refresh"), what="a refresh after the settings arrived")
    first = pull(s, uri)
    titles = [a["title"] for a in code_actions(s, uri, first["items"][0])]
    check("Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:64 for train.py" in titles, f"titles: {titles}")
    # The user changes the setting: the server asks again, re-analyses and asks the client to pull.
    answers.append({"allocatorOption": "max_split_size_mb:32"})
    m = s.mark()
    s.notify("workspace/didChangeConfiguration", {"settings": None})
    s.wait_for(lambda: s.server_requests("workspace/configuration", m), what="a second workspace/configuration")
    s.wait_for(lambda: s.server_requests("workspace/diagnostic/refresh", m), what="workspace/diagnostic/refresh")
    # The document did not change, but its diagnostics did: the old result id must not count as current.
    again = pull(s, uri, previous=first["resultId"])
    eq(again["kind"], "full", "a pull after a settings change with the old resultId")
    titles = [a["title"] for a in code_actions(s, uri, again["items"][0])]
    check("Set PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb:32 for train.py" in titles, f"titles after the change: {titles}")
    eq(s.notifications("textDocument/publishDiagnostics"), [], "still no pushes to a pull client")


# ---------------------------------------------------------------------------
# malformed input

def raw_request(rid, method="oomlens/ping", params=None) -> bytes:
    message = {"jsonrpc": "2.0", "id": rid, "method": method}
    if params is not None:
        message["params"] = params
    return frame(encode(message))


@case
def malformed_invalid_json_gets_32700(ctx: Ctx):
    s = ctx.started()
    s.send_raw(frame(b'{"jsonrpc": "2.0", "id": 5, "method": '))
    err = s.wait_for(lambda: s.responses.get("null"), what="the parse error")[0]
    eq(err["error"]["code"], PARSE_ERROR, "invalid JSON")
    eq(err["id"], None, "id of a parse error")
    expect_still_serving(s)


@case
def malformed_valid_json_that_is_not_a_request_gets_32600(ctx: Ctx):
    s = ctx.started()
    cases = [
        (b"[]", None, "an empty array"),
        (b'[{"jsonrpc":"2.0","id":901,"method":"shutdown"}]', None, "a batch"),
        (b"42", None, "a number"),
        (b'{"id":902,"method":"textDocument/hover","params":{}}', 902, "missing jsonrpc"),
        (b'{"jsonrpc":"1.0","id":903,"method":"textDocument/hover"}', 903, "jsonrpc 1.0"),
        (b'{"jsonrpc":"2.0","id":904,"method":7}', 904, "method a number"),
        (b'{"jsonrpc":"2.0","id":{"a":1},"method":"shutdown"}', None, "id an object"),
        (b'{"jsonrpc":"2.0","id":905}', 905, "neither method nor result"),
        (b'{"jsonrpc":"2.0","id":906,"method":"textDocument/hover","params":"x"}', 906, "params a string"),
    ]
    for body, rid, what in cases:
        m = s.mark()
        if rid is not None:
            s.sent_ids.append(rid)
        s.send_raw(frame(body))
        reply = s.wait_for(lambda: [x for x in s.messages[m:] if "method" not in x], what=f"the reply to {what}")[0]
        eq(reply.get("error", {}).get("code"), INVALID_REQUEST, what)
        eq(reply["id"], rid, f"id of the reply to {what}")
        expect_still_serving(s)
    # "id an object" was not taken as a shutdown: the server still works.
    eq(s.shutdown_and_exit(), 0, "exit status")


@case
def malformed_unknown_methods(ctx: Ctx):
    s = ctx.started()
    eq(s.call_error("textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///a.log"}})["code"],
       METHOD_NOT_FOUND, "unknown request")
    eq(s.call_error("$/somethingNew", {})["code"], METHOD_NOT_FOUND, "unknown $/ request")
    m = s.mark()
    s.notify("textDocument/somethingUnknown", {"x": 1})
    s.notify("$/somethingNew", {})
    s.notify("textDocument/didOpen", {"textDocument": {"uri": "file:///a.log"}})  # bad params: dropped
    s.notify("textDocument/didChange", {"textDocument": {"uri": "file:///never-opened.log", "version": 2},
                                        "contentChanges": [{"text": "x"}]})
    expect_still_serving(s)
    replies = [x for x in s.messages[m:] if "method" not in x]
    eq(len(replies), 1, "notifications get no reply (only the ping after them is answered)")


@case
def malformed_bad_params_get_32602(ctx: Ctx):
    s = ctx.started()
    uri, text = ctx.log("pytorch25_capacity.log")
    open_doc(s, uri, text)
    cases = [
        ("textDocument/hover", {"textDocument": {"uri": uri}}, "hover without position"),
        ("textDocument/hover", {"position": {"line": 0, "character": 0}}, "hover without textDocument"),
        ("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}}, "uri a number"),
        ("textDocument/hover", [1, 2], "params an array"),
        ("textDocument/hover", None, "no params"),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}}, "codeAction without range"),
        ("textDocument/diagnostic", {}, "diagnostic without textDocument"),
        ("workspace/executeCommand", {"command": 12}, "command a number"),
        ("initialize", None, "second initialize without params"),
    ]
    for method, params, what in cases:
        err = s.call_error(method, params)
        expected = INVALID_REQUEST if method == "initialize" else INVALID_PARAMS
        eq(err["code"], expected, what)
    # A position that is not a position: no hover, no crash.
    r = s.call("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": "a"}})
    check("result" in r or r["error"]["code"] == INVALID_PARAMS, f"hover at a malformed position: {r}")
    expect_still_serving(s)


@case
def malformed_framing_is_skipped(ctx: Ctx):
    s = ctx.started()
    ping = lambda rid: raw_request(rid)  # noqa: E731
    cases = [
        (b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1}",
         "missing Content-Length"),
        (b"Content-Length: abc\r\n\r\n{}", "Content-Length not a number"),
        (b"Content-Length: -5\r\n\r\n{}", "negative Content-Length"),
        (b"this is not LSP at all\r\n\r\n", "a line of text"),
        (b"Content-Length: 4\r\ncontent-length: 5\r\n\r\n{}  ", "conflicting Content-Length"),
        (bytes(range(256)) * 4 + b"\r\n\r\n", "binary noise"),
    ]
    for i, (bad, what) in enumerate(cases):
        rid = 1000 + i
        s.sent_ids.append(rid)
        s.send_raw(bad + ping(rid))
        reply = s.wait_response(rid)
        eq(reply.get("error", {}).get("code"), METHOD_NOT_FOUND, f"the request after {what}")
    # A header split across writes and a body written byte by byte still make one message.
    body = encode({"jsonrpc": "2.0", "id": 1100, "method": "oomlens/ping"})
    s.sent_ids.append(1100)
    s.send_raw(b"Content-Len")
    s.send_raw(b"gth: %d\r\n" % len(body))
    s.send_raw(b"\r\n")
    for k in range(0, len(body), 7):
        s.send_raw(body[k:k + 7])
    eq(s.wait_response(1100)["error"]["code"], METHOD_NOT_FOUND, "the request written in pieces")


@case
def malformed_absurd_content_length(ctx: Ctx):
    s = ctx.started()
    s.sent_ids.append(2000)
    s.send_raw(b"Content-Length: 99999999999\r\n\r\n{}" + raw_request(2000))
    eq(s.wait_response(2000, timeout=5)["error"]["code"], METHOD_NOT_FOUND, "the request after an absurd length")
    # Larger than 64 bits.
    s.sent_ids.append(2001)
    s.send_raw(b"Content-Length: 99999999999999999999999\r\n\r\n{}" + raw_request(2001))
    eq(s.wait_response(2001, timeout=5)["error"]["code"], METHOD_NOT_FOUND, "the request after a 64-bit overflow")


@case
def malformed_oversized_request_is_answered_with_the_limit(ctx: Ctx):
    s = ctx.started()
    big = encode({"jsonrpc": "2.0", "id": 3000, "method": "workspace/executeCommand",
                  "params": {"command": "oomlens.diagnoseText", "arguments": ["x" * (65 * 1024 * 1024)]}})
    s.sent_ids += [3000, 3001]  # each must be answered exactly once
    s.send_raw(frame(big) + raw_request(3001))
    eq(s.wait_response(3001, timeout=20)["error"]["code"], METHOD_NOT_FOUND, "the request after a 65 MiB message")
    # The oversized request was read (it is under the framing's limit) but
    # not handled: exactly one answer, an error that names the limit.
    answers = s.responses.get("3000", [])
    eq(len(answers), 1, "one answer to the oversized request")
    eq(answers[0]["error"]["code"], -32803, "RequestFailed")
    check("64 MiB" in answers[0]["error"]["message"], f"the limit is named: {answers[0]['error']['message']}")


@case
def malformed_invalid_utf8_in_a_body(ctx: Ctx):
    s = ctx.started(pull=True)
    body = b'{"jsonrpc":"2.0","id":4000,"method":"workspace/executeCommand","params":{"command":"oomlens.explain",' \
           b'"arguments":["OOM1\xff\xfe01"]}}'
    m = s.mark()
    s.send_raw(frame(body))
    reply = s.wait_for(lambda: [x for x in s.messages[m:] if "method" not in x], what="the reply")[0]
    eq(reply.get("error", {}).get("code"), PARSE_ERROR, "invalid UTF-8 is not JSON text")
    eq(reply["id"], None, "id of the parse error")
    # A lone surrogate escape is JSON text but not Unicode: refused as a
    # parse error (or answered), never a crash.
    m = s.mark()
    s.send_raw(frame(b'{"jsonrpc":"2.0","id":4001,"method":"oomlens/ping","params":{"x":"\\ud800"}}'))
    reply = s.wait_for(lambda: [x for x in s.messages[m:] if "method" not in x], what="the reply")[0]
    check(reply["id"] in (None, 4001) and reply["error"]["code"] in (PARSE_ERROR, METHOD_NOT_FOUND),
          f"reply to a lone surrogate: {reply}")
    # Text that was invalid UTF-8 in the file, as an editor hands it over (U+FFFD), is analysed.
    uri, text = ctx.log("invalid_utf8_nearby.log")
    open_doc(s, uri, text)
    eq([d["code"] for d in pull(s, uri)["items"] if d["code"].startswith("OOM1")], ["OOM102"],
       "the log with invalid UTF-8 nearby")
    expect_still_serving(s)


@case
def malformed_truncated_body_at_eof(ctx: Ctx):
    s = ctx.started()
    expect_still_serving(s)
    s.send_raw(b"Content-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":77,")
    s.close_stdin()
    eq(s.wait_exit(), 1, "exit status after a truncated body and end of input")
    check("77" not in s.responses, "no reply to the truncated request")
    s2 = ctx.started()
    s2.name = "truncated-header"
    s2.send_raw(b"Content-Len")
    s2.close_stdin()
    eq(s2.wait_exit(), 1, "exit status after a truncated header and end of input")


@case
def duplicate_ids_and_string_ids(ctx: Ctx):
    s = ctx.started(pull=True)
    eq(s.call_error("oomlens/ping")["code"], METHOD_NOT_FOUND, "integer id")
    r = s.wait_response(s.request("oomlens/ping", id="abc-1"))
    eq(r["id"], "abc-1", "a string id is echoed")
    # Two requests with one id while the first still waits: the second is refused, the first answered.
    uri = "file:///tmp/oomlens-e2e/dup.log"
    first = raw_request(55, "textDocument/diagnostic", {"textDocument": {"uri": uri}})
    s.sent_ids.append(55)
    s.check_answers = False  # two answers to id 55 are expected here  # type: ignore[attr-defined]
    # The two requests go in a write of their own, after the document's: a
    # pipe hands them to the server in one read, so both are queued long
    # before the analysis of the slow text can answer the first.
    s.send_raw(did_open_bytes(uri, slow_text(4.0) + ctx.oom_line()))
    s.send_raw(first + first)
    replies = s.wait_for(lambda: len(s.responses.get("55", [])) >= 2 and s.responses["55"], timeout=20,
                         what="both replies to id 55")
    eq(sorted("error" in r for r in replies), [False, True], "one result and one refusal for a duplicate id")
    eq([r["error"]["code"] for r in replies if "error" in r], [INVALID_REQUEST], "the refusal")


# ---------------------------------------------------------------------------
# large documents: read while they arrive (the fast path for long JSON strings)

def mixed_text(ctx: Ctx, megabytes: float, oom_at: float) -> tuple[str, int]:
    """A few MB whose lines end in \\n, \\r\\n and bare \\r, with ANSI colour,
    quotes, backslashes, tabs, non-ASCII and emoji (JSON escapes of every
    kind), and the fragmentation OOM line about `oom_at` of the way in.
    Returns the text and the OOM's 1-based '\\n'-counted line."""
    block = ("step 10 | loss 2.5 | ö 训练 🔥\n"
             "\x1b[32mINFO\x1b[0m \"quoted\" back\\slash\ttab\r\n"
             "progress  10%|█         |\rprogress  20%|██        |\r\n"
             "nccl \u2014 ok\n")
    n = int(megabytes * 1e6 / len(block.encode("utf-8")))
    k = int(n * oom_at)
    text = block * k + ctx.oom_line() + "\n" + block * (n - k)
    return text, text[: text.index(ctx.oom_line())].count("\n") + 1


@case
def large_document_positions_survive_every_line_end(ctx: Ctx):
    for utf8 in (False, True):
        s = ctx.server(name="utf-8" if utf8 else "utf-16")
        s.initialize(client_capabilities(pull=True, utf8=utf8))
        uri = "file:///tmp/oomlens-e2e/large-mixed.log"
        text, line = mixed_text(ctx, 3.0, 0.6)
        s.send_raw(did_open_bytes(uri, text))
        d = pull(s, uri)["items"][0]
        eq(d["code"], "OOM101", "the OOM of the large document")
        oom_line = lsp_line_of(text, line)
        eq(d["range"]["start"], {"line": oom_line, "character": 0}, "range start after \\r\\n and bare \\r lines")
        hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri},
                                                 "position": {"line": oom_line, "character": 5}})
        check(hover and "OOM101" in hover["contents"]["value"], "hover on the OOM line of a large document")
        # A full replacement, itself large: the OOM moves.
        text2, line2 = mixed_text(ctx, 2.0, 0.2)
        change(s, uri, 2, [{"text": text2}])
        d2 = pull(s, uri)["items"][0]
        eq(d2["range"]["start"]["line"], lsp_line_of(text2, line2), "range start after a large full change")
        # A ranged edit on top: two lines inserted before it.
        change(s, uri, 3, [{"range": rng(0, 0, 0, 0), "text": "one\r\ntwo\r"}])
        d3 = pull(s, uri)["items"][0]
        eq(d3["range"]["start"]["line"], lsp_line_of(text2, line2) + 2, "range start after a ranged edit")
        eq(s.shutdown_and_exit(), 0, "exit status")


def large_log_with_incidents(ctx: Ctx, megabytes: float) -> str:
    """A log of about `megabytes` MB with '\n' line ends only: ordinary
    training lines with fixture logs of several classes spread through it."""
    pieces = [ctx.log(name)[1] for name in ("pytorch26_fragmentation.log", "pytorch25_capacity.log",
                                            "torchrun_4ranks_rank2_first.log", "clean_training_run.log")]
    filler = "".join(f"[rank0]: step {i} | loss 2.{i % 97:02d} | lr 3e-4 | tokens/s 51234\n" for i in range(2000))
    out, size, k = [], 0, 0
    while size < megabytes * 1e6:
        piece = filler + pieces[k % len(pieces)]
        out.append(piece)
        size += len(piece)
        k += 1
    return "".join(out)


def line_offset(text: str, line: int) -> int:
    """The offset of '\n'-counted 0-based line `line`."""
    at = 0
    for _ in range(line):
        at = text.index("\n", at) + 1
    return at


def same_as_a_fresh_open(ctx: Ctx, s: LspServer, uri: str, text: str, version: int, what: str) -> None:
    """The diagnostics of the edited document equal those of its text opened fresh."""
    fresh = uri.replace(".log", f"-fresh{version}.log")
    open_doc(s, fresh, text)
    def normalised(items: list) -> str:  # the document version, in each diagnostic's data, differs
        for d in items:
            d.get("data", {}).pop("version", None)
        return json.dumps(items, sort_keys=True)
    # Generous: this checks what is published, not how fast (bench/ does),
    # and the test suite runs beside other tests.
    started = time.perf_counter()
    got = normalised(pull(s, uri, timeout=120)["items"])
    waited = time.perf_counter() - started
    want = normalised(pull(s, fresh, timeout=120)["items"]).replace(fresh, uri)
    if waited > 5:
        print(f"      note: {what}: the edited document's diagnostics took {waited:.1f} s", flush=True)
    if got != want:
        g, w = json.loads(got), json.loads(want)
        diff = next((i for i in range(min(len(g), len(w))) if g[i] != w[i]), min(len(g), len(w)))
        detail = (f"{len(g)} against {len(w)} diagnostics; first difference at {diff}: "
                  f"{json.dumps(g[diff] if diff < len(g) else None)} / {json.dumps(w[diff] if diff < len(w) else None)}")
        check(False, f"{what}: the edited document's diagnostics differ from a fresh open of its text: {detail}")
    s.notify("textDocument/didClose", {"textDocument": {"uri": fresh}})


@case
def large_log_edits_match_a_fresh_analysis(ctx: Ctx):
    """A log above the segmented size is updated around each edit (ranged,
    several at once, a burst without waiting, a full replacement); after each,
    its diagnostics are those of a fresh analysis of the same text."""
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/large-edited.log"
    text = large_log_with_incidents(ctx, 18.0)  # above the segmented size, 16 MiB
    s.send_raw(did_open_bytes(uri, text))
    before = pull(s, uri)["items"]
    check(len(before) >= 10, "the large log has its incidents")
    lines = text.count("\n")
    oom = ctx.oom_line() + "\n"

    # An OOM typed into the middle.
    at = lines // 2
    change(s, uri, 2, [{"range": rng(at, 0, at, 0), "text": oom}])
    o = line_offset(text, at)
    text = text[:o] + oom + text[o:]
    same_as_a_fresh_open(ctx, s, uri, text, 2, "an OOM inserted mid-log")
    after = pull(s, uri)["items"]
    check(any(d["range"]["start"]["line"] == at or
              any(r["location"]["range"]["start"]["line"] == at for r in d.get("relatedInformation", []))
              for d in after), "the inserted OOM is diagnosed (on its own or as a repeat of another)")

    # Two changes in one notification, far apart: a block removed near the
    # start, then a line rewritten near the end (against the text the first left).
    a, b = line_offset(text, 1000), line_offset(text, 1500)
    text = text[:a] + text[b:]
    end_line = text.count("\n") - 3000
    c = line_offset(text, end_line)
    d = text.index("\n", c)
    text = text[:c] + "RuntimeError: CUDA error: out of memory" + text[d:]
    change(s, uri, 3, [{"range": rng(1000, 0, 1500, 0), "text": ""},
                       {"range": rng(end_line, 0, end_line, d - c), "text": "RuntimeError: CUDA error: out of memory"}])
    same_as_a_fresh_open(ctx, s, uri, text, 3, "two changes far apart")

    # A burst of keystrokes sent without waiting: each supersedes the last.
    version = 3
    at = lines // 3
    o = line_offset(text, at)  # typing at the start of line `at` keeps it there
    typed = "DataLoader worker (pid 4242) is killed by signal: Killed.\n"
    for k, ch in enumerate(typed):
        version += 1
        change(s, uri, version, [{"range": rng(at, k, at, k), "text": ch}])
    text = text[:o] + typed + text[o:]
    same_as_a_fresh_open(ctx, s, uri, text, version, "a burst of keystrokes")

    # The whole text sent again, slightly changed (a full-sync client).
    cut = line_offset(text, 200)
    text = text[:cut] + oom + text[cut:]
    version += 1
    change(s, uri, version, [{"text": text}])
    same_as_a_fresh_open(ctx, s, uri, text, version, "a full replacement")
    eq(s.shutdown_and_exit(), 0, "exit status")


@case
def large_document_with_bad_json_gets_32700(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///tmp/oomlens-e2e/large-bad.log"
    text, _ = mixed_text(ctx, 2.0, 0.5)
    good = did_open_bytes(uri, text)
    header, body = good.split(b"\r\n\r\n", 1)
    at = body.index(b"step 10", len(body) * 3 // 4)  # between two escapes, not inside one
    for bad, what in ((b"\\q", "an invalid escape"), (b"\xff", "invalid UTF-8"), (b"\x01", "a raw control character"),
                      (b"\\ud800 ", "a lone surrogate")):
        broken = body[:at] + bad + body[at:]
        m = s.mark()
        s.send_raw(frame(broken))
        reply = s.wait_for(lambda: [x for x in s.messages[m:] if "method" not in x], timeout=20, what="the reply")[0]
        eq(reply.get("error", {}).get("code"), PARSE_ERROR, f"a large didOpen with {what}")
        eq(reply["id"], None, "id of the parse error")
        check("invalid string" in reply["error"]["message"], f"the error says what is wrong: {reply['error']}")
        eq(pull(s, uri)["items"], [], f"the document with {what} is not open")
    # The same bytes, well-formed, still open.
    s.send_raw(good)
    eq([d["code"] for d in pull(s, uri)["items"]], ["OOM101"], "the well-formed document")
    expect_still_serving(s)



# ---------------------------------------------------------------------------
# oomlens.analyzeSnapshot (memory snapshots)

def snapshot_path(ctx: Ctx, name: str) -> str:
    return os.path.abspath(os.path.join(ctx.fixtures, "snapshots", name))


@case
def execute_analyze_snapshot_matches_the_cli(ctx: Ctx):
    s = ctx.started()
    commands = s.messages[0]["result"]["capabilities"]["executeCommandProvider"]["commands"]
    check("oomlens.analyzeSnapshot" in commands, f"advertised: {commands}")
    path = snapshot_path(ctx, "fragmentation_p4.pickle")
    cli = lambda fmt: subprocess.run([ctx.binary, "snapshot", "--format", fmt, path], capture_output=True,  # noqa: E731
                                     text=True).stdout
    result = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [{"path": path}]})
    eq(result["json"], json.loads(cli("json")), "the JSON is the CLI's --format json")
    eq(result["html"], cli("html"), "the HTML is the CLI's --format html")
    md = result["markdown"]
    check("Out of memory on device 0: fragmentation" in md, f"markdown verdict: {md[:300]}")
    check("largest free block 512.00 MiB < requested 4.00 GiB" in md, "markdown arithmetic")
    check("Top allocation sites" in md and "train.py:112" in md, "markdown top sites with frames")
    # A file:// URI (percent-encoded) and a plain string name the same file.
    uri = "file://" + path.replace("_p4", "%5Fp4")
    by_uri = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [uri]})
    eq(by_uri["json"], result["json"], "by file:// URI")
    by_string = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [path]})
    eq(by_string["json"], result["json"], "by plain path")
    # Markup in frame names stays text in the HTML.
    markup = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot",
                                                    "arguments": [{"path": snapshot_path(ctx, "markup_p4.pickle")}]})
    check("<script" not in markup["html"] and "&lt;script&gt;alert(1)&lt;/script&gt;" in markup["html"], "escaped")
    check("<script>alert(1)</script>" in json.dumps(markup["json"]), "the JSON keeps the name as it is")
    check("in `<script>alert(1)</script>`" in markup["markdown"], "the Markdown shows the name in a code span")
    check("`` `code` **bold** [link](http://example.invalid) ``" in markup["markdown"], "backticks cannot end the span")
    # stacks="all": the Markdown leads with the user's frame and folds the C++ ones, as the CLI does.
    cpp = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot",
                                                 "arguments": [{"path": snapshot_path(ctx, "cpp_stacks_p4.pickle")}]})
    md = cpp["markdown"]
    check("**8.00 GiB** in 2 blocks\n   - `/home/user/llm/model.py:21` in `build_model`" in md, f"user frame leads: {md}")
    check("+ 8 C++ and 1 framework frames folded" in md and "torch::unwind" not in md, "C++ frames folded")
    check("(no stack recorded: allocated before the trace begins" in md, "the missing stack's cause")
    check("peak allocated **24.00 GiB** after entry 10 of 77" in md and "12.00 GiB allocated at the OOM" in md,
          "the peak and the OOM from the trace")
    check("At the peak:\n\n- **12.00 GiB** in 3 blocks\n   - `/home/user/llm/model.py:88` in `forward`" in md,
          "what was alive at the peak, by user frame")


@case
def execute_analyze_snapshot_refuses_hostile_and_missing_files(ctx: Ctx):
    s = ctx.started()
    hostile = snapshot_path(ctx, "hostile_reduce_in_snapshot_p2.pickle")
    err = s.call_error("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [{"path": hostile}]})
    eq(err["code"], INVALID_PARAMS, "a refused snapshot")
    check(err["message"].startswith(f"snapshot {hostile} refused: refused opcode GLOBAL (0x63) at byte "), err["message"])
    missing = "/nonexistent/oomlens-e2e/missing.pickle"
    err = s.call_error("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [{"path": missing}]})
    eq(err["code"], INVALID_PARAMS, "a missing snapshot")
    eq(err["message"], f"cannot read snapshot {missing}: No such file or directory", "the reason")
    for bad in ([], [{"path": "relative.pickle"}], [42], [{"uri": "file://host/x.pickle"}]):
        eq(s.call_error("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": bad})["code"],
           INVALID_PARAMS, f"arguments {bad}")
    expect_still_serving(s)


@case
def execute_compare_snapshots_matches_the_cli(ctx: Ctx):
    s = ctx.started()
    commands = s.messages[0]["result"]["capabilities"]["executeCommandProvider"]["commands"]
    check("oomlens.compareSnapshots" in commands, f"advertised: {commands}")
    a, b = snapshot_path(ctx, "compare_before_p4.pickle"), snapshot_path(ctx, "compare_after_p4.pickle")
    cli = lambda fmt: subprocess.run([ctx.binary, "snapshot", "--format", fmt, "--compare", a, b],  # noqa: E731
                                     capture_output=True, text=True, check=True).stdout
    result = s.call_ok("workspace/executeCommand", {"command": "oomlens.compareSnapshots",
                                                    "arguments": [{"path": a}, {"path": b}]})
    eq(result["json"], json.loads(cli("json")), "the JSON is the CLI's --compare --format json")
    eq(result["html"], cli("html"), "the HTML is the CLI's --compare --format html")
    for run in ("a", "b"):
        t = result["json"][run]["peak_timeline"]
        check(t is not None and 0 < len(t["curve"]["allocated_bytes"]) <= 240, f"run {run}: its curve")
        eq(max(t["curve"]["allocated_bytes"]), result["json"][run]["peak_allocated_bytes"], f"run {run}: the peak on it")
    md = result["markdown"]
    check(f"- A: `{a}`" in md and f"- B: `{b}`" in md, f"both runs named: {md[:300]}")
    check("| peak allocated | 42.01 GiB | 32.01 GiB | -10.00 GiB |" in md, f"the peaks side by side: {md}")
    check("| fragmentation |" in md and "| peak reserved |" in md, "reserved and fragmentation")
    check("#### Grew most (B − A)\n\n1. **+2.00 GiB**" in md, "the site that grew most")
    check("#### Shrank most (B − A)\n\n1. **-12.00 GiB**" in md and ":88` in `forward`" in md,
          "the site that shrank most, by its user frame")
    # Each run as a URI or a plain string, as analyzeSnapshot takes them.
    mixed = s.call_ok("workspace/executeCommand", {"command": "oomlens.compareSnapshots",
                                                   "arguments": ["file://" + a, b]})
    eq(mixed["json"]["grew"], result["json"]["grew"], "by URI and plain path")


@case
def execute_compare_snapshots_refuses_missing_files_and_wrong_arguments(ctx: Ctx):
    s = ctx.started()
    a, missing = snapshot_path(ctx, "compare_before_p4.pickle"), "/nonexistent/oomlens-e2e/missing.pickle"
    for args, name in (([{"path": a}, {"path": missing}], "B"), ([missing, a], "A")):
        err = s.call_error("workspace/executeCommand", {"command": "oomlens.compareSnapshots", "arguments": args})
        eq(err["code"], INVALID_PARAMS, f"a missing {name}")
        eq(err["message"], f"cannot read snapshot {missing}: No such file or directory", f"the missing {name} named")
    hostile = snapshot_path(ctx, "hostile_reduce_in_snapshot_p2.pickle")
    err = s.call_error("workspace/executeCommand", {"command": "oomlens.compareSnapshots", "arguments": [a, hostile]})
    check(err["message"].startswith(f"snapshot {hostile} refused: refused opcode GLOBAL"), err["message"])
    for bad in ([], [a], [a, a, a]):
        err = s.call_error("workspace/executeCommand", {"command": "oomlens.compareSnapshots", "arguments": bad})
        eq(err["code"], INVALID_PARAMS, f"arguments {bad}")
        check(f"expects two snapshots" in err["message"] and f"got {len(bad)} argument" in err["message"], err["message"])
    err = s.call_error("workspace/executeCommand", {"command": "oomlens.compareSnapshots",
                                                    "arguments": [a, {"path": "relative.pickle"}]})
    eq(err["message"], "oomlens.compareSnapshots needs an absolute path, got 'relative.pickle'", "a relative path")
    expect_still_serving(s)


@case
def execute_analyze_snapshot_on_a_folder_of_ranks(ctx: Ctx):
    import shutil
    import tempfile
    s = ctx.started()
    folder = snapshot_path(ctx, "job_ranks")
    cli = lambda fmt, path=folder: subprocess.run([ctx.binary, "snapshot", "--format", fmt, path],  # noqa: E731
                                                  capture_output=True, text=True)
    result = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [{"path": folder}]})
    eq(result["json"], json.loads(cli("json").stdout), "the JSON is the CLI's DIR --format json")
    eq(result["html"], cli("html").stdout, "the HTML is the CLI's DIR --format html")
    md = result["markdown"]
    check("4 ranks" in md and "| rank | file | peak allocated |" in md, f"the per-rank table: {md}")
    check(all(f"| {r} | `rank{r}.pickle` |" in md for r in range(4)), "a row per rank")
    check("Highest peak: **rank 2** (`rank2.pickle`)" in md and "Imbalance: **1." in md, "the highest rank, the imbalance")
    tmp = tempfile.mkdtemp(prefix="oomlens-e2e-")
    try:
        err = s.call_error("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [tmp]})
        eq(err["code"], INVALID_PARAMS, "a folder with no snapshot")
        check(err["message"].startswith(f"cannot read snapshot {tmp}: is a directory with no snapshot in it"), err["message"])
        shutil.copy(os.path.join(folder, "rank0.pickle"), os.path.join(tmp, "rank0.pickle"))
        shutil.copy(snapshot_path(ctx, "hostile_reduce_in_snapshot_p2.pickle"), os.path.join(tmp, "rank1.pickle"))
        err = s.call_error("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot", "arguments": [tmp]})
        check(err["message"].startswith(f"snapshot {os.path.join(tmp, 'rank1.pickle')} refused: "), err["message"])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    expect_still_serving(s)


@case
def cancel_a_large_analyze_snapshot(ctx: Ctx):
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="oomlens-e2e-")
    try:
        # ~16 MB: read in the background for a while (the cancel comes in the same write as the
        # request, so it is handled long before), and generated in seconds even on a busy machine.
        big = os.path.join(tmp, "big.pickle")
        subprocess.run([sys.executable, os.path.join(ctx.fixtures, "snapshots", "generate.py"), "--big", "16000000", big],
                       check=True, capture_output=True)
        s = ctx.started()
        rid, request = s.request_bytes("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot",
                                                                    "arguments": [{"path": big}]})
        s.send_raw(request + LspServer.notification_bytes("$/cancelRequest", {"id": rid}))
        eq(s.wait_response(rid).get("error", {}).get("code"), REQUEST_CANCELLED, "the cancelled analyzeSnapshot")
        small = s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot",
                                                       "arguments": [snapshot_path(ctx, "limit_p4.pickle")]})
        eq(small["json"]["oom"]["class"], "limit", "analyzeSnapshot after a cancel")
        # Two runs compared are cancelled the same way.
        cid, request = s.request_bytes("workspace/executeCommand", {"command": "oomlens.compareSnapshots",
                                                                    "arguments": [big, big]})
        s.send_raw(request + LspServer.notification_bytes("$/cancelRequest", {"id": cid}))
        eq(s.wait_response(cid).get("error", {}).get("code"), REQUEST_CANCELLED, "the cancelled compareSnapshots")
        s.settle(0.5)
        eq(len(s.responses[json.dumps(rid)]), 1, "the cancelled request answered exactly once")
        eq(len(s.responses[json.dumps(cid)]), 1, "the cancelled comparison answered exactly once")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@case
def snapshot_memory_shows_on_the_script_lines(ctx: Ctx):
    # The fixture's frames name "train_lines.py", relative to the folder the script ran in.
    folder = os.path.abspath(os.path.join(ctx.fixtures, "snapshots", "script_lines"))
    script = os.path.join(folder, "train_lines.py")
    uri = "file://" + script
    with open(script, encoding="utf-8") as f:
        text = f.read()
    lines = text.split("\n")
    caps = client_capabilities()
    caps["workspace"]["inlayHint"] = {"refreshSupport": True}
    s = ctx.server()
    init = s.call_ok("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": caps,
                                    "workspaceFolders": [{"uri": "file://" + folder, "name": "script_lines"}]})
    eq(init["capabilities"].get("inlayHintProvider"), True, "inlay hints advertised")
    s.notify("initialized", {})
    open_doc(s, uri, text, language="python")
    whole = {"start": {"line": 0, "character": 0}, "end": {"line": len(lines), "character": 0}}
    hints = lambda doc, rng=whole: s.call_ok("textDocument/inlayHint",  # noqa: E731
                                             {"textDocument": {"uri": doc}, "range": rng})
    eq(hints(uri), [], "no snapshot analysed yet: no hints")
    m = s.mark()
    s.call_ok("workspace/executeCommand", {"command": "oomlens.analyzeSnapshot",
                                           "arguments": [{"path": snapshot_path(ctx, "script_lines_p4.pickle")}]})
    s.wait_for(lambda: s.server_requests("workspace/inlayHint/refresh", m), what="workspace/inlayHint/refresh")
    got = hints(uri)
    eq({h["position"]["line"] + 1: h["label"] for h in got},
       {8: "+6.00 GiB at peak, 3 blocks", 13: "+256.00 MiB at peak, 1 block",
        15: "+12.00 GiB at peak, 6 blocks", 18: "+12.25 GiB at peak, 7 blocks"},
       "the lines whose calls allocated what was alive at the peak")
    for h in got:
        eq(h["position"]["character"], len(lines[h["position"]["line"]]), "a hint sits at its line's end")
        check(h["tooltip"]["kind"] == "markdown" and "alive at the peak" in h["tooltip"]["value"], "tooltip")
    eq([h["position"]["line"] for h in hints(uri, {"start": {"line": 6, "character": 0},
                                                   "end": {"line": 12, "character": 0}})], [7], "only the range's lines")
    hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 7, "character": 4}})
    value = hover["contents"]["value"]
    check("**6.00 GiB alive at the peak** in 3 blocks allocated through this line" in value, value)
    check("the peak of device 0's trace" in value and "12.25 GiB allocated, after entry 11 of 12" in value, value)
    check("- **6.00 GiB** in 3 blocks, allocated by:\n   - `/opt/conda/lib/python3.11/site-packages/torch/nn/"
          "modules/module.py:1747` in `_call_impl`\n   - `/opt/conda/lib/python3.11/site-packages/torch/nn/"
          "modules/linear.py:125` in `forward`" in value, f"the call path from the line down: {value}")
    value = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri},
                                             "position": {"line": 14, "character": 8}})["contents"]["value"]
    check("- **6.00 GiB** in 3 blocks, allocated here" in value and "`train_lines.py:8` in `step`" in value,
          f"a line with two shares: its own allocation and its call's: {value}")
    eq(s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 9, "character": 0}}),
       None, "a line that allocated nothing")
    # The same name outside the workspace folder is another file.
    elsewhere = "file:///elsewhere/train_lines.py"
    open_doc(s, elsewhere, text, language="python")
    eq(hints(elsewhere), [], "no hints on a file the frames do not name")
    expect_still_serving(s)


@case
def project_imports_name_the_other_file(ctx: Ctx):
    # The workspace folder is a project: CUDA started by an imported package,
    # and a helper of another file flushing the cache in the loop, are
    # reported with the other file as related information.
    folder = os.path.abspath(os.path.join(ctx.fixtures, "projects", "training_repo"))
    read = lambda name: open(os.path.join(folder, name), encoding="utf-8").read()  # noqa: E731
    uri = lambda name: "file://" + os.path.join(folder, name)  # noqa: E731
    s = ctx.server()
    s.call_ok("initialize", {"processId": os.getpid(), "rootUri": None, "capabilities": client_capabilities(),
                             "workspaceFolders": [{"uri": "file://" + folder, "name": "training_repo"}]})
    s.notify("initialized", {})
    open_doc(s, uri("train.py"), read("train.py"), language="python")
    diags = {d["code"]: d for d in pushed(s, uri("train.py"))}
    late = diags["OOM302"]
    check("gpu_setup/__init__.py at line 7" in late["message"], late["message"])
    eq([(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in late["relatedInformation"]],
       [(uri("gpu_setup/__init__.py"), 6)], "where the imported package starts CUDA")
    flush = diags["OOM301"]
    eq(flush["range"]["start"]["line"], 14, "reported at the helper's call in the loop")
    eq([(r["location"]["uri"], r["location"]["range"]["start"]["line"]) for r in flush["relatedInformation"]],
       [(uri("utils/memory.py"), 8)], "the flush in the helper's file")
    # An edit to a project file analyses again the open scripts that import
    # it, and only those.
    open_doc(s, uri("evaluate.py"), read("evaluate.py"), language="python")
    eq([d["code"] for d in pushed(s, uri("evaluate.py"))], ["OOM302"], "evaluate.py: modelzoo starts CUDA")
    memory = read("utils/memory.py")
    m = s.mark()
    open_doc(s, uri("utils/memory.py"), memory, language="python")
    pushed(s, uri("utils/memory.py"))
    # Opening it analyses train.py again too (its text now stands for the
    # file): wait for that before the edit, or its push could pass for the edit's.
    pushed(s, uri("train.py"), after=m)
    m = s.mark()
    change(s, uri("utils/memory.py"), 2, [{"text": memory.replace("    torch.cuda.empty_cache()\n", "")}])
    after = pushed(s, uri("train.py"), after=m)
    eq(sorted(d["code"] for d in after), ["OOM302"], "the helper no longer flushes: train.py re-analysed")
    pushed(s, uri("utils/memory.py"), after=m)
    # An edit to the script itself analyses it alone; its imports' facts are kept.
    m2 = s.mark()
    train = read("train.py")
    change(s, uri("train.py"), 2, [{"text": train.replace("import gpu_setup\n", "")}])
    eq([d["code"] for d in pushed(s, uri("train.py"), after=m2)], [], "no import starts CUDA before the setting now")
    # Analyses run one after another: had evaluate.py been scheduled, it would have been published by now.
    others = [n["params"]["uri"] for n in s.notifications("textDocument/publishDiagnostics", m)]
    eq(sorted(set(others)), sorted({uri("train.py"), uri("utils/memory.py")}),
       "evaluate.py imports no file edited: not analysed again")
    expect_still_serving(s)


def project_copy_server(ctx: Ctx, tmp: str, **caps):
    """A server whose workspace folder is a copy of the training_repo fixture
    project, which a test may change on disk; with the copy's path and URI makers."""
    import shutil
    folder = os.path.join(tmp, "training_repo")
    shutil.copytree(os.path.join(ctx.fixtures, "projects", "training_repo"), folder)
    path = lambda name: os.path.join(folder, name)  # noqa: E731
    uri = lambda name: "file://" + path(name)  # noqa: E731
    s = ctx.server()
    s.call_ok("initialize", {"processId": os.getpid(), "rootUri": None,
                             "capabilities": client_capabilities(watch_files=True, **caps),
                             "workspaceFolders": [{"uri": "file://" + folder, "name": "training_repo"}]})
    s.notify("initialized", {})
    return s, path, uri


def watched_files_registrations(s: LspServer) -> list:
    return [r for req in s.server_requests("client/registerCapability")
            for r in req["params"]["registrations"] if r["method"] == "workspace/didChangeWatchedFiles"]


@case
def watched_files_registered_only_when_the_client_can(ctx: Ctx):
    folder = os.path.abspath(os.path.join(ctx.fixtures, "projects", "training_repo"))
    folders = [{"uri": "file://" + folder, "name": "training_repo"}]
    s = ctx.server()
    s.call_ok("initialize", {"processId": os.getpid(), "rootUri": None, "workspaceFolders": folders,
                             "capabilities": client_capabilities(watch_files=True)})
    s.notify("initialized", {})
    s.wait_for(lambda: watched_files_registrations(s), what="client/registerCapability after initialized")
    (registration,) = watched_files_registrations(s)
    eq(registration["registerOptions"], {"watchers": [{"globPattern": "**/*.py", "kind": 7}]},
       "the Python files the project analysis reads, created, changed and deleted")
    expect_still_serving(s)
    other = ctx.server(name="no dynamic registration")
    other.call_ok("initialize", {"processId": os.getpid(), "rootUri": None, "workspaceFolders": folders,
                                 "capabilities": client_capabilities()})
    other.notify("initialized", {})
    expect_still_serving(other)
    other.settle()
    eq(other.server_requests("client/registerCapability"), [], "no registration for a client that cannot take one")


@case
def file_changed_on_disk_reanalyses_its_importers(ctx: Ctx):
    # A closed project file changed on disk (a checkout) counts once the
    # client's watcher reports it: only the open scripts that import it are
    # analysed again.
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        s, path, uri = project_copy_server(ctx, tmp)
        memory = open(path("utils/memory.py"), encoding="utf-8").read()
        without_flush = memory.replace("    torch.cuda.empty_cache()\n", "")
        check(without_flush != memory, "the fixture's helper flushes the cache")

        def write(name: str, text: str) -> None:
            with open(path(name), "w", encoding="utf-8") as f:
                f.write(text)

        def watched(name: str, kind: int) -> None:
            s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri(name), "type": kind}]})

        write("utils/memory.py", without_flush)
        open_doc(s, uri("train.py"), open(path("train.py"), encoding="utf-8").read(), language="python")
        eq([d["code"] for d in pushed(s, uri("train.py"))], ["OOM302"], "the helper does not flush yet")
        open_doc(s, uri("evaluate.py"), open(path("evaluate.py"), encoding="utf-8").read(), language="python")
        pushed(s, uri("evaluate.py"))

        m = s.mark()
        write("utils/memory.py", memory)
        watched("utils/memory.py", 2)
        after = {d["code"]: d for d in pushed(s, uri("train.py"), after=m)}
        eq(sorted(after), ["OOM301", "OOM302"], "the helper flushes now: train.py analysed again")
        eq([(r["location"]["uri"], r["location"]["range"]["start"]["line"])
            for r in after["OOM301"]["relatedInformation"]], [(uri("utils/memory.py"), 8)], "the flush on disk")

        m = s.mark()
        write("utils/memory.py", without_flush)
        watched("utils/memory.py", 2)
        eq([d["code"] for d in pushed(s, uri("train.py"), after=m)], ["OOM302"], "changed back: the flush is gone")
        s.settle()
        eq(sorted({n["params"]["uri"] for n in s.notifications("textDocument/publishDiagnostics", m)}),
           [uri("train.py")], "evaluate.py imports no file that changed: not analysed again")

        # An open document's own text wins over the disk.
        m = s.mark()
        open_doc(s, uri("utils/memory.py"), memory, language="python")
        pushed(s, uri("utils/memory.py"))
        eq(sorted(d["code"] for d in pushed(s, uri("train.py"), after=m)), ["OOM301", "OOM302"],
           "opened with the flush")
        m = s.mark()
        write("utils/memory.py", without_flush)
        watched("utils/memory.py", 2)
        s.settle()
        eq(s.notifications("textDocument/publishDiagnostics", m), [], "the open text stands for the file")
        m = s.mark()
        s.notify("textDocument/didClose", {"textDocument": {"uri": uri("utils/memory.py")}})
        eq([d["code"] for d in pushed(s, uri("train.py"), after=m)], ["OOM302"], "closed: the disk counts again")

        # A deleted module: the helper's flush goes with it; created again, it is back.
        m = s.mark()
        write("utils/memory.py", memory)
        watched("utils/memory.py", 2)
        eq(sorted(d["code"] for d in pushed(s, uri("train.py"), after=m)), ["OOM301", "OOM302"], "restored")
        m = s.mark()
        os.remove(path("utils/memory.py"))
        watched("utils/memory.py", 3)
        eq([d["code"] for d in pushed(s, uri("train.py"), after=m)], ["OOM302"], "deleted: no flush")
        m = s.mark()
        write("utils/memory.py", memory)
        watched("utils/memory.py", 1)
        eq(sorted(d["code"] for d in pushed(s, uri("train.py"), after=m)), ["OOM301", "OOM302"], "created again")
        # A malformed event is ignored, and the server reads on.
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri("train.py"), "type": 9}]})
        expect_still_serving(s)


@case
def file_changed_on_disk_refreshes_pull_clients(ctx: Ctx):
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        s, path, uri = project_copy_server(ctx, tmp, pull=True, refresh=True)
        open_doc(s, uri("train.py"), open(path("train.py"), encoding="utf-8").read(), language="python")
        eq(sorted(d["code"] for d in pull(s, uri("train.py"))["items"]), ["OOM301", "OOM302"], "as written")
        m = s.mark()
        with open(path("utils/memory.py"), "w", encoding="utf-8") as f:
            f.write("def free_memory():\n    pass\n")
        s.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri("utils/memory.py"), "type": 2}]})
        s.wait_for(lambda: s.server_requests("workspace/diagnostic/refresh", m), what="workspace/diagnostic/refresh")
        eq([d["code"] for d in pull(s, uri("train.py"))["items"]], ["OOM302"], "pulled again: no flush")
        eq(s.notifications("textDocument/publishDiagnostics", m), [], "a pull client gets no push")


# ---------------------------------------------------------------------------
# training scripts (Python documents): source rules, quick fixes with
# versioned edits, source actions, oomlens.fixScript

def apply_text_edits(text: str, edits: list, utf16: bool = True) -> str:
    """Applies LSP TextEdits (positions in UTF-16 or UTF-8 units) as a client does."""
    lines = text.split("\n")
    starts, at = [], 0
    for line in lines:
        starts.append(at)
        at += len(line) + 1

    def offset(pos: dict) -> int:
        line = lines[pos["line"]] if pos["line"] < len(lines) else ""
        units, chars = 0, 0
        for ch in line:
            if units >= pos["character"]:
                break
            units += (2 if ord(ch) > 0xFFFF else 1) if utf16 else len(ch.encode("utf-8"))
            chars += 1
        return starts[pos["line"]] + chars if pos["line"] < len(lines) else len(text)

    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]),
                    reverse=True):
        text = text[:offset(e["range"]["start"])] + e["newText"] + text[offset(e["range"]["end"]):]
    return text


def script(ctx: Ctx, name: str) -> tuple[str, str]:
    path = os.path.abspath(os.path.join(ctx.fixtures, "scripts", name))
    with open(path, encoding="utf-8", newline="") as f:
        return "file://" + path, f.read()


def only_document_change(edit: dict, uri: str, version) -> list:
    changes = edit["documentChanges"]
    eq(len(changes), 1, "one document changed")
    eq(changes[0]["textDocument"], {"uri": uri, "version": version}, "the edit names the document version")
    return changes[0]["edits"]


@case
def python_quick_fix_applies_to_the_exact_version(ctx: Ctx):
    s = ctx.started(pull=True)
    uri, text = script(ctx, "empty_cache_in_loop.py")
    open_doc(s, uri, text, version=3, language="python")
    items = pull(s, uri)["items"]
    eq([d["code"] for d in items], ["OOM301"], "script diagnostics")
    d = items[0]
    eq(d["range"]["start"], {"line": 10, "character": 4}, "diagnostic start (0-based)")
    eq(d["data"]["version"], 3, "diagnostic data names the version")
    actions = code_actions(s, uri, d)
    fixes = [a for a in actions if a["kind"] == "quickfix"]
    eq(len(fixes), 1, "one quick fix")
    check(fixes[0].get("isPreferred") is True, "a safe fix is preferred")
    edits = only_document_change(fixes[0]["edit"], uri, 3)
    with open(os.path.join(ctx.fixtures, "scripts", "empty_cache_in_loop.fixed.py"), encoding="utf-8", newline="") as f:
        eq(apply_text_edits(text, edits), f.read(), "the fixed document")
    # The client moved on: the actions offered for the old diagnostic's range
    # are those of the new version, with edits naming it (never version 3).
    change(s, uri, 4, [{"text": text + "# the end\n"}])
    again = [a for a in code_actions(s, uri, d) if a["kind"] == "quickfix"]
    eq(len(again), 1, "the fix of the new version's diagnostic")
    eq(again[0]["edit"]["documentChanges"][0]["textDocument"]["version"], 4, "the edit names the new version")
    eq(again[0]["edit"]["documentChanges"][0]["edits"][0]["range"]["start"]["line"], 10, "and its positions")


@case
def hover_on_a_script_diagnostic(ctx: Ctx):
    # A script's diagnosis hovers in the same format as a log's: the rule as
    # the title, the message, the explanation, the fixes with their safety,
    # the link to the rule's page.
    s = ctx.started(pull=True)
    uri, text = script(ctx, "empty_cache_in_loop.py")
    open_doc(s, uri, text, language="python")
    d = pull(s, uri)["items"][0]
    hover = s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 10, "character": 12}})
    eq(hover["contents"]["kind"], "markdown", "hover kind")
    value = hover["contents"]["value"]
    check(value.startswith("### OOM301 empty-cache-in-loop\n\n"), f"the rule as the title: {value[:80]}")
    check(f"\n\n{d['message']}\n\n" in value, f"the message on its own line: {value}")
    check("**Fixes**\n\n- `safe` " in value, f"the fixes with their safety: {value}")
    check("[OOM301 documentation](" in value, f"the link to the rule's page: {value}")
    eq(s.call_ok("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}}),
       None, "hover off the diagnostic")


def notebook_open(s: LspServer, uri: str, cells: list) -> list:
    """notebookDocument/didOpen of (kind, text) cells; returns the cells' URIs."""
    uris = [f"vscode-notebook-cell:{uri[len('file://'):]}#C{i}" for i in range(len(cells))]
    s.notify("notebookDocument/didOpen", {
        "notebookDocument": {"uri": uri, "notebookType": "jupyter-notebook", "version": 1,
                             "cells": [{"kind": kind, "document": u} for (kind, _), u in zip(cells, uris)]},
        "cellTextDocuments": [{"uri": u, "languageId": "python" if kind == 2 else "markdown", "version": 1,
                               "text": text} for (kind, text), u in zip(cells, uris)]})
    return uris


NOTEBOOK_CELLS = [
    (2, "%matplotlib inline\nimport torch\nmodel = torch.nn.Linear(4, 4).cuda()\n"),
    (1, "# Training\nThe loop below.\n"),
    (2, "for step in range(10):\n    loss = model(torch.randn(2, 4, device='cuda')).sum()\n"
        "    loss.backward()\n    torch.cuda.empty_cache()\n"),
]


@case
def notebook_cells_get_diagnostics_and_fixes_of_their_own_lines(ctx: Ctx):
    s = ctx.server()
    caps = s.initialize(client_capabilities(pull=True, resolve_properties=["edit"]))["capabilities"]
    eq(caps["notebookDocumentSync"]["notebookSelector"][0]["notebook"], {"notebookType": "jupyter-notebook"},
       "notebook sync advertised")
    nb = "file:///w/train.ipynb"
    cells = notebook_open(s, nb, NOTEBOOK_CELLS)
    eq(pull(s, cells[0])["items"], [], "the first cell: a magic and imports, nothing to say")
    eq(pull(s, cells[1])["items"], [], "a markdown cell")
    items = pull(s, cells[2])["items"]
    eq([d["code"] for d in items], ["OOM301"], "the loop's cell")
    eq(items[0]["range"]["start"], {"line": 3, "character": 4}, "on the cell's own line")
    check("the `for` loop at cell 3, line 1" in items[0]["message"],
          f"the message tells the loop's line as the notebook shows it: {items[0]['message']!r}")
    fixes = [a for a in code_actions(s, cells[2], items[0]) if a["kind"] == "quickfix"]
    eq(len(fixes), 1, "one quick fix")
    edits = only_document_change(fixes[0]["edit"], cells[2], 1)
    fixed = apply_text_edits(NOTEBOOK_CELLS[2][1], edits)
    check("empty_cache" not in fixed and "loss.backward()" in fixed, f"the cell fixed: {fixed!r}")
    # The user applies it: the cell's text changes, the notebook is analysed again.
    s.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cells[2], "version": 2},
                                              "changes": [{"text": fixed}]}]}}})
    eq(pull(s, cells[2])["items"], [], "fixed")
    # A new first cell moves the others down; their diagnostics stay on their own lines.
    new = nb[len("file://"):]
    new_cell = f"vscode-notebook-cell:{new}#C9"
    s.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb, "version": 3},
        "change": {"cells": {"structure": {
            "array": {"start": 0, "deleteCount": 0, "cells": [{"kind": 2, "document": new_cell}]},
            "didOpen": [{"uri": new_cell, "languageId": "python", "version": 1,
                         "text": "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:Yes'\n"}]}}}})
    bad = pull(s, new_cell)["items"]
    eq([(d["code"], d["range"]["start"]["line"]) for d in bad], [("OOM303", 1)], "a bad setting in the new cell")
    eq(pull(s, cells[2])["items"], [], "the loop's cell still clean")
    s.notify("notebookDocument/didClose", {"notebookDocument": {"uri": nb},
                                            "cellTextDocuments": [{"uri": u} for u in [new_cell] + cells]})
    eq(pull(s, cells[2])["items"], [], "a closed notebook's cells: nothing")
    eq(s.answered_once_problems(), [], "every request answered once")


@case
def notebook_cells_pushed_per_cell(ctx: Ctx):
    s = ctx.started(pull=False)
    nb = "file:///w/push.ipynb"
    m = s.mark()
    cells = notebook_open(s, nb, NOTEBOOK_CELLS)
    eq([d["code"] for d in pushed(s, cells[2], m)], ["OOM301"], "published on the loop's cell")
    eq(pushed(s, cells[0], m), [], "the other code cell gets an empty list")
    m = s.mark()
    s.notify("notebookDocument/didClose", {"notebookDocument": {"uri": nb},
                                            "cellTextDocuments": [{"uri": u} for u in cells]})
    eq(pushed(s, cells[2], m), [], "cleared when the notebook closes")


@case
def notebook_cells_pushed_to_a_pulling_client_until_it_pulls_a_cell(ctx: Ctx):
    # VS Code's language client pulls diagnostics for files but never for a
    # notebook's cells: a cell must get them pushed, or it shows none.
    s = ctx.started(pull=True)
    nb = "file:///w/pulling.ipynb"
    m = s.mark()
    cells = notebook_open(s, nb, NOTEBOOK_CELLS)
    eq([d["code"] for d in pushed(s, cells[2], m)], ["OOM301"], "pushed to the loop's cell though the client pulls")
    # A plain file of the same client is still only pulled.
    m = s.mark()
    uri, text = "file:///w/loop.py", NOTEBOOK_CELLS[2][1].replace("for step", "import torch\nfor step")
    s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
    eq([d["code"] for d in pull(s, uri)["items"]], ["OOM301"], "the file's diagnostics, pulled")
    eq([n for n in s.notifications("textDocument/publishDiagnostics", m) if n["params"]["uri"] == uri], [],
       "nothing pushed for the file")
    # Once the client pulls a cell, the pushed lists are cleared: no cell shows its diagnostics twice.
    m = s.mark()
    eq([d["code"] for d in pull(s, cells[2])["items"]], ["OOM301"], "the cell pulled")
    eq(pushed(s, cells[2], m), [], "its pushed diagnostics cleared")
    m = s.mark()
    s.notify("notebookDocument/didChange", {
        "notebookDocument": {"uri": nb, "version": 2},
        "change": {"cells": {"textContent": [{"document": {"uri": cells[2], "version": 2},
                                              "changes": [{"text": NOTEBOOK_CELLS[2][1] + "\n"}]}]}}})
    eq([d["code"] for d in pull(s, cells[2])["items"]], ["OOM301"], "pulled after a change")
    eq([n["params"]["uri"] for n in s.notifications("textDocument/publishDiagnostics", m)], [],
       "and no longer pushed")
    eq(s.answered_once_problems(), [], "every request answered once")


@case
def python_source_actions_and_resolve(ctx: Ctx):
    s = ctx.started(resolve_properties=["edit"])
    uri = "file:///work/train.py"
    text = ('"""Train a model."""\nimport torch\n\nmodel = torch.nn.Linear(4, 4).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n'
            'for step in range(10):\n    loss = model(torch.randn(2, 4, device="cuda")).sum()\n    loss.backward()\n    opt.step()\n')
    open_doc(s, uri, text, version=1, language="python")
    params = {"textDocument": {"uri": uri}, "range": rng(0, 0, 0, 0), "context": {"diagnostics": []}}
    eq(s.call_ok("textDocument/codeAction", params), [], "no document-wide actions unless asked by kind")
    params["context"]["only"] = ["source.oomlens.setAllocatorConf"]
    actions = s.call_ok("textDocument/codeAction", params)
    eq(len(actions), 1, "setAllocatorConf offered")
    check("edit" not in actions[0], "the edit is left for resolve")
    resolved = s.call_ok("codeAction/resolve", actions[0])
    after = apply_text_edits(text, only_document_change(resolved["edit"], uri, 1))
    check(after.startswith('"""Train a model."""\nimport os\nos.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", '
                           '"expandable_segments:True")\nimport torch\n'), f"set before import torch: {after[:160]!r}")
    compile(after, "train.py", "exec")
    change(s, uri, 2, [{"text": after}])
    eq(s.call_ok("textDocument/codeAction", params), [], "applied once: not offered again")
    params["context"]["only"] = ["source.oomlens.recordSnapshot"]
    actions = s.call_ok("textDocument/codeAction", params)
    eq(len(actions), 1, "recordSnapshot offered")
    resolved = s.call_ok("codeAction/resolve", actions[0])
    recorded = apply_text_edits(after, only_document_change(resolved["edit"], uri, 2))
    check("_record_memory_history" in recorded and "oomlens snapshot" in recorded, "records and says how to read it")
    compile(recorded, "train.py", "exec")
    # A resolve for an older version is refused (ContentModified), never a wrong edit.
    change(s, uri, 3, [{"text": recorded}])
    eq(s.call_error("codeAction/resolve", actions[0])["code"], -32801, "resolve after a change")


@case
def python_fix_script_command(ctx: Ctx):
    import tempfile
    s = ctx.started()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train é.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write("import torch\nfor x in range(3):\n    torch.cuda.empty_cache()\n")
        uri = "file://" + path.replace(" ", "%20").replace("é", "%C3%A9")
        # Not open: read from disk, the edit names no version.
        out = s.call_ok("workspace/executeCommand", {"command": "oomlens.fixScript", "arguments": [
            {"uri": uri, "fix": {"kind": "empty_cache"}}]})
        edits = only_document_change(out["edit"], uri, None)
        eq(apply_text_edits(open(path, encoding="utf-8").read(), edits), "import torch\nfor x in range(3):\n    pass\n",
           "empty_cache removed, body kept valid")
        out = s.call_ok("workspace/executeCommand", {"command": "oomlens.fixScript", "arguments": [
            {"uri": uri, "fix": {"kind": "env", "name": "PYTORCH_CUDA_ALLOC_CONF", "value": "garbage_collection_threshold:0.6"}}]})
        check("garbage_collection_threshold:0.6" in out["edit"]["documentChanges"][0]["edits"][0]["newText"], "the value asked for")
        # Open: the edit names the client's version.
        open_doc(s, uri, "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512'\nimport torch\n",
                 version=9, language="python")
        out = s.call_ok("workspace/executeCommand", {"command": "oomlens.fixScript", "arguments": [
            {"uri": uri, "fix": {"kind": "env", "value": "expandable_segments:True"}}]})
        edits = only_document_change(out["edit"], uri, 9)
        eq([e["newText"] for e in edits], ["'max_split_size_mb:512,expandable_segments:True'"], "merged into the value")
        out = s.call_ok("workspace/executeCommand", {"command": "oomlens.fixScript", "arguments": [
            {"uri": uri, "fix": {"kind": "env", "value": "max_split_size_mb:512"}}]})
        eq(out["edit"], None, "already set: nothing to do")
        check(out["message"], "and says why")
        for bad in ([], [{"uri": uri}], [{"uri": uri, "fix": {"kind": "frobnicate"}}],
                    [{"uri": "file:///nonexistent/x.py", "fix": {"kind": "fixAll"}}]):
            eq(s.call_error("workspace/executeCommand", {"command": "oomlens.fixScript", "arguments": bad})["code"],
               INVALID_PARAMS, f"arguments {bad}")


@case
def python_positions_utf16_and_utf8_with_incremental_edits(ctx: Ctx):
    text = 'import torch\nnoms = ["é", "😀"]\nfor n in noms: print("😀"); torch.cuda.empty_cache()\n'
    for utf8 in (False, True):
        s = ctx.started(pull=True, utf8=utf8)
        uri = "file:///w/utf.py"
        open_doc(s, uri, text, language="python")
        d = pull(s, uri)["items"][0]
        eq(d["code"], "OOM301", "found through the non-ASCII line")
        col = len('for n in noms: print("😀"); '.encode("utf-8")) if utf8 else len('for n in noms: print("😀"); '.encode("utf-16-le")) // 2
        eq(d["range"]["start"], {"line": 2, "character": col}, f"start in {'UTF-8' if utf8 else 'UTF-16'}")
        fix = [a for a in code_actions(s, uri, d) if a["kind"] == "quickfix"][0]
        after = apply_text_edits(text, only_document_change(fix["edit"], uri, 1), utf16=not utf8)
        eq(after, 'import torch\nnoms = ["é", "😀"]\nfor n in noms: print("😀")\n', "the `; call` removed exactly")
        # An incremental edit (re-parsed incrementally) that breaks the syntax: no fixes, one E999.
        change(s, uri, 2, [{"range": rng(3, 0, 3, 0), "text": "def broken(:\n"}])
        items = pull(s, uri)["items"]
        eq(sorted(i["code"] for i in items), ["E999", "OOM301"], "a syntax error is reported, the rule still runs")
        rule = [i for i in items if i["code"] == "OOM301"][0]
        eq([a for a in code_actions(s, uri, rule) if a["kind"] == "quickfix"], [], "no edits while it does not parse")
        change(s, uri, 3, [{"range": rng(3, 0, 4, 0), "text": ""}])
        eq([i["code"] for i in pull(s, uri)["items"]], ["OOM301"], "fixed again")


@case
def config_files_get_allocator_checks_and_the_set_action(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///w/run.sh"
    text = "#!/bin/bash\nexport PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true\ntorchrun --nproc_per_node=8 train.py\n"
    open_doc(s, uri, text, language="shellscript")
    items = pull(s, uri)["items"]
    eq([d["code"] for d in items], ["OOM303"], "shell script diagnostics")
    eq(items[0]["range"]["start"]["line"], 1, "on the export line")
    params = {"textDocument": {"uri": uri}, "range": rng(0, 0, 0, 0),
              "context": {"diagnostics": [], "only": ["source.oomlens.setAllocatorConf"]}}
    actions = s.call_ok("textDocument/codeAction", params)
    eq(len(actions), 1, "set allocator config offered for a launch script")
    after = apply_text_edits(text, only_document_change(actions[0]["edit"], uri, 1))
    check("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in after, f"merged: {after!r}")
    launch = "file:///w/.vscode/launch.json"
    open_doc(s, launch, '{\n  // debug\n  "configurations": [{"type": "debugpy", "program": "train.py",\n'
             '    "env": {"PYTORCH_CUDA_ALLOC_CONF": "max_split_size_mb:10"}}]\n}\n', language="jsonc")
    eq([d["code"] for d in pull(s, launch)["items"]], ["OOM303"], "launch.json diagnostics")
    open_doc(s, "file:///w/notes.json", '{"PYTORCH_CUDA_ALLOC_CONF": "x"}', language="json")
    eq(pull(s, "file:///w/notes.json")["items"], [], "other JSON files are not checked")


@case
def container_and_cluster_files_get_allocator_checks(ctx: Ctx):
    s = ctx.started(pull=True)
    docker = "file:///w/Dockerfile"
    text = "FROM python:3.11\nENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb=512\nCMD [\"python\", \"train.py\"]\n"
    open_doc(s, docker, text, language="dockerfile")
    items = pull(s, docker)["items"]
    eq([d["code"] for d in items], ["OOM303"], "Dockerfile diagnostics")
    eq(items[0]["range"]["start"], {"line": 1, "character": 28}, "on the value's key")
    params = {"textDocument": {"uri": docker}, "range": rng(0, 0, 0, 0),
              "context": {"diagnostics": [], "only": ["source.oomlens.setAllocatorConf"]}}
    actions = s.call_ok("textDocument/codeAction", params)
    eq(len(actions), 1, "set allocator config offered for a Dockerfile")
    after = apply_text_edits(text, only_document_change(actions[0]["edit"], docker, 1))
    eq(after.splitlines()[1], "ENV PYTORCH_CUDA_ALLOC_CONF=max_split_size_mb=512,expandable_segments:True",
       "merged into the ENV value")
    k8s = "file:///w/deploy/job.yaml"
    open_doc(s, k8s, "spec:\n  containers:\n    - name: t\n      env:\n        - name: PYTORCH_CUDA_ALLOC_CONF\n"
             "          value: expandable_segments:yes\n", language="yaml")
    eq([(d["code"], d["range"]["start"]["line"]) for d in pull(s, k8s)["items"]], [("OOM303", 5)], "YAML diagnostics")
    sbatch = "file:///w/job.sbatch"
    open_doc(s, sbatch, "#!/bin/bash\n#SBATCH --export=ALL,PYTORCH_CUDA_ALLOC_CONF=max_split_size:64\nsrun python t.py\n",
             language="shellscript")
    eq([(d["code"], d["range"]["start"]["line"]) for d in pull(s, sbatch)["items"]], [("OOM303", 1)],
       "#SBATCH --export diagnostics")


@case
def python_verify_action_runs_the_ab_comparison(ctx: Ctx):
    s = ctx.started(options={"allocatorOption": "garbage_collection_threshold:0.6"})
    uri = "file:///w/my%20train.py"
    open_doc(s, uri, "import torch\nprint(torch.__version__)\n", language="python")
    params = {"textDocument": {"uri": uri}, "range": rng(0, 0, 0, 0),
              "context": {"diagnostics": [], "only": ["source.oomlens.verify"]}}
    actions = s.call_ok("textDocument/codeAction", params)
    eq([a["command"]["command"] for a in actions], ["oomlens.runVerification"], "one run-in-terminal action")
    want = "oomlens verify --baseline --conf garbage_collection_threshold:0.6 -- python '/w/my train.py'"
    eq(actions[0]["command"]["arguments"], [want], "the A/B run of the script with the setting")
    # oomlens.verify: the same command, for the setting the client names or the proposed one.
    eq(s.call_ok("workspace/executeCommand", {"command": "oomlens.verify", "arguments": [{"uri": uri}]}),
       {"command": want}, "oomlens.verify on the script")
    got = s.call_ok("workspace/executeCommand",
                    {"command": "oomlens.verify", "arguments": [{"uri": uri, "conf": "expandable_segments:True"}]})
    eq(got["command"], "oomlens verify --baseline --conf expandable_segments:True -- python '/w/my train.py'",
       "oomlens.verify with a setting")
    err = s.call("workspace/executeCommand", {"command": "oomlens.verify", "arguments": [{"uri": "file:///w/closed.py"}]})
    eq(err.get("error", {}).get("code"), -32602, "a document that is not open is named as invalid")
    check("not open" in err["error"]["message"], err["error"]["message"])


@case
def python_too_large_for_the_editor_gets_one_note(ctx: Ctx):
    s = ctx.started(pull=True)
    uri = "file:///w/generated.py"
    open_doc(s, uri, "x = 1\n" * (3 * 1024 * 1024), language="python")  # 18 MiB
    items = pull(s, uri)["items"]
    eq(len(items), 1, "one note")
    check("oomlens lint" in items[0]["message"] and items[0]["severity"] == 3, f"the note: {items[0]}")
    params = {"textDocument": {"uri": uri}, "range": rng(0, 0, 0, 0),
              "context": {"diagnostics": [], "only": ["source.oomlens.setAllocatorConf"]}}
    eq(s.call_ok("textDocument/codeAction", params), [], "no actions on a file that was not analysed")


@case
def log_quick_fixes_edit_the_script_the_traceback_names(ctx: Ctx):
    import tempfile
    _, log = ctx.log("pytorch26_fragmentation.log")
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "seg3d"))
        script_path = os.path.join(tmp, "seg3d", "train.py")
        script_text = '"""Segmentation."""\nimport torch\n\n\ndef main():\n    model = torch.nn.Linear(4, 4).cuda()\n' \
                      '    opt = torch.optim.SGD(model.parameters(), lr=0.1)\n    for step in range(10):\n' \
                      '        loss = model(torch.randn(2, 4, device="cuda")).sum()\n        loss.backward()\n' \
                      '        opt.step()\n\n\nmain()\n'
        with open(script_path, "w", encoding="utf-8") as f:
            f.write(script_text)
        script_uri = "file://" + script_path
        s = ctx.started(pull=True)
        uri = "file:///w/run.log"
        open_doc(s, uri, log.replace("/home/kai/seg3d", os.path.join(tmp, "seg3d")))
        d = pull(s, uri)["items"][0]
        eq(d["code"], "OOM101", "the log's diagnostic")

        def script_edits():
            return {a["title"]: a["edit"] for a in code_actions(s, uri, d) if "edit" in a}

        edits = script_edits()
        set_title = "train.py: Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before `import torch`"
        check(set_title in edits, f"a quick fix that edits the script: {list(edits)}")
        check(any(t.startswith("train.py: Record a memory snapshot") for t in edits), f"and one recording a snapshot: {list(edits)}")
        fixed = apply_text_edits(script_text, only_document_change(edits[set_title], script_uri, None))
        check(fixed.startswith('"""Segmentation."""\nimport os\nos.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF"'), fixed[:120])
        # The file changed on disk (the fix applied by another tool): no stale edit from a kept analysis.
        with open(script_path, "w", encoding="utf-8") as f:
            f.write(fixed)
        check(not any("expandable_segments" in t for t in script_edits()), f"after the file changed: {list(script_edits())}")
        with open(script_path, "w", encoding="utf-8") as f:
            f.write(script_text)
        # The script open in the client: edits are made on its text and name its version.
        open_doc(s, script_uri, "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'max_split_size_mb:512'\n" + script_text,
                 version=5, language="python")
        edits = script_edits()
        merged = [t for t in edits if t.startswith("train.py: Add expandable_segments:True to PYTORCH_CUDA_ALLOC_CONF")]
        eq(len(merged), 1, f"merged into the value the open script sets: {list(edits)}")
        eq([e["newText"] for e in only_document_change(edits[merged[0]], script_uri, 5)],
           ["'max_split_size_mb:512,expandable_segments:True'"], "the merge")
        # Already set: no such action.
        change(s, script_uri, 6, [{"text": "import os\nos.environ['PYTORCH_CUDA_ALLOC_CONF'] = 'expandable_segments:True'\n" + script_text}])
        titles = list(script_edits())
        check(not any("expandable_segments" in t for t in titles), f"nothing to set once it is set: {titles}")
        # The other allocator fix of the diagnosis (unsafe) still merges into the value.
        check(any(t.startswith("train.py: Add max_split_size_mb:512 to PYTORCH_CUDA_ALLOC_CONF") for t in titles), titles)
    # A log from another machine (the script is not here): command actions only.
    s2 = ctx.started(pull=True)
    open_doc(s2, uri, log)
    d2 = pull(s2, uri)["items"][0]
    eq([a for a in code_actions(s2, uri, d2) if "edit" in a], [], "no script edits for a file that is not here")


# Cases kept in their own files: they register with `case` and use the helpers above.
import job_cases  # noqa: E402,F401

if __name__ == "__main__":
    sys.exit(main(sys.argv))
