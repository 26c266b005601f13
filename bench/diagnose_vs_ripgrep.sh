#!/usr/bin/env bash
# Benchmark: `oomlens diagnose` against `rg -c 'out of memory|RESOURCE_EXHAUSTED'`
# on the same warm, generated training log (see bench/README.md; for the
# content matrix, the worst case, see bench/diagnose_matrix.sh).
#
# The requirement it checks: a 1 GiB log with a few dozen OOMs is fully
# diagnosed within 1.5x of the time of `rg -c 'out of memory|RESOURCE_EXHAUSTED'`, measured side by
# side in one run, and peak memory stays under 64 MiB whatever the log's size
# (shown on a 1 GiB and a 4 GiB log). It reports medians and never fails on a
# slow ratio: it exits non-zero only when it cannot run (a missing tool, binary
# or disk space, or oomlens crashing).
#
# Builds nothing. Usage (from anywhere):
#   cmake --build build && bench/diagnose_vs_ripgrep.sh [--size BYTES] [--runs N] [--skip-4g]
# Environment:
#   OOMLENS  the oomlens binary   (default: build/oomlens)
#   GEN      the log generator    (default: build/bench/gen_training_log)
# Needs: ripgrep, python3 (or jq); uses hyperfine and GNU time when installed
# (Debian packages ripgrep, python3, hyperfine, time).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit "${1:-0}"
}

die() {
  printf 'diagnose_vs_ripgrep: %s\n' "$*" >&2
  exit 2
}

caller=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

gib=1073741824
size=$gib
runs=10
warmup=3
skip_4g=0
ooms=36
budget_kib=$((64 * 1024))
ratio_goal=1.5
rg_pattern='out of memory|RESOURCE_EXHAUSTED'

# BYTES, or a number with a K/M/G suffix (binary units).
to_bytes() {
  local v=$1
  case $v in
    *[kK]) v=$((${v%?} * 1024)) ;;
    *[mM]) v=$((${v%?} * 1048576)) ;;
    *[gG]) v=$((${v%?} * 1073741824)) ;;
  esac
  if ! [[ $v =~ ^[0-9]+$ ]] || ((v == 0)); then die "bad size: $1"; fi
  printf '%s\n' "$v"
}

while (($#)); do
  case $1 in
    --size) (($# >= 2)) || die "--size needs a value"; size=$(to_bytes "$2"); shift 2 ;;
    --size=*) size=$(to_bytes "${1#*=}"); shift ;;
    --runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --skip-4g) skip_4g=1; shift ;;
    -h | --help) usage 0 ;;
    *) printf 'diagnose_vs_ripgrep: unknown argument: %s\n\n' "$1" >&2; usage 2 >&2 ;;
  esac
done
if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs == 0)); then die "bad --runs: $runs"; fi
((runs >= 10)) || printf 'diagnose_vs_ripgrep: note: --runs %s is below 10; medians will be noisy\n' "$runs" >&2

