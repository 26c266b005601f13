#!/usr/bin/env python3
"""Endurance: one `oomlens lsp` process, many thousands of mixed requests.

    endurance.py BINARY FIXTURES_DIR [--requests N] [--seed S] [--rss-bound-mib M]

The mix (fixed seed, so every run sends the same messages): opens and closes
of logs and scripts, incremental edits, hovers, code actions, codeAction/resolve,
pulls, $/cancelRequest and workspace/executeCommand. Requests go out in
pipelined batches; after each batch the test waits for every answer.

Checked:
  - every request is answered exactly once (cancelled ones too);
  - no answer names a document version older than the one the client had
    sent before the request (pulls, code actions, resolved edits);
  - pull mode: the server pushes nothing;
  - the server's peak resident memory (VmHWM) stays under --rss-bound-mib,
    and its resident memory (VmRSS) after the run has not grown by more than
    a quarter of the bound since the warm-up: a leak per request would show.
Prints the figures. Standard library only.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lsp_client import LspServer, client_capabilities  # noqa: E402

BATCH = 100          # requests per pipelined batch
OPEN_DOCS_MAX = 8    # documents open at once; the rest are closed and reopened later
LINES_MAX = 400      # a document that grows past this is shrunk again by deletions
BATCH_TIMEOUT_S = 120  # a hang guard only: a batch normally takes well under a second
LINE_END = re.compile(r"\r\n|\r|\n")

# Lines an edit may insert: plain progress, an allocator OOM (a diagnosis appears),
# and a script line that a source rule reads.
OOM_LINE = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
            "capacity of 79.15 GiB of which 1.20 GiB is free. Of the allocated memory 60.10 GiB is allocated "
            "by PyTorch, and 15.30 GiB is reserved by PyTorch but unallocated.\n")
INSERTS = {
    "log": ["step 12 | loss 2.31 | lr 1e-4\n", OOM_LINE, "100%|#####| 50/50 [00:01<00:00]\r", "é 训练 🔥 done\n"],
    "python": ["torch.cuda.empty_cache()\n", "x = 1  # ö 🔥\n", "import torch\n", "\n"],
}


def status_kib(pid: int, key: str) -> int:
    with open(f"/proc/{pid}/status", encoding="ascii") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} missing from /proc/{pid}/status")


def versions_in(value, skip_data: bool = False) -> list[int]:
    """Every integer under a "version" key in a result (documentChanges' and
    diagnostics' data). skip_data leaves out an action's own "data", which
    resolve must return unchanged."""
    found: list[int] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == "version" and isinstance(v, int):
                found.append(v)
            elif not (skip_data and k == "data"):
                found += versions_in(v)
    elif isinstance(value, list):
        for v in value:
            found += versions_in(v, skip_data)
    return found


class Doc:
    def __init__(self, uri: str, language: str, text: str):
        self.uri, self.language, self.text = uri, language, text
        self.version = 0
        self.open = False
        self.diagnostics: list = []  # from the last pull answered
        self.actions: list = []      # from the last code action answered

    def lsp_line_count(self) -> int:
        return len(LINE_END.findall(self.text))

    def line_start(self, line: int) -> int:
        """Offset of the LSP line's start (line <= line count)."""
        pos = 0
        for _ in range(line):
            pos = LINE_END.search(self.text, pos).end()
        return pos


class Endurance:
    def __init__(self, binary: str, fixtures: str, seed: int):
        self.rnd = random.Random(seed)
        self.server = LspServer(binary, name="endurance")
        self.docs = self._documents(fixtures)
        # id -> (method, doc or None, the doc's version when the request was sent)
        self.pending: dict[int, tuple] = {}
        self.sent_requests = 0
        self.counts: dict[str, int] = {}
        self.errors: dict[int, int] = {}
        self.problems: list[str] = []
        self.versions_checked = 0  # versions named in answers, each compared with the client's

    def _documents(self, fixtures: str) -> list[Doc]:
        logs = sorted(os.listdir(os.path.join(fixtures, "logs")))
        logs = [n for n in logs if n.endswith(".log")]
        scripts = sorted(n for n in os.listdir(os.path.join(fixtures, "scripts"))
                         if n.endswith(".py") and not n.endswith("fixed.py"))
        docs = []
        for folder, names, language in (("logs", logs, "log"), ("scripts", scripts, "python")):
            for name in names:
                path = os.path.abspath(os.path.join(fixtures, folder, name))
                if os.path.getsize(path) > 64 * 1024:
                    continue  # endurance is about many requests, not large texts (other tests have those)
                with open(path, encoding="utf-8", errors="replace", newline="") as f:
                    docs.append(Doc("file://" + path, language, f.read()))
        self.rnd.shuffle(docs)
        return docs[:40]

    # ---- one message of the mix ----------------------------------------
    def _request(self, method: str, params, doc: Doc | None) -> bytes:
        rid, data = self.server.request_bytes(method, params)
        self.pending[rid] = (method, doc, doc.version if doc else None)
        self.sent_requests += 1
        self.counts[method] = self.counts.get(method, 0) + 1
        return data

    def _notify(self, method: str, params) -> bytes:
        self.counts[method] = self.counts.get(method, 0) + 1
        return LspServer.notification_bytes(method, params)

    def _open_or_close(self) -> bytes:
        open_docs = [d for d in self.docs if d.open]
        if len(open_docs) >= OPEN_DOCS_MAX or (open_docs and self.rnd.random() < 0.3):
            d = self.rnd.choice(open_docs)
            d.open = False
            return self._notify("textDocument/didClose", {"textDocument": {"uri": d.uri}})
        d = self.rnd.choice([d for d in self.docs if not d.open])
        d.open, d.diagnostics, d.actions = True, [], []
        d.version += 1  # versions only grow, across reopens too: "stale" stays well defined
        return self._notify("textDocument/didOpen", {"textDocument": {
            "uri": d.uri, "languageId": d.language, "version": d.version, "text": d.text}})

    def _edit(self, d: Doc) -> bytes:
        lines = d.lsp_line_count()
        if lines > LINES_MAX or (lines > 1 and self.rnd.random() < 0.4):
            k = self.rnd.randrange(lines)  # delete line k with its line end
            start, end = d.line_start(k), d.line_start(k + 1)
            d.text = d.text[:start] + d.text[end:]
            change = {"range": {"start": {"line": k, "character": 0}, "end": {"line": k + 1, "character": 0}},
                      "text": ""}
        else:
            k = self.rnd.randrange(lines + 1)
            new = self.rnd.choice(INSERTS[d.language])
            start = d.line_start(k)
            if k == lines and d.text and not LINE_END.search(d.text[-1:]):
                new = "\n" + new  # after a last line without an end
            d.text = d.text[:start] + new + d.text[start:]
            change = {"range": {"start": {"line": k, "character": 0}, "end": {"line": k, "character": 0}},
                      "text": new}
        d.version += 1
        return self._notify("textDocument/didChange", {"textDocument": {"uri": d.uri, "version": d.version},
                                                       "contentChanges": [change]})

    def _position(self, d: Doc) -> dict:
        return {"line": self.rnd.randrange(d.lsp_line_count() + 1), "character": self.rnd.randrange(6)}

    def _next(self) -> bytes:
        """One message, chosen by weight; most are requests."""
        open_docs = [d for d in self.docs if d.open]
        r = self.rnd.random()
        if not open_docs or r < 0.06:
            return self._open_or_close()
        d = self.rnd.choice(open_docs)
        doc_id = {"uri": d.uri}
        if r < 0.20:
            return self._edit(d)
        if r < 0.36:
            return self._request("textDocument/diagnostic", {"textDocument": doc_id}, d)
        if r < 0.52:
            return self._request("textDocument/hover", {"textDocument": doc_id, "position": self._position(d)}, d)
        if r < 0.70:
            diags = d.diagnostics[:1] if d.diagnostics and self.rnd.random() < 0.7 else []
            where = diags[0]["range"] if diags else {"start": self._position(d), "end": self._position(d)}
            context: dict = {"diagnostics": diags}
            if self.rnd.random() < 0.3:
                context["only"] = [self.rnd.choice(["source", "quickfix", "source.oomlens.setAllocatorConf"])]
            if where["end"]["line"] < where["start"]["line"]:
                where = {"start": where["end"], "end": where["start"]}
            return self._request("textDocument/codeAction", {"textDocument": doc_id, "range": where,
                                                             "context": context}, d)
        if r < 0.78 and d.actions:
            return self._request("codeAction/resolve", self.rnd.choice(d.actions), d)
        if r < 0.88 and self.pending:
            rid = self.rnd.choice(list(self.pending)[-20:])
            return self._notify("$/cancelRequest", {"id": rid})
        if self.rnd.random() < 0.5:
            return self._request("workspace/executeCommand", {"command": "oomlens.explain", "arguments": [
                self.rnd.choice(["OOM101", "OOM102", "OOM301", "OOM999"])]}, None)
        text = "".join(self.rnd.choice(INSERTS["log"]) for _ in range(self.rnd.randrange(1, 6)))
        return self._request("workspace/executeCommand", {"command": "oomlens.diagnoseText", "arguments": [text]},
                             None)

    # ---- answers ---------------------------------------------------------
    def _take_answers(self) -> None:
        for rid, (method, doc, version) in list(self.pending.items()):
            replies = self.server.responses.get(json.dumps(rid))
            if not replies:
                continue
            del self.pending[rid]
            reply = replies[0]
            if "error" in reply:
                key = f'{method} {reply["error"].get("code")}'
                self.errors[key] = self.errors.get(key, 0) + 1
                continue
            result = reply.get("result")
            if doc is None:
                continue
            seen = versions_in(result, skip_data=(method == "codeAction/resolve"))
            self.versions_checked += len(seen)
            stale = [v for v in seen if v < version]
            if stale:
                self.problems.append(f"{method} id {rid} sent at version {version} of {doc.uri} "
                                     f"answered with version(s) {sorted(set(stale))}")
            if method == "textDocument/diagnostic" and result.get("kind") == "full" and version == doc.version:
                doc.diagnostics = result.get("items", [])
            if method == "textDocument/codeAction" and version == doc.version and isinstance(result, list):
                doc.actions = [a for a in result if isinstance(a, dict) and "data" in a][:4]

    def _wait_batch(self) -> None:
        ids = [json.dumps(i) for i in self.pending]
        self.server.wait_for(lambda: all(self.server.responses.get(k) for k in ids), BATCH_TIMEOUT_S,
                             f"the answers to a batch of {len(ids)} requests")
        self._take_answers()

    def run(self, requests: int) -> dict:
        self.server.initialize(client_capabilities(pull=True, utf8=False, resolve_properties=["edit", "command"]))
        pid = self.server.proc.pid
        warm_rss = None
        started = time.monotonic()
        while self.sent_requests < requests:
            target = min(requests, self.sent_requests + BATCH)
            data = bytearray()
            while self.sent_requests < target:
                data += self._next()
            self.server.send_raw(bytes(data))
            self._wait_batch()
            if warm_rss is None and self.sent_requests >= requests // 5:
                warm_rss = status_kib(pid, "VmRSS")
        took = time.monotonic() - started
        figures = {"requests": self.sent_requests, "seconds": round(took, 1),
                   "warm_rss_kib": warm_rss, "rss_kib": status_kib(pid, "VmRSS"), "hwm_kib": status_kib(pid, "VmHWM"),
                   "messages": self.counts, "errors": self.errors,
                   "versions_checked": self.versions_checked}
        pushes = self.server.notifications("textDocument/publishDiagnostics")
        if pushes:
            self.problems.append(f"{len(pushes)} publishDiagnostics in pull mode")
        self.problems += self.server.answered_once_problems()
        self.problems += [f"bad output: {p}" for p in self.server.protocol_errors]
        code = self.server.shutdown_and_exit(timeout=30)
        if code != 0:
            self.problems.append(f"the server exited with status {code}")
        return figures


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("fixtures")
    ap.add_argument("--requests", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=14)
    # 256 MiB (CMake passes it; wider under the sanitizers): the server holds
    # at most OPEN_DOCS_MAX documents of at most ~64 KiB (plus LINES_MAX
    # inserted lines) and their analyses; its baseline (binary, tree-sitter
    # grammar, rule docs, thread stacks touched) is about 10 MiB. Measured
    # here: 13 MiB peak after 10,000 requests. The bound leaves room for
    # allocator slack and another libc; the growth check (a quarter of it,
    # after the warm-up) catches a leak of a few KiB per request.
    ap.add_argument("--rss-bound-mib", type=int, default=256)
    args = ap.parse_args()
    run = Endurance(os.path.abspath(args.binary), args.fixtures, args.seed)
    try:
        figures = run.run(args.requests)
    except Exception as e:  # noqa: BLE001
        print(f"FAIL  endurance: {e}")
        print("\n".join(run.server.stderr.strip().splitlines()[-8:]))
        run.server.kill()
        return 1
    bound = args.rss_bound_mib * 1024
    if figures["hwm_kib"] > bound:
        run.problems.append(f"peak resident memory {figures['hwm_kib']} KiB over the bound of {bound} KiB")
    growth = figures["rss_kib"] - figures["warm_rss_kib"]
    if growth > bound // 4:
        run.problems.append(f"resident memory grew by {growth} KiB after the warm-up (bound {bound // 4} KiB)")
    print("endurance: " + json.dumps(figures, sort_keys=True))
    for p in run.problems[:20]:
        print("FAIL  " + p)
    if run.problems:
        print(f"endurance: {len(run.problems)} problems")
        return 1
    print(f"endurance: ok, {figures['requests']} requests answered once each")
    return 0


if __name__ == "__main__":
    sys.exit(main())
