#!/usr/bin/env bash
# Benchmark: `oomlens diagnose` over a content matrix of generated training
# logs, each against `rg -c 'out of memory|RESOURCE_EXHAUSTED'` and a plain
# Python peer (bench/python_peer.py) on the same warm file (see bench/README.md).
#
# The requirement it checks: throughput that does not depend on the content. On
# the SLOWEST log of the matrix, `oomlens diagnose --format json` is within 1.5x
# of rg's wall time (timed side by side in one run), peaks under 64 MiB of RSS,
# and is at least 10x faster than the Python peer; and every incident's `line`
# is grep -n's line of its OOM message. One row per log, the worst ratio last.
# It reports and never fails on a ratio: it exits non-zero only when it cannot
# measure (a missing tool, binary or disk space, a log that does not match its
# manifest, oomlens or the peer crashing).
#
# Builds nothing. Usage (from anywhere):
#   cmake --build build && bench/diagnose_matrix.sh [options]
# Options:
#   --size BYTES    size of each log (default 1G; K, M, G suffixes)
#   --runs N        timed runs of each command on each log (default 5), after a warmup run
#   --only MIX,...  some of: tracebacks memory_words progress_bars ranks lookalikes bursts mix
#                   (also classic, the log of diagnose_vs_ripgrep.sh); default: the seven above
#   --verify        also recount the figures the generator measured (slow: ~20 s a GiB)
#   --drop-caches   drop the page cache before warming each log (root): rg's fastest case
#   --as-written    time a fresh copy of each log, cached as its writer left it (as a
#                   training job leaves its log): rg's slowest case; needs room for one copy
#   --keep          keep the generated logs in bench/data (the default: reused next time)
#   --clean         delete each log and its manifest once it is measured
# Environment:
#   OOMLENS  the oomlens binary   (default: build/oomlens)
#   GEN      the log generator    (default: build/bench/gen_training_log)
#   PYTHON   the Python that runs the peer and the checks (default: python3)
# Needs: ripgrep, grep, python3; uses hyperfine and GNU time when installed
# (Debian packages ripgrep, python3, hyperfine, time).
set -euo pipefail

usage() {
  sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"
  exit "${1:-0}"
}

die() {
  printf 'diagnose_matrix: %s\n' "$*" >&2
  exit 2
}

caller=$PWD
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

all_mixes=(tracebacks memory_words progress_bars ranks lookalikes bursts mix)
known_mixes=(classic "${all_mixes[@]}")
gib=1073741824
size=$gib
runs=5
warmup=1
drop_caches=0
as_written=0
verify_full=0
clean=0
mixes=("${all_mixes[@]}")
budget_kib=$((64 * 1024))
ratio_goal=1.5
peer_goal=10
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

set_only() {
  local list=$1 m k ok
  mixes=()
  IFS=, read -r -a list_items <<<"$list"
  for m in "${list_items[@]}"; do
    ok=0
    for k in "${known_mixes[@]}"; do [[ $m == "$k" ]] && ok=1; done
    ((ok)) || die "unknown mix '$m' (known: ${known_mixes[*]})"
    mixes+=("$m")
  done
  ((${#mixes[@]})) || die "--only needs at least one mix"
}

while (($#)); do
  case $1 in
    --size) (($# >= 2)) || die "--size needs a value"; size=$(to_bytes "$2"); shift 2 ;;
    --size=*) size=$(to_bytes "${1#*=}"); shift ;;
    --runs) (($# >= 2)) || die "--runs needs a value"; runs=$2; shift 2 ;;
    --runs=*) runs=${1#*=}; shift ;;
    --only) (($# >= 2)) || die "--only needs a value"; set_only "$2"; shift 2 ;;
    --only=*) set_only "${1#*=}"; shift ;;
    --verify) verify_full=1; shift ;;
    --drop-caches) drop_caches=1; shift ;;
    --as-written) as_written=1; shift ;;
    --keep) clean=0; shift ;;
    --clean) clean=1; shift ;;
    -h | --help) usage 0 ;;
    *) printf 'diagnose_matrix: unknown argument: %s\n\n' "$1" >&2; usage 2 >&2 ;;
  esac