# Paths given in the environment are relative to the caller's directory; the
# defaults to the repository root.
OOMLENS=${OOMLENS:-$root/build/oomlens}
GEN=${GEN:-$root/build/bench/gen_training_log}
[[ $OOMLENS == /* ]] || OOMLENS=$caller/$OOMLENS
[[ $GEN == /* ]] || GEN=$caller/$GEN

# ---------------------------------------------------------------- tools

command -v rg >/dev/null || die "ripgrep (rg) not found: apt-get install ripgrep"
[[ -x $OOMLENS && ! -d $OOMLENS ]] || die "oomlens binary not found at '$OOMLENS' (build it: cmake --build build; or set OOMLENS)"
if command -v python3 >/dev/null; then
  json_tool=python3
elif command -v jq >/dev/null; then
  json_tool=jq
else
  die "need python3 (or jq) to read JSON: apt-get install python3"
fi
have_hyperfine=0
command -v hyperfine >/dev/null && have_hyperfine=1
have_gnu_time=0
[[ -x /usr/bin/time ]] && /usr/bin/time -f %M true >/dev/null 2>&1 && have_gnu_time=1

# ---------------------------------------------------------------- helpers

human() {  # bytes -> "1 GiB", "512 MiB", "1.50 GiB"
  awk -v b="$1" 'BEGIN {
    if (b >= 1073741824) { v = b / 1073741824; u = "GiB" } else if (b >= 1048576) { v = b / 1048576; u = "MiB" } else { v = b / 1024; u = "KiB" }
    if (v == int(v)) printf "%d %s\n", v, u; else printf "%.2f %s\n", v, u }'
}

data_name() {  # bytes -> bench/data/train-1g.log, train-512m.log, train-12345.log
  local b=$1
  if ((b % gib == 0)); then
    printf 'bench/data/train-%dg.log\n' $((b / gib))
  elif ((b % 1048576 == 0)); then
    printf 'bench/data/train-%dm.log\n' $((b / 1048576))
  else
    printf 'bench/data/train-%d.log\n' "$b"
  fi
}

file_size() { stat -c %s "$1" 2>/dev/null || echo -1; }

# Which generator wrote a log: the hash of its source. (Not the binary's
# timestamp: it is relinked whenever the analyzer library changes.)
gen_source_id() {
  sha256sum "$root/bench/gen_training_log.cpp" 2>/dev/null | cut -c1-16 || echo unknown
}

# Generates the log once; reuses it when it has the right size and was written
# by the current generator source. The generator's summary is kept beside it
# (.gen.txt).
ensure_log() {
  local bytes=$1 log=$2
  if [[ -f $log && $(file_size "$log") == "$bytes" && -f $log.gen.txt ]] &&
    grep -qx "source: $(gen_source_id)" "$log.gen.txt"; then
    return 0
  fi
  [[ -x $GEN && ! -d $GEN ]] || die "generator not found at '$GEN' (build it: cmake --build build; or set GEN)"
  mkdir -p "$(dirname "$log")"
  local avail
  avail=$(df --output=avail -B1 "$(dirname "$log")" | tail -n 1 | tr -d ' ')
  local have=0
  [[ -f $log ]] && have=$(file_size "$log")
  ((avail + have > bytes + 256 * 1048576)) ||
    die "not enough disk space for $(human "$bytes") in $(dirname "$log") ($(human "$avail") free); free some or use --skip-4g / --size"
  rm -f "$log" "$log.gen.txt"
  printf 'generating %s (%s) ... ' "$log" "$(human "$bytes")" >&2
  local t0 t1
  t0=$(date +%s%N)
  "$GEN" --size "$bytes" --ooms "$ooms" "$log.tmp" 2>"$log.gen.tmp" || {
    cat "$log.gen.tmp" >&2
    rm -f "$log.tmp" "$log.gen.tmp"
    die "generator failed"
  }
  t1=$(date +%s%N)
  echo "source: $(gen_source_id)" >>"$log.gen.tmp"
  # Write it back now, or the writeback of gigabytes of dirty pages would
  # run during the timings.
  sync "$log.tmp" 2>/dev/null || sync
  mv "$log.tmp" "$log"
  mv "$log.gen.tmp" "$log.gen.txt"
  printf 'done in %s s\n' "$(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.1f", n / 1e9 }')" >&2
}

warm() {  # read the file so both tools see it in the page cache
  cat "$1" >/dev/null
  cat "$1" >/dev/null
}

# Number of entries of .incidents in a JSON file, or "n/a".
json_incidents() {
  local n
  if [[ $json_tool == python3 ]]; then
    n=$(python3 -c 'import json, sys
try:
    print(len(json.load(open(sys.argv[1]))["incidents"]))
except Exception:
    print("n/a")' "$1" 2>/dev/null) || n="n/a"
  else
    n=$(jq -r '.incidents | length' "$1" 2>/dev/null) || n="n/a"
  fi
  printf '%s\n' "${n:-n/a}"
}

# Mean user+system CPU seconds of .results[i] in hyperfine's JSON export.
hyperfine_cpu() {
  if [[ $json_tool == python3 ]]; then
    python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
print(r["user"] + r["system"])' "$1" "$2"
  else
    jq -r ".results[$2] | .user + .system" "$1"
  fi
}

# Median of .results[i] (seconds) in hyperfine's JSON export.
hyperfine_median() {
  if [[ $json_tool == python3 ]]; then
    python3 -c 'import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
print(r.get("median") if r.get("median") is not None else statistics.median(r["times"]))' "$1" "$2"
  else
    jq -r ".results[$2] | (.median // (.times | sort | if length % 2 == 1 then .[length / 2 | floor] else (.[length / 2 - 1] + .[length / 2]) / 2 end))" "$1"
  fi
}

median() {  # numbers on stdin -> median
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

now_ns() { date +%s%N; }

# Peak RSS (KiB) of one `oomlens diagnose --format json LOG`; sets rss_kib,
# rss_how, oom_code and leaves the JSON in $tmp/out.json.
measure_rss() {
  local log=$1
  oom_code=0
  if ((have_gnu_time)); then
    /usr/bin/time -f %M -o "$tmp/rss" "$OOMLENS" diagnose --format json "$log" >"$tmp/out.json" 2>"$tmp/err" || oom_code=$?
    rss_kib=$(tail -n 1 "$tmp/rss")
    rss_how="GNU time %M"
  else
    # Poll the high-water mark while it runs: may miss growth in the last few ms.
    "$OOMLENS" diagnose --format json "$log" >"$tmp/out.json" 2>"$tmp/err" &
    local pid=$! key value _
    rss_kib=0
    while kill -0 "$pid" 2>/dev/null; do
      while read -r key value _; do
        if [[ $key == VmHWM: ]] && ((value > rss_kib)); then rss_kib=$value; fi
      done <"/proc/$pid/status" 2>/dev/null || true
      sleep 0.005
    done
    wait "$pid" || oom_code=$?
    rss_how="VmHWM polled from /proc (install Debian package 'time' for an exact figure)"
  fi
}

rss_line() {  # label kib
  awk -v l="$1" -v k="$2" -v b="$budget_kib" 'BEGIN {
    printf "peak RSS, %s log: %.1f MiB (budget %d MiB: %s)\n", l, k / 1024, b / 1024, (k < b ? "OK" : "OVER") }'
}

# oomlens exits 0 (no OOM) or 1 (OOMs found); anything else is a failure.
check_exit() {  # code label
  if (($1 > 1)); then
    printf 'ERROR: oomlens exited %s on the %s log; stderr:\n' "$1" "$2"
    head -n 20 "$tmp/err"
    failed=1
  fi
}

gen_summary() {  # the generator's "N OOM messages in M incidents" for a log
  sed -n 's/.*, \([0-9]* OOM messages in [0-9]* incidents\).*/\1/p' "$1.gen.txt" 2>/dev/null | head -n 1
}

# A fast analyzer that misses incidents is no win: compare with what was written.
incidents_check() {  # log found
  local want
  want=$(gen_summary "$1" | sed -n 's/.* in \([0-9]*\) incidents/\1/p')
  if [[ -z $want ]]; then
    echo "incidents check:     unknown (no generator summary beside $1)"
  elif [[ $2 == "$want" ]]; then
    echo "incidents check:     OK ($2 of $want)"
  else
    echo "incidents check:     MISMATCH: oomlens found $2, the generator wrote $want"
  fi
}

# ---------------------------------------------------------------- run

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0

log1=$(data_name "$size")
size4=$((size * 4))
log4=$(data_name "$size4")
ensure_log "$size" "$log1"
((skip_4g)) || ensure_log "$size4" "$log4"

mkdir -p bench/results
results=bench/results/diagnose-$(date +%Y-%m-%d-%H%M%S).txt
exec > >(tee "$results") 2>&1
tee_pid=$!

label1=$(human "$size")
label4=$(human "$size4")
echo "== oomlens diagnose vs ripgrep: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:   $(hostname) | $(uname -srm) | $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) | $(nproc) CPUs | $(awk '/^MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
echo "oomlens:   $OOMLENS ($("$OOMLENS" --version 2>/dev/null | head -n 1 || true))"
echo "ripgrep:   $(rg --version 2>/dev/null | head -n 1)"
if ((have_hyperfine)); then
  echo "timing:    $(hyperfine --version), $warmup warmup + $runs runs each, medians"
else
  echo "timing:    bash loop (hyperfine not installed: apt-get install hyperfine), $warmup warmup + $runs alternating runs each, medians"
fi
echo "log:       $log1 ($label1, $(gen_summary "$log1"))"
echo

warm "$log1"
rg_cmd="rg -c '$rg_pattern' $(printf %q "$log1")"
oom_cmd="$(printf %q "$OOMLENS") diagnose --format json $(printf %q "$log1")"

if ((have_hyperfine)); then
  # --output=pipe: neither tool may take a shortcut for /dev/null (hyperfine
  # >= 1.13); -i: oomlens exits 1 when it finds an OOM.
  output_opt=()
  if hyperfine --help 2>/dev/null | grep -q -- '--output'; then output_opt=(--output=pipe); fi
  hyperfine --style basic --warmup "$warmup" --runs "$runs" --ignore-failure "${output_opt[@]}" \
    --export-json "$tmp/hyperfine.json" -n rg "$rg_cmd" -n oomlens "$oom_cmd"
  rg_median=$(hyperfine_median "$tmp/hyperfine.json" 0)
  oom_median=$(hyperfine_median "$tmp/hyperfine.json" 1)
  rg_cpu=$(hyperfine_cpu "$tmp/hyperfine.json" 0)
  oom_cpu=$(hyperfine_cpu "$tmp/hyperfine.json" 1)
else
  for ((i = 0; i < warmup; i++)); do
    rg -c "$rg_pattern" "$log1" >/dev/null || true
    "$OOMLENS" diagnose --format json "$log1" >/dev/null 2>&1 || true
  done
  : >"$tmp/rg.times"
  : >"$tmp/oomlens.times"
  for ((i = 0; i < runs; i++)); do
    t0=$(now_ns)
    rg -c "$rg_pattern" "$log1" | cat >/dev/null || true
    t1=$(now_ns)
    "$OOMLENS" diagnose --format json "$log1" 2>/dev/null | cat >/dev/null || true
    t2=$(now_ns)
    echo "$((t1 - t0))e-9" >>"$tmp/rg.times"
    echo "$((t2 - t1))e-9" >>"$tmp/oomlens.times"
  done
  rg_median=$(median <"$tmp/rg.times")
  oom_median=$(median <"$tmp/oomlens.times")
fi

echo
echo "== results ($label1 log, warm page cache)"
awk -v r="$rg_median" -v o="$oom_median" -v g="$ratio_goal" -v s="$size" 'BEGIN {
  printf "rg -c median:        %8.1f ms  (%.2f GB/s)\n", r * 1000, s / r / 1e9
  printf "oomlens median:      %8.1f ms  (%.2f GB/s)\n", o * 1000, s / o / 1e9
  printf "ratio oomlens/rg:    %8.2f     (goal <= %.1fx: %s)\n", o / r, g, (o / r <= g ? "within" : "NOT within") }'
