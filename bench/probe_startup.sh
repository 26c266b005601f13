#!/usr/bin/env bash
# What the verify probe costs a job at start: the same command with and
# without the probe in its environment (PYTHONPATH and OOMLENS_PROBE_DIR as
# `oomlens verify` sets them), timed with hyperfine, medians and the ratio.
# The probe does its work at torch's import, at CUDA's start and at exit; a
# training step never calls it, so start-up and exit are all there is to time.
#
#   bench/probe_startup.sh [--runs N]
# Jobs timed:
#   fake   the test suite's stand-in torch: import, one allocation, exit
#          (the probe's whole path: import watch, CUDA-start hook, report at exit)
#   torch  Debian's python3-torch (CPU): `import torch` and a tensor op
#          (the probe's import watch and exit report on a real torch)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
runs=30
[ "${1:-}" = "--runs" ] && runs=$2
mkdir -p "$root/bench/results"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/probe" "$work/out"
cp "$root"/cli/verify/probe/*.py "$work/probe/"
fake="$root/tests/verify/fake_torch"
job="$root/tests/verify/jobs/report_env.py"
# The interpreter itself, not a launcher shim (pyenv's adds a second of its own).
python=$(python3 -c 'import sys; print(sys.executable)')
result="$root/bench/results/probe-startup-$(date +%Y-%m-%d-%H%M%S).txt"

time_pair() {  # name, command (run with PYTHONPATH=$1-prefix)
  local name=$1 pythonpath=$2 command=$3
  hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/$name.json" \
    -n "$name without probe" "env PYTHONPATH=$pythonpath $command" \
    -n "$name with probe" "env PYTHONPATH=$work/probe:$pythonpath OOMLENS_PROBE_DIR=$work/out OOMLENS_PROBE_RUN=bench $command" >/dev/null
  python3 - "$work/$name.json" "$name" <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
without, with_probe = (r["median"] for r in results)
print(f"{sys.argv[2]:6}  median without {without * 1000:8.1f} ms   with probe {with_probe * 1000:8.1f} ms   "
      f"added {(with_probe - without) * 1000:+6.1f} ms   ratio {with_probe / without:.3f}")
PY
}

{
  echo "probe start-up cost, $runs runs each, $(date -u +%FT%TZ), $(nproc) cores"
  time_pair fake "$fake" "$python $job"
  if /usr/bin/python3 -c "import torch" 2>/dev/null; then
    time_pair torch "" "/usr/bin/python3 -c 'import torch; print((torch.ones(3) * 2).sum().item())'"
  else
    echo "torch   skipped: Debian's python3-torch is not installed"
  fi
} | tee "$result"