done
if ! [[ $runs =~ ^[0-9]+$ ]] || ((runs == 0)); then die "bad --runs: $runs"; fi
((drop_caches && as_written)) && die "--drop-caches and --as-written measure two different caches: give one"
((runs >= 5)) || printf 'diagnose_matrix: note: --runs %s is below 5; medians will be noisy\n' "$runs" >&2

# Paths given in the environment are relative to the caller's directory; the
# defaults to the repository root.
OOMLENS=${OOMLENS:-$root/build/oomlens}
GEN=${GEN:-$root/build/bench/gen_training_log}
PYTHON=${PYTHON:-python3}
[[ $OOMLENS == /* ]] || OOMLENS=$caller/$OOMLENS
[[ $GEN == /* ]] || GEN=$caller/$GEN
peer=$root/bench/python_peer.py
check=$root/bench/manifest_check.py

# ---------------------------------------------------------------- tools

command -v rg >/dev/null || die "ripgrep (rg) not found: apt-get install ripgrep"
command -v grep >/dev/null || die "grep not found"
command -v "$PYTHON" >/dev/null || die "$PYTHON not found: apt-get install python3"
[[ -x $OOMLENS && ! -d $OOMLENS ]] || die "oomlens binary not found at '$OOMLENS' (build it: cmake --build build; or set OOMLENS)"
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

size_tag() {  # bytes -> 1g, 64m, 12345
  local b=$1
  if ((b % gib == 0)); then
    printf '%dg\n' $((b / gib))
  elif ((b % 1048576 == 0)); then
    printf '%dm\n' $((b / 1048576))
  else
    printf '%d\n' "$b"
  fi
}

file_size() { stat -c %s "$1" 2>/dev/null || echo -1; }

# Which generator wrote a log: the hash of its source (the binary is relinked
# whenever the analyzer library changes).
gen_source_id() {
  sha256sum "$root/bench/gen_training_log.cpp" 2>/dev/null | cut -c1-16 || echo unknown
}

# Generates a mix's log and manifest once; reuses them while the size, the mix
# and the generator's source are the same. The generator's summary (what the
# log holds, measured on its bytes) is kept beside it (.gen.txt).
ensure_log() {
  local mix=$1 bytes=$2 log=$3
  if [[ -f $log && $(file_size "$log") == "$bytes" && -f $log.gen.txt && -f $log.manifest.json ]] &&
    grep -qx "source: $(gen_source_id)" "$log.gen.txt" && grep -qx "mix: $mix" "$log.gen.txt"; then
    return 0
  fi
  [[ -x $GEN && ! -d $GEN ]] || die "generator not found at '$GEN' (build it: cmake --build build; or set GEN)"
  mkdir -p "$(dirname "$log")"
  local avail have=0
  avail=$(df --output=avail -B1 "$(dirname "$log")" | tail -n 1 | tr -d ' ')
  [[ -f $log ]] && have=$(file_size "$log")
  ((avail + have > bytes + 256 * 1048576)) ||
    die "not enough disk space for $(human "$bytes") in $(dirname "$log") ($(human "$avail") free); use --clean, --only or --size"
  rm -f "$log" "$log.gen.txt" "$log.manifest.json"
  printf 'generating %s (%s, mix %s) ... ' "$log" "$(human "$bytes")" "$mix" >&2
  local t0 t1
  t0=$(date +%s%N)
  "$GEN" --size "$bytes" --mix "$mix" --manifest "$log.manifest.tmp" "$log.tmp" 2>"$log.gen.tmp" || {
    cat "$log.gen.tmp" >&2
    rm -f "$log.tmp" "$log.gen.tmp" "$log.manifest.tmp"
    die "generator failed on mix $mix"
  }
  t1=$(date +%s%N)
  {
    echo "mix: $mix"
    echo "source: $(gen_source_id)"
  } >>"$log.gen.tmp"
  # Write it back now, or the writeback of a gigabyte of dirty pages would run
  # during the timings.
  sync "$log.tmp" 2>/dev/null || sync
  mv "$log.tmp" "$log"
  mv "$log.manifest.tmp" "$log.manifest.json"
  mv "$log.gen.tmp" "$log.gen.txt"
  printf 'done in %s s\n' "$(awk -v n=$((t1 - t0)) 'BEGIN { printf "%.1f", n / 1e9 }')" >&2
}

# Read the file so that every command sees it in the page cache. How the
# cache holds it matters to a reader that maps the file, as rg does: pages
# cached while the generator wrote the log cost rg about three times as many
# page faults as pages read in again after the cache was dropped (0.18 s
# against 0.06 s on 256 MiB here). With --drop-caches (as root) the log is
# re-read from a dropped cache: rg's best case, and oomlens' worst ratio.
#
# With --as-written the log is copied first and the copy timed: its pages are
# cached as they were written, the state a training job's log is in when a
# user reads it, in which mapping a file costs the most (rg took 0.54 s on a
# GiB copied so, against 0.10 s re-read from a dropped cache).
# `warm LOG TIMED`: TIMED is LOG itself, or with --as-written the copy to make.
warm() {
  if ((as_written)); then
    cp "$1" "$2"
    sync "$2" 2>/dev/null || sync
    cat "$2" >/dev/null
    return
  fi
  if ((drop_caches)); then
    sync
    echo 3 >/proc/sys/vm/drop_caches || die "--drop-caches: cannot write /proc/sys/vm/drop_caches (not root?)"
  fi
  cat "$1" >/dev/null
  cat "$1" >/dev/null
}

median() {  # numbers on stdin -> median
  sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

now_ns() { date +%s%N; }

# Median seconds of .results[i] in hyperfine's JSON export.
hyperfine_median() {
  "$PYTHON" -c 'import json, statistics, sys
r = json.load(open(sys.argv[1]))["results"][int(sys.argv[2])]
print(r.get("median") if r.get("median") is not None else statistics.median(r["times"]))' "$1" "$2"
}

# Medians (seconds) of rg, oomlens and the peer on one log, timed side by side:
# sets t_rg, t_oom, t_py.
time_three() {
  local log=$1 q rg_cmd oom_cmd py_cmd
  q=$(printf %q "$log")
  rg_cmd="rg -c '$rg_pattern' $q"
  oom_cmd="$(printf %q "$OOMLENS") diagnose --format json $q"
  py_cmd="$(printf %q "$PYTHON") $(printf %q "$peer") $q"
  if ((have_hyperfine)); then
    # --output=pipe: no tool may take a shortcut for /dev/null (hyperfine >=
    # 1.13); -i: oomlens exits 1 when it finds an OOM, rg when it finds none.
    local output_opt=()
    if hyperfine --help 2>/dev/null | grep -q -- '--output'; then output_opt=(--output=pipe); fi
    hyperfine --style basic --warmup "$warmup" --runs "$runs" --ignore-failure "${output_opt[@]}" \
      --export-json "$tmp/hyperfine.json" -n rg "$rg_cmd" -n oomlens "$oom_cmd" -n python "$py_cmd" >&2
    t_rg=$(hyperfine_median "$tmp/hyperfine.json" 0)
    t_oom=$(hyperfine_median "$tmp/hyperfine.json" 1)
    t_py=$(hyperfine_median "$tmp/hyperfine.json" 2)
    return
  fi
  # Without hyperfine: the three in turn, `runs` rounds, medians.
  local i t0 t1 t2 t3
  for ((i = 0; i < warmup; i++)); do
    rg -c "$rg_pattern" "$log" >/dev/null || true
    "$OOMLENS" diagnose --format json "$log" >/dev/null 2>&1 || true
    "$PYTHON" "$peer" "$log" >/dev/null || true
  done
  : >"$tmp/rg.times"
  : >"$tmp/oom.times"
  : >"$tmp/py.times"
  for ((i = 0; i < runs; i++)); do
    t0=$(now_ns)
    rg -c "$rg_pattern" "$log" | cat >/dev/null || true
    t1=$(now_ns)
    "$OOMLENS" diagnose --format json "$log" 2>/dev/null | cat >/dev/null || true
    t2=$(now_ns)
    "$PYTHON" "$peer" "$log" | cat >/dev/null || true
    t3=$(now_ns)
    echo "$((t1 - t0))e-9" >>"$tmp/rg.times"
    echo "$((t2 - t1))e-9" >>"$tmp/oom.times"
    echo "$((t3 - t2))e-9" >>"$tmp/py.times"
  done
  t_rg=$(median <"$tmp/rg.times")
  t_oom=$(median <"$tmp/oom.times")
  t_py=$(median <"$tmp/py.times")
}

# One `oomlens diagnose --format json LOG` for its peak RSS (KiB) and its
# JSON: sets rss_kib, oom_code; the JSON is left in $tmp/out.json.
measure_oomlens() {
  local log=$1
  oom_code=0
  if ((have_gnu_time)); then
    /usr/bin/time -f %M -o "$tmp/rss" "$OOMLENS" diagnose --format json "$log" >"$tmp/out.json" 2>"$tmp/err" || oom_code=$?
    rss_kib=$(tail -n 1 "$tmp/rss")
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
  fi
  [[ $rss_kib =~ ^[0-9]+$ ]] || rss_kib=0
}

# ---------------------------------------------------------------- run

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; ((as_written)) && rm -f bench/data/as-written-*.log; true' EXIT
failed=0
tag=$(size_tag "$size")

mkdir -p bench/results
stamp=$(date +%Y-%m-%d-%H%M%S)
results=bench/results/matrix-$stamp.txt
rows_tsv=bench/results/matrix-$stamp.tsv
exec > >(tee "$results") 2>&1
tee_pid=$!

echo "== oomlens diagnose over the content matrix: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
echo "machine:   $(hostname) | $(uname -srm) | $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) | $(nproc) CPUs | $(awk '/^MemTotal/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
echo "commit:    $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null | grep -q . && echo ' (with uncommitted changes)')"
echo "oomlens:   $OOMLENS ($("$OOMLENS" --version 2>/dev/null | head -n 1 || true))"
echo "ripgrep:   $(rg --version 2>/dev/null | head -n 1); pattern '$rg_pattern'"
echo "python:    $("$PYTHON" --version 2>&1) running bench/python_peer.py"
if ((have_hyperfine)); then
  echo "timing:    $(hyperfine --version), $warmup warmup + $runs runs of each command per log, side by side, medians"
else
  echo "timing:    bash loop (hyperfine not installed: apt-get install hyperfine), $warmup warmup + $runs rounds of the three commands in turn, medians"
fi
echo "memory:    $( ((have_gnu_time)) && echo "GNU time %M" || echo "VmHWM polled from /proc (apt-get install time for an exact figure)")"
echo "logs:      $(human "$size") each: ${mixes[*]}"
if ((as_written)); then echo "cache:     a fresh copy of each log, cached as written (--as-written)"
elif ((drop_caches)); then echo "cache:     each log re-read after the page cache was dropped (--drop-caches)"
else echo "cache:     each log as the page cache holds it now (read twice first)"; fi
echo "results:   $results (rows also in $rows_tsv)"
echo

printf 'mix\toomlens_s\trg_s\tpython_s\toomlens_rg\tpython_oomlens\trss_mib\tincidents_found\tincidents_planted\tmessages\tlines_not_planted\tplanted_missed\tfindings\n' >"$rows_tsv"
rows=()
details=()
for mix in "${mixes[@]}"; do
  log=bench/data/matrix-$mix-$tag.log
  ensure_log "$mix" "$size" "$log"

  # The ground truth must be true before anything is measured against it.
  verify_args=()
  ((verify_full)) && verify_args=(--full)
  if ! check_line=$("$PYTHON" "$check" verify "$log" "$log.manifest.json" "${verify_args[@]}"); then
    printf 'ERROR: %s does not match its manifest:\n%s\n' "$log" "$check_line"
    failed=1
    continue
  fi

  timed=$log
  ((as_written)) && timed=bench/data/as-written-$tag.log
  warm "$log" "$timed"
  echo "-- $mix: timing rg, oomlens and the Python peer on $timed" >&2
  time_three "$timed"
  measure_oomlens "$timed"
  ((as_written)) && rm -f "$timed"
  status=""
  if ((oom_code > 1)); then
    status="oomlens exited $oom_code"
    printf 'ERROR: oomlens exited %s on %s; stderr:\n' "$oom_code" "$log"
    head -n 20 "$tmp/err"
    failed=1
  fi
  if ! "$PYTHON" "$peer" "$log" >"$tmp/peer.json" 2>"$tmp/peer.err"; then
    status="${status:+$status, }python peer failed"
    printf 'ERROR: the Python peer failed on %s:\n' "$log"
    head -n 20 "$tmp/peer.err"
    failed=1
  fi
  cmp_tsv=$("$PYTHON" "$check" compare "$log.manifest.json" "$tmp/out.json" --tsv 2>/dev/null) || cmp_tsv=""
  cmp_text=$("$PYTHON" "$check" compare "$log.manifest.json" "$tmp/out.json" 2>/dev/null) || cmp_text="(oomlens' JSON could not be read)"
  IFS=$'\t' read -r found planted messages wrong missed findings _ _ <<<"${cmp_tsv:-n/a	n/a	n/a	n/a	n/a	n/a	n/a	n/a}"
  peer_lines=$("$PYTHON" -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$tmp/peer.json" 2>/dev/null || echo n/a)
  rg_lines=$(rg -c "$rg_pattern" "$log" || echo 0)

  row=$(awk -v m="$mix" -v o="$t_oom" -v r="$t_rg" -v p="$t_py" -v k="$rss_kib" -v f="$found" -v pl="$planted" \
    -v w="$wrong" -v mi="$missed" -v st="$status" 'BEGIN {
      lines = (w == "n/a") ? "n/a" : (w + mi == 0 ? "all match" : w " wrong, " mi " missed")
      printf "%-14s %9.1f %9.1f %9.2f %7.2fx %7.1fx %8.1f %9s %s%s\n", m, o * 1000, r * 1000, p, o / r, p / o, k / 1024,
        f "/" pl, lines, (st == "" ? "" : "  [" st "]") }')
  rows+=("$row")
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$mix" "$t_oom" "$t_rg" "$t_py" \
    "$(awk -v o="$t_oom" -v r="$t_rg" 'BEGIN { printf "%.3f", o / r }')" \
    "$(awk -v o="$t_oom" -v p="$t_py" 'BEGIN { printf "%.2f", p / o }')" \
    "$(awk -v k="$rss_kib" 'BEGIN { printf "%.1f", k / 1024 }')" \
    "$found" "$planted" "$messages" "$wrong" "$missed" "$findings" >>"$rows_tsv"
  details+=("== $mix ($log)
$(sed -n 's/^gen_training_log: //p' "$log.gen.txt")
$check_line
rg counts $rg_lines lines; the Python peer $peer_lines lines; oomlens:
  ${cmp_text//$'\n'/$'\n'  }")
  echo "-- $mix: $row" >&2

  if ((clean)); then rm -f "$log" "$log.gen.txt" "$log.manifest.json"; fi
done

echo
echo "== details"
for d in "${details[@]}"; do
  printf '%s\n\n' "$d"
done

echo "== results ($(human "$size") logs, warm page cache; medians of $runs runs; times in ms, python in s)"
printf '%-14s %9s %9s %9s %8s %8s %8s %9s %s\n' mix oomlens rg python oom/rg py/oom 'RSS MiB' incidents 'lines (vs manifest)'
for r in "${rows[@]}"; do printf '%s\n' "$r"; done
echo

if ((${#rows[@]})); then
  # The goals hold for the slowest log: print the worst of each, the ratio last.
  awk -F'\t' -v g="$ratio_goal" -v pg="$peer_goal" -v b="$budget_kib" 'NR > 1 {
      if ($5 > worst) { worst = $5; wmix = $1 }
      if (pmin == "" || $6 < pmin) { pmin = $6; pmix = $1 }
      if ($7 > rss) { rss = $7; rmix = $1 }
      if ($11 != "n/a") bad += $11 + $12
    }
    END {
      printf "peak RSS, worst:        %.1f MiB on %s (budget %d MiB: %s)\n", rss, rmix, b / 1024, (rss * 1024 < b ? "OK" : "OVER")
      printf "python/oomlens, worst:  %.1fx on %s (goal >= %dx: %s)\n", pmin, pmix, pg, (pmin >= pg ? "met" : "NOT met")
      printf "incident lines vs grep -n: %d wrong or missed over all logs\n", bad
      printf "oomlens/rg, worst:      %.2fx on %s (goal <= %.1fx: %s)\n", worst, wmix, g, (worst <= g ? "within" : "NOT within")
    }' "$rows_tsv"
fi
exec >&- 2>&-
wait "$tee_pid" 2>/dev/null || true
exit "$failed"
