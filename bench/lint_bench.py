#!/usr/bin/env python3
"""How fast are the source rules? The "Speed" figures of `oomlens lint` and of
the code actions on a training script in `oomlens lsp`.

    bench/lint_bench.py [--lines 10000] [--runs 21] [--requests 200] [--oomlens PATH]

Generates a deterministic training script of --lines lines (models, data
loaders, training loops, some with `torch.cuda.empty_cache()` in them, an
allocator setting made too late, snapshot recording) and reports medians of:

- lint: wall time of `oomlens lint FILE` (one process per run, output to a
  pipe), side by side with CPython parsing the same file
  (`python3 -c 'import ast; ast.parse(...)'`) as a point of reference:
  the least any Python-reading tool has to do;
- open: from `didOpen` of the script to the answer of a pull
  `textDocument/diagnostic` right behind it (full parse + rules);
- edit: the same after a one-character `didChange` in the middle of the
  file, which re-parses incrementally from the previous tree;
- codeAction: p50 and p99 over --requests sequential requests on the
  diagnostics' lines (quick fixes with their versioned edits), and on the
  document-wide source actions (set allocator config, record snapshot,
  fix all), after the first parse.

The script exits non-zero only when it cannot measure, never because a target
is missed. Everything printed also goes to bench/results/lint-<date>-<time>.txt.
"""
from __future__ import annotations

import argparse
import datetime
import io
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "lsp_e2e"))
from lsp_client import LspServer, client_capabilities  # noqa: E402

TARGET_P99_MS = 10.0

BLOCK = '''

class Block{i}(nn.Module):
    """Residual block {i}."""

    def __init__(self, width: int = {w}) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.proj = nn.Linear(width, width * 4)
        self.out = nn.Linear(width * 4, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.proj(self.norm(x))
        h = torch.nn.functional.gelu(h)
        return x + self.out(h)


def evaluate_{i}(model, loader, device):
    model.eval()
    total = 0.0
    with torch.no_grad():
        for batch in loader:
            total += model(batch.to(device)).float().mean().item()
    {flush}
    return total / max(1, len(loader))


def train_{i}(model, loader, optimizer, device, steps={s}):
    model.train()
    for step, batch in enumerate(loader):
        if step >= steps:
            break
        loss = model(batch.to(device)).pow(2).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        if step % 100 == 0:
            print(f"block {i} step {{step}} loss {{loss.item():.4f}}")
'''

HEADER = '''#!/usr/bin/env python3
"""A generated training script for the oomlens lint benchmark."""
from __future__ import annotations

import os
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
torch.cuda.memory._record_memory_history(max_entries=100000)
'''

FOOTER = '''

def main():
    model = nn.Sequential(*[Block0() for _ in range(4)]).to(device)
    os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    loader = DataLoader(torch.randn(1024, 256), batch_size=32)
    for epoch in range(3):
        train_0(model, loader, optimizer, device)
        evaluate_0(model, loader, device)


if __name__ == "__main__":
    main()
'''


def script(lines: int) -> str:
    parts, i = [HEADER], 0
    while sum(p.count("\n") for p in parts) + FOOTER.count("\n") < lines:
        flush = "torch.cuda.empty_cache()" if i % 3 == 0 else "pass"
        parts.append(BLOCK.format(i=i, w=256 + 8 * (i % 16), s=100 + i, flush=flush))
        # Every fifth training loop flushes the cache on every step (OOM301).
        if i % 5 == 0:
            parts[-1] = parts[-1].replace("        optimizer.step()\n",
                                          "        optimizer.step()\n        torch.cuda.empty_cache()\n")
        i += 1
    parts.append(FOOTER)
    return "".join(parts)


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def p99_ms(samples: list[float]) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(0.99 * (len(s) - 1))))] * 1000


