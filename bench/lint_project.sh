#!/usr/bin/env bash
# How fast is `oomlens lint DIR` on a whole project, where scripts import
# each other's modules? Generates a deterministic project of FILES Python
# files (default 5000): packages nested two deep with __init__.py files,
# modules importing 2-4 modules written before them, mostly of their own
# package (absolute, relative and from-imports; some closing import cycles), 1 in 100 starting CUDA at module level, 1 in 50
# holding a helper that calls torch.cuda.empty_cache(), and training scripts
# that import them, set PYTORCH_CUDA_ALLOC_CONF late and call the helpers
# in their loops. Then reports the median wall time of RUNS runs of
# `oomlens lint DIR` (output to a pipe) and the peak resident memory of one
# run (/usr/bin/time -v).
#
#   bench/lint_project.sh [OOMLENS] [FILES] [RUNS]
set -euo pipefail
oomlens=$(realpath "${1:-build/oomlens}")
files=${2:-5000}
runs=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# KEEP=DIR keeps the generated project there (for profiling).
if [ -n "${KEEP:-}" ]; then work=$KEEP; mkdir -p "$work"; trap - EXIT; fi

python3 - "$work/project" "$files" <<'PY'
import os
import random
import sys

root, total = sys.argv[1], int(sys.argv[2])
rng = random.Random(20261202)
scripts = 20
packages = max(1, (total - scripts) // 100)
wanted = total - scripts - packages * 5  # each package: its __init__.py and 4 subpackages'
per_subpackage = -(-wanted // (packages * 4))
modules = []  # (package, subpackage, name): dotted names
for p in range(packages):
    for s in range(4):
        for m in range(per_subpackage):
            modules.append((f"pkg{p}", f"sub{s}", f"mod{m}"))
modules = modules[:wanted]

def write(path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w") as f:
        f.write(text)

count = 0
for p in range(packages):
    write(f"pkg{p}/__init__.py", f'"""Package {p}."""\nfrom .sub0 import mod0\n')
    count += 1
    for s in range(4):
        write(f"pkg{p}/sub{s}/__init__.py", f"from . import mod{s}\n")
        count += 1
flushing = []
for i, (p, s, m) in enumerate(modules):
    lines = ['"""A generated module."""', "import math", "import torch", ""]
    # Layered, as real code is: a module imports modules written before it
    # (mostly nearby: its own package), so import chains stay short.
    for _ in range(rng.randint(2, 4) if i else 0):
        op, os_, om = modules[max(0, i - 1 - int(rng.expovariate(1 / 60)) % i)]
        kind = rng.randrange(3)
        if kind == 0:
            lines.insert(3, f"import {op}.{os_}.{om}")
        elif kind == 1:
            lines.insert(3, f"from {op}.{os_} import {om}")
        elif op == p and os_ == s:
            lines.insert(3, f"from .{om} import helper_{om}")
        else:
            lines.insert(3, f"from ..{os_} import {om}")
    if i % 97 == 5 and i + 1 < len(modules):  # a cycle: it and the next import each other
        q = modules[i + 1]
        lines.insert(3, f"import {q[0]}.{q[1]}.{q[2]}")
    if i % 97 == 6:
        q = modules[i - 1]
        lines.insert(3, f"import {q[0]}.{q[1]}.{q[2]}")
    if i % 100 == 7:
        lines.append('_WARM = torch.zeros(1, device="cuda")')
    lines += ["", f"def helper_{m}(x):", "    y = math.sqrt(abs(x) + 1)"]
    if i % 50 == 3:
        lines.append("    torch.cuda.empty_cache()")
        flushing.append((p, s, m))
    lines += ["    return y", ""]
    for k in range(8):
        lines += [f"class Block{k}(torch.nn.Module):", "    def __init__(self, n):", "        super().__init__()",
                  "        self.layer = torch.nn.Linear(n, n)", "", "    def forward(self, x):",
                  "        return torch.relu(self.layer(x)) + x", ""]
    write(f"{p}/{s}/{m}.py", "\n".join(lines) + "\n")
    count += 1
for t in range(scripts):
    p, s, m = rng.choice(modules)
    fp, fs, fm = flushing[t % len(flushing)]
    text = f"""import os
import torch
import {p}.{s}.{m}
from {fp}.{fs}.{fm} import helper_{fm}

os.environ["PYTORCH_CUDA_ALLOC_CONF"] = "expandable_segments:True"

model = torch.nn.Linear(8, 8).cuda()
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1000):
    loss = model(torch.randn(4, 8, device="cuda")).sum()
    loss.backward()
    opt.step()
    helper_{fm}(step)
"""
    write(f"train_{t}.py", text)
    count += 1
print(f"generated {count} files under {root}", file=sys.stderr)
PY

count=$(find "$work/project" -name '*.py' | wc -l)
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s.%N)
  "$oomlens" lint "$work/project" >"$work/out.txt" 2>/dev/null || true
  end=$(date +%s.%N)
  times+=("$(echo "$end - $start" | bc)")
done
median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}')
/usr/bin/time -v "$oomlens" lint "$work/project" >/dev/null 2>"$work/time.txt" || true
rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
cpu=$(awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} END {print u + s}' "$work/time.txt")
echo "files: $count python files; diagnostics: $(wc -l <"$work/out.txt")"
echo "lint DIR: median ${median}s of $runs runs ($(printf '%s ' "${times[@]}")); one run: ${cpu}s of CPU, peak RSS ${rss} KiB"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
