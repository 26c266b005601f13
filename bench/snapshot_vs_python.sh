#!/usr/bin/env bash
# Benchmark: `oomlens snapshot FILE --format json` against Python's own
# unpickling of the same warm file (see bench/README.md, "snapshot").
#
# The goal it reports on: on a snapshot with a long trace (100 MiB by default;
# 1 GiB with --size 1G), oomlens (read, refuse-or-accept every opcode, model,
# trace replay, analysis, JSON) is faster than `pickle.load` alone, and its
# peak memory stays within 1.5x the file's size.
# It prints medians and ratios and never fails on a slow one: it exits non-zero
# only when it cannot run (a missing tool or binary, oomlens failing).
#
# Builds nothing. Usage (from anywhere):
#   cmake --build build && bench/snapshot_vs_python.sh [--size BYTES[K|M|G]] [--runs N] [--protocol 2|4|5]
# Environment:
#   OOMLENS  the oomlens binary   (default: build/oomlens)
#   DATA     where the generated snapshot goes (default: bench/data, git-ignored)
#   PYTHON   the Python that generates and unpickles (default: /usr/bin/python3,
#            Debian's, when present; else python3)
# Uses hyperfine and GNU time when installed (Debian packages hyperfine, time).
set -euo pipefail

die() {
  printf 'snapshot_vs_python: %s\n' "$*" >&2
  exit 2
}

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
size=$((100 * 1048576))
runs=10
protocol=4
while (($#)); do
  case $1 in
    --size)
      size=$2
      case $size in
        *K) size=$((${size%K} * 1024)) ;;
        *M) size=$((${size%M} * 1048576)) ;;
        *G) size=$((${size%G} * 1073741824)) ;;
      esac
      shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --protocol) protocol=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) die "unknown argument: $1" ;;
  esac
done
[[ $size =~ ^[0-9]+$ && $runs =~ ^[0-9]+$ && $protocol =~ ^[245]$ ]] || die "bad --size, --runs or --protocol"

oomlens=${OOMLENS:-$root/build/oomlens}
[ -x "$oomlens" ] || die "no oomlens binary at $oomlens (set OOMLENS)"
python=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x /usr/bin/python3 ] && python=/usr/bin/python3
command -v "$python" >/dev/null || die "$python is needed"
data=${DATA:-$root/bench/data}
mkdir -p "$data"

# The snapshot is generated once per size, protocol and generator version.
gen=$root/fixtures/snapshots/generate.py
stamp=$(sha256sum "$gen" | cut -c1-12)
file=$data/snapshot-$size-p$protocol-$stamp.pickle
if [ ! -s "$file" ]; then
  "$python" "$gen" --big "$size" "$file.tmp" "$protocol" >/dev/null && mv "$file.tmp" "$file"
fi
bytes=$(stat -c %s "$file")
"$oomlens" snapshot --format json "$file" >/dev/null || die "oomlens failed on $file"
cat "$file" >/dev/null  # warm: both read from the page cache

unpickle='import pickle,sys; pickle.load(open(sys.argv[1],"rb"))'
cpu_oomlens=0 cpu_python=0  # mean user+sys CPU seconds, with hyperfine only
results=$(mktemp)
trap 'rm -f "$results"' EXIT
if command -v hyperfine >/dev/null; then
  hyperfine --warmup 1 --runs "$runs" --output=null --export-json "$results" \
    -n oomlens "$oomlens snapshot $file --format json" \
    -n python "$python -c '$unpickle' $file" >&2
  read -r t_oomlens t_python cpu_oomlens cpu_python < <(python3 -c '
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
cpu = lambda x: x["user"] + x["system"]
print(r["oomlens"]["median"], r["python"]["median"], cpu(r["oomlens"]), cpu(r["python"]))' "$results")
else
  # Alternating runs, so drift hits both alike.
  for ((i = 0; i < runs; i++)); do
    s=$(date +%s.%N); "$oomlens" snapshot "$file" --format json >/dev/null; e=$(date +%s.%N)
    echo "oomlens $(echo "$e - $s" | bc)" >>"$results"
    s=$(date +%s.%N); "$python" -c "$unpickle" "$file"; e=$(date +%s.%N)
    echo "python $(echo "$e - $s" | bc)" >>"$results"
  done
  read -r t_oomlens t_python < <(python3 -c '
import statistics, sys
t = {"oomlens": [], "python": []}
for line in open(sys.argv[1]):
    k, v = line.split(); t[k].append(float(v))
print(statistics.median(t["oomlens"]), statistics.median(t["python"]))' "$results")
fi

peak_kib() {  # peak resident set size of a command, KiB
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f %M -o "$results.rss" "$@" >/dev/null && cat "$results.rss"
    rm -f "$results.rss"
  else
    "$@" >/dev/null & local pid=$! peak=0
    while kill -0 "$pid" 2>/dev/null; do
      v=$(awk '/VmHWM/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
      [ -n "$v" ] && peak=$v
      sleep 0.01
    done
    wait "$pid"
    echo "$peak"
  fi
}
rss_oomlens=$(peak_kib "$oomlens" snapshot "$file" --format json)
rss_python=$(peak_kib "$python" -c "$unpickle" "$file")

python3 - "$bytes" "$runs" "$t_oomlens" "$t_python" "$rss_oomlens" "$rss_python" "$file" "$cpu_oomlens" "$cpu_python" <<'PY'
import sys
size, runs = int(sys.argv[1]), int(sys.argv[2])
t_o, t_p, rss_o, rss_p = float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]) * 1024, int(sys.argv[6]) * 1024
mib = 1 << 20
print(f"snapshot        {sys.argv[7]}: {size} bytes ({size / mib:.1f} MiB), {runs} runs each, medians")
print(f"oomlens json    {t_o:.3f} s  ({size / mib / t_o:.0f} MiB/s)")
print(f"python unpickle {t_p:.3f} s  ({size / mib / t_p:.0f} MiB/s)")
print(f"ratio           oomlens / python = {t_o / t_p:.2f}  ({'faster' if t_o < t_p else 'SLOWER'} than unpickling)")
c_o, c_p = float(sys.argv[8]), float(sys.argv[9])
if c_o and c_p:  # CPU time: what a busy machine disturbs less than wall time
    print(f"cpu (user+sys)  oomlens {c_o:.3f} s, python {c_p:.3f} s (means): ratio {c_o / c_p:.2f}")
print(f"peak RSS        oomlens {rss_o / mib:.1f} MiB = {rss_o / size:.2f}x the file "
      f"({'within' if rss_o <= 1.5 * size else 'OVER'} 1.5x); python {rss_p / mib:.1f} MiB = {rss_p / size:.2f}x")
PY