def time_process(argv: list[str], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
        out.append(time.perf_counter() - t)
    return out


def lsp_figures(oomlens: str, path: str, text: str, runs: int, requests: int) -> dict:
    uri = "file://" + path
    opens, edits, quick, source = [], [], [], []
    mid = text.count("\n") // 2
    for run in range(runs):
        s = LspServer(oomlens, ("lsp",))
        try:
            s.initialize(client_capabilities(pull=True))
            t = time.perf_counter()
            s.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                               "text": text}})
            items = s.call_ok("textDocument/diagnostic", {"textDocument": {"uri": uri}})["items"]
            opens.append(time.perf_counter() - t)
            t = time.perf_counter()
            s.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
                {"range": {"start": {"line": mid, "character": 0}, "end": {"line": mid, "character": 0}}, "text": " "}]})
            items = s.call_ok("textDocument/diagnostic", {"textDocument": {"uri": uri}})["items"]
            edits.append(time.perf_counter() - t)
            if run:  # one server's requests are enough; later runs measure open/edit only
                continue
            fixable = [d for d in items if d.get("data", {}).get("fix")]
            for k in range(requests):
                d = fixable[k % len(fixable)]
                t = time.perf_counter()
                s.call_ok("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": d["range"],
                                                      "context": {"diagnostics": [d]}})
                quick.append(time.perf_counter() - t)
            kinds = ["source.oomlens.setAllocatorConf", "source.oomlens.recordSnapshot", "source.fixAll.oomlens"]
            for k in range(requests):
                t = time.perf_counter()
                s.call_ok("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": {
                    "start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "context": {"diagnostics": [], "only": [kinds[k % len(kinds)]]}})
                source.append(time.perf_counter() - t)
            diagnostics = len(items)
        finally:
            s.kill()
    return {"open": opens, "edit": edits, "quick": quick, "source": source, "diagnostics": diagnostics}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lines", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=21)
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--oomlens", default=os.path.join(ROOT, "build", "oomlens"))
    args = ap.parse_args()
    if not os.access(args.oomlens, os.X_OK):
        print(f"lint_bench: no oomlens binary at {args.oomlens} (scripts/build.sh builds it)", file=sys.stderr)
        return 2

    out = io.StringIO()

    def say(line: str = "") -> None:
        print(line)
        out.write(line + "\n")

    text = script(args.lines)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.py")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        say(f"oomlens lint benchmark, {datetime.datetime.now().isoformat(timespec='seconds')}, "
            f"{platform.node()}, {os.cpu_count()} CPUs")
        say(f"script: {text.count(chr(10))} lines, {len(text.encode()) / 1024:.0f} KiB; {args.runs} runs each")
        lint = time_process([args.oomlens, "lint", path], args.runs)
        ast = time_process([sys.executable, "-c", "import ast,sys; ast.parse(open(sys.argv[1]).read())", path], args.runs)
        say(f"oomlens lint FILE:         median {median_ms(lint):7.1f} ms")
        say(f"python3 ast.parse (ref.):  median {median_ms(ast):7.1f} ms   ratio oomlens/python {median_ms(lint) / median_ms(ast):.2f}")
        lsp = lsp_figures(args.oomlens, path, text, max(3, args.runs // 3), args.requests)
        say(f"LSP didOpen -> diagnostics ({lsp['diagnostics']} items): median {median_ms(lsp['open']):6.1f} ms")
        say(f"LSP 1-char didChange -> diagnostics (incremental): median {median_ms(lsp['edit']):6.1f} ms")
        say(f"LSP codeAction quick fix:  p50 {median_ms(lsp['quick']):6.3f} ms   p99 {p99_ms(lsp['quick']):6.3f} ms "
            f"(target p99 < {TARGET_P99_MS:.0f} ms)")
        say(f"LSP codeAction source actions: p50 {median_ms(lsp['source']):6.3f} ms   p99 {p99_ms(lsp['source']):6.3f} ms")
    os.makedirs(os.path.join(ROOT, "bench", "results"), exist_ok=True)
    name = datetime.datetime.now().strftime("lint-%Y%m%d-%H%M%S.txt")
    with open(os.path.join(ROOT, "bench", "results", name), "w", encoding="utf-8") as f:
        f.write(out.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
