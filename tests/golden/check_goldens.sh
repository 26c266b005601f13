#!/usr/bin/env bash
# Golden tests: runs the real binary on every fixture log (and on every job
# directory under logs/jobs/) and compares its JSON and text output with the
# expected files beside the log (or the directory); and `oomlens lint` on the
# fixture scripts and configuration files that have an expected NAME.lint.txt,
# and on the fixture projects (directories of scripts importing each other).
#   check_goldens.sh FIXTURES_DIR            compare (CI)
#   check_goldens.sh FIXTURES_DIR --update   rewrite the expected files; review the diff like code
set -u
fixtures=${1:?usage: check_goldens.sh FIXTURES_DIR [--update]}
update=${2:-}
oomlens=$(realpath "${OOMLENS:?set OOMLENS to the oomlens binary}")
cd "$fixtures/logs" || exit 2

pass=0 fail=0
for log in *.log; do
  name=${log%.log}
  json_out=$("$oomlens" diagnose --format json "$log"); json_status=$?
  text_out=$("$oomlens" diagnose --color never "$log"); text_status=$?
  # Exit status contract: 1 when an incident was found, 0 when none, never 2 here.
  if grep -q '"incidents": \[\]' <<<"$json_out"; then want=0; else want=1; fi
  status_ok=1
  if [ "$json_status" != "$want" ] || [ "$text_status" != "$want" ]; then status_ok=0; fi
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$json_out" >"$name.json"
    printf '%s\n' "$text_out" >"$name.txt"
  fi
  if [ "$status_ok" = 1 ] && diff -u "$name.json" <(printf '%s\n' "$json_out") >/dev/null &&
     diff -u "$name.txt" <(printf '%s\n' "$text_out") >/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $log (exit json=$json_status text=$text_status, expected $want)"
    diff -u "$name.json" <(printf '%s\n' "$json_out") | head -40
    diff -u "$name.txt" <(printf '%s\n' "$text_out") | head -40
  fi
done
# One job's files in a directory (jobs/NAME/, read as `oomlens diagnose jobs/NAME`),
# with jobs/NAME.json and jobs/NAME.txt beside it.
for dir in jobs/*/; do
  [ -d "$dir" ] || continue
  dir=${dir%/}
  json_out=$("$oomlens" diagnose --format json "$dir"); json_status=$?
  text_out=$("$oomlens" diagnose --color never "$dir"); text_status=$?
  if grep -q '"incidents": \[\]' <<<"$json_out"; then want=0; else want=1; fi
  status_ok=1
  if [ "$json_status" != "$want" ] || [ "$text_status" != "$want" ]; then status_ok=0; fi
  if [ "$update" = "--update" ]; then
    printf '%s\n' "$json_out" >"$dir.json"
    printf '%s\n' "$text_out" >"$dir.txt"
  fi
  if [ "$status_ok" = 1 ] && diff -u "$dir.json" <(printf '%s\n' "$json_out") >/dev/null &&
     diff -u "$dir.txt" <(printf '%s\n' "$text_out") >/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $dir/ (exit json=$json_status text=$text_status, expected $want)"
    diff -u "$dir.json" <(printf '%s\n' "$json_out") | head -40
    diff -u "$dir.txt" <(printf '%s\n' "$text_out") | head -40
  fi
done
# `oomlens lint FILE` (run from FILE's directory) against EXPECTED; exit 1
# when it printed something, 0 when nothing.
check_lint_golden() {  # check_lint_golden FILE EXPECTED LABEL
  local out status want
  out=$("$oomlens" lint "$1" 2>/dev/null); status=$?  # the summary line goes to stderr
  if [ -n "$out" ]; then want=1; else want=0; fi
  if [ "$update" = "--update" ]; then printf '%s\n' "$out" >"$2"; fi
  if [ "$status" = "$want" ] && diff -u "$2" <(printf '%s\n' "$out") >/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $3 (exit $status, expected $want)"
    diff -u "$2" <(printf '%s\n' "$out") | head -40
  fi
}
# A script's lint output (scripts/NAME.py, read as `oomlens lint NAME.py` from
# scripts/), for the scripts with scripts/NAME.lint.txt beside them: one per
# source rule at least, so every rule has a golden that names it.
cd ../scripts || exit 2
for expected in *.lint.txt; do
  [ -e "$expected" ] || continue
  check_lint_golden "${expected%.lint.txt}.py" "$expected" "scripts/${expected%.lint.txt}.py"
done
# The files that set the allocator (config/NAME: Dockerfiles, SLURM scripts,
# YAML...), with config/NAME.lint.txt beside them.
cd ../config || exit 2
for expected in *.lint.txt .*.lint.txt; do
  [ -e "$expected" ] || continue
  check_lint_golden "${expected%.lint.txt}" "$expected" "config/${expected%.lint.txt}"
done
# Notebooks (notebooks/NAME.ipynb with notebooks/NAME.ipynb.lint.txt beside it).
cd ../notebooks || exit 2
for expected in *.lint.txt; do
  [ -e "$expected" ] || continue
  check_lint_golden "${expected%.lint.txt}" "$expected" "notebooks/${expected%.lint.txt}"
done
# Projects (projects/NAME/, read as `oomlens lint NAME` from projects/): scripts
# that import each other, with projects/NAME.lint.txt, NAME.lint.json and
# NAME.lint.sarif.json beside.
cd ../projects || exit 2
# An output against its expected file (rewritten with --update).
check_output_golden() {  # check_output_golden OUTPUT EXPECTED LABEL
  if [ "$update" = "--update" ]; then printf '%s\n' "$1" >"$2"; fi
  if diff -u "$2" <(printf '%s\n' "$1") >/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL $3"
    diff -u "$2" <(printf '%s\n' "$1") | head -40
  fi
}
for expected in *.lint.txt; do
  [ -e "$expected" ] || continue
  dir=${expected%.lint.txt}
  check_lint_golden "$dir" "$expected" "projects/$dir/"
  check_output_golden "$("$oomlens" lint --format json "$dir" 2>/dev/null)" "$dir.lint.json" \
    "projects/$dir/ (--format json)"
  # SARIF: the results (with their related locations in the other files);
  # the rest of the run is the tool's version and rule catalogue.
  check_output_golden "$("$oomlens" lint --format sarif "$dir" 2>/dev/null | python3 -c \
    'import json, sys; print(json.dumps(json.load(sys.stdin)["runs"][0]["results"], indent=2, ensure_ascii=False))')" \
    "$dir.lint.sarif.json" "projects/$dir/ (--format sarif)"
done
echo "golden: $pass passed, $fail failed"
[ "$fail" = 0 ]