if [[ -n ${rg_cpu:-} ]]; then
  # Less disturbed by a busy machine than wall time, but sums all threads.
  awk -v r="$rg_cpu" -v o="$oom_cpu" 'BEGIN {
    printf "CPU user+sys (mean): rg %.1f ms, oomlens %.1f ms, ratio %.2f (all threads; the goal is on wall time)\n", r * 1000, o * 1000, o / r }'
fi

rg_count1=$(rg -c "$rg_pattern" "$log1" || echo 0)
measure_rss "$log1"
check_exit "$oom_code" "$label1"
incidents1=$(json_incidents "$tmp/out.json")
echo "OOMs:                rg counts $rg_count1 '$rg_pattern' lines; oomlens found $incidents1 incidents (generator wrote: $(gen_summary "$log1"))"
incidents_check "$log1" "$incidents1"
rss_line "$label1" "$rss_kib"

if ((skip_4g)); then
  echo "peak RSS, $label4 log: skipped (--skip-4g)"
else
  warm "$log4"
  rg_count4=$(rg -c "$rg_pattern" "$log4" || echo 0)
  measure_rss "$log4"
  check_exit "$oom_code" "$label4"
  incidents4=$(json_incidents "$tmp/out.json")
  rss_line "$label4" "$rss_kib"
  echo "OOMs ($label4):        rg counts $rg_count4; oomlens found $incidents4 incidents (generator wrote: $(gen_summary "$log4"))"
  incidents_check "$log4" "$incidents4"
fi
echo "(peak RSS measured with $rss_how)"
echo
echo "results written to $results"
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null || true
exit "$failed"
