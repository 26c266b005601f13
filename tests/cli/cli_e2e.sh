#!/usr/bin/env bash
# End-to-end tests of the command line: the real binary, real files, real pipes.
set -u
fixtures=${1:?usage: cli_e2e.sh FIXTURES_DIR}
source "$(dirname "$0")/e2e_lib.sh"

oom_log=$(ls "$fixtures"/logs/*.log | head -1)
for f in "$fixtures"/logs/*.log; do
  if "$oomlens" diagnose --format json "$f" | grep -q '"class": "fragmentation"'; then oom_log=$f; break; fi
done
clean_log="$tmp/clean.log"
printf 'epoch 1 loss 0.5\nepoch 2 loss 0.4\n' >"$clean_log"

run --version
check "version prints name and number" eval '[ $status = 0 ] && has "$out" "oomlens 0."'
run --help
check "help lists diagnose and explain" eval '[ $status = 0 ] && has "$out" "diagnose" && has "$out" "explain"'
run diagnose --help
check "diagnose --help documents exit status" eval '[ $status = 0 ] && has "$out" "Exit status"'
run
check "no command is a usage error" eval '[ $status = 2 ]'
run frobnicate
check "unknown command names it" eval '[ $status = 2 ] && has "$err" "unknown command '"'"'frobnicate'"'"'"'

run diagnose "$tmp/does-not-exist.log"
check "missing file: exit 2, names file and reason" eval '[ $status = 2 ] && has "$err" "does-not-exist.log" && has "$err" "No such file"'
# Directories are walked as ripgrep walks them.
walk="$tmp/walk"
mkdir -p "$walk/sub" "$walk/.hidden" "$walk/skipme"
cp "$oom_log" "$walk/a.log"
cp "$clean_log" "$walk/sub/b.log"
cp "$oom_log" "$walk/.hidden/c.log"
cp "$oom_log" "$walk/.secret.log"
cp "$oom_log" "$walk/skipme/d.log"
cp "$oom_log" "$walk/e.tmp"
printf 'skipme/\n*.tmp\n' >"$walk/.ignore"
{ printf 'binary\0header\n'; cat "$oom_log"; } >"$walk/blob.log"
ln -s "$walk/a.log" "$walk/link.log"
ln -s .. "$walk/sub/loop"
run diagnose --format json "$walk"
check "directory: exit 1, its OOM found" eval '[ $status = 1 ] && has "$out" "\"path\": \"$walk/a.log\""'
check "directory: nested file read" eval 'has "$out" "\"path\": \"$walk/sub/b.log\""'
check "directory: hidden, ignored, binary and linked files skipped" eval '! has "$out" "c.log" && ! has "$out" ".secret.log" && ! has "$out" "d.log" && ! has "$out" "e.tmp" && ! has "$out" "blob.log" && ! has "$out" "link.log"'
check "directory: symlink loop is not followed" eval '! has "$out" "sub/loop/"'
out2=$("$oomlens" diagnose --format json "$walk" 2>/dev/null)
check "directory: same order every time" eval '[ "$out" = "$out2" ]'
run diagnose "$tmp/no-such-dir/"
check "missing directory: exit 2, names it and the reason" eval '[ $status = 2 ] && has "$err" "no-such-dir" && has "$err" "No such file"'
mkdir -p "$tmp/empty"
run diagnose "$tmp/empty"
check "empty directory: exit 2, says so" eval '[ $status = 2 ] && has "$err" "no files to read" && has "$err" "empty"'
if [ "$(id -u)" != 0 ]; then
  mkdir -p "$walk/locked"; chmod 000 "$walk/locked"
  run diagnose --format json "$walk"
  check "unreadable subdirectory: exit 2, named, others still read" eval '[ $status = 2 ] && has "$err" "locked" && has "$err" "Permission denied" && has "$out" "a.log"'
  chmod 700 "$walk/locked"
fi
run diagnose --format json "$fixtures/logs/jobs/rank_files"
check "job directory: one incident across the per-rank files" eval '[ $status = 1 ] && [ $(grep -c "\"rule\": \"OOM10" <<<"$out") = 1 ] && has "$out" "\"first_failing\": 3"'
run diagnose "$fixtures/logs/jobs/rank_files/rank3.log" "$fixtures/logs/jobs/rank_files/rank0.log"
check "per-rank files named one by one are one job too" eval '[ $status = 1 ] && has "$out" "1 GPU out-of-memory incident" && has "$out" "rank0.log:"'
if [ "$(id -u)" != 0 ]; then
  printf 'x\n' >"$tmp/locked.log"; chmod 000 "$tmp/locked.log"
  run diagnose "$tmp/locked.log"
  check "unreadable file: exit 2" eval '[ $status = 2 ] && has "$err" "Permission denied"'
fi
run diagnose --format yaml "$clean_log"
check "bad format value: exit 2" eval '[ $status = 2 ] && has "$err" "yaml"'
run diagnose --bogus "$clean_log"
check "unknown option: exit 2" eval '[ $status = 2 ] && has "$err" "--bogus"'

run diagnose "$clean_log"
check "clean log: exit 0 and says nothing found" eval '[ $status = 0 ] && has "$out" "No GPU out-of-memory failure"'
run diagnose --color never "$oom_log"
check "OOM log: exit 1, rule code, verify command" eval '[ $status = 1 ] && has "$out" "error[OOM101]" && has "$out" "verify:"'
check "color never: no escape codes" eval '! grep -q $'"'"'\x1b'"'"' <<<"$out"'
run diagnose --color always "$oom_log"
check "color always: escape codes" eval 'grep -q $'"'"'\x1b\['"'"' <<<"$out"'

out=$("$oomlens" diagnose --format json - <"$oom_log"); status=$?
check "stdin via -: exit 1 and JSON" eval '[ $status = 1 ] && has "$out" "\"incidents\""'
out=$(cat "$oom_log" | "$oomlens" diagnose --format json); status=$?
check "stdin pipe without arguments" eval '[ $status = 1 ] && has "$out" "\"class\": \"fragmentation\""'
out=$("$oomlens" diagnose --format json "$clean_log" "$oom_log" 2>/dev/null); status=$?
check "several files: exit 1 when any has an OOM" eval '[ $status = 1 ] && has "$out" "clean.log"'
out=$("$oomlens" diagnose "$oom_log" "$tmp/missing.log" 2>"$tmp/err"); status=$?
check "one missing among several: exit 2, others still reported" eval '[ $status = 2 ] && has "$out" "OOM101" && has "$(cat $tmp/err)" "missing.log"'

run diagnose --format sarif "$oom_log"
check "sarif: version and rule id" eval 'has "$out" "\"version\": \"2.1.0\"" && has "$out" "\"ruleId\": \"OOM101\""'

printf 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free. Of the allocated memory 40.00 GiB is allocated by PyTorch, and 30.00 GiB is reserved by PyTorch but unallocated. \xff\xfe bad bytes\n' >"$tmp/badutf8.log"
run diagnose --format json "$tmp/badutf8.log"
check "invalid UTF-8 still gives JSON" eval '[ $status = 1 ] && has "$out" "\"requested_bytes\": 2147483648"'
head -c 3000000 /dev/urandom >"$tmp/random.bin"
run diagnose "$tmp/random.bin"
check "random bytes: no crash" eval '[ $status = 0 ] || [ $status = 1 ]'
: >"$tmp/empty.log"
run diagnose "$tmp/empty.log"
check "empty file: exit 0" eval '[ $status = 0 ] && has "$out" "0 lines"'

run explain OOM101
check "explain prints the doc page" eval '[ $status = 0 ] && has "$out" "# OOM101"'
run explain allocator-fragmentation
check "explain by name" eval '[ $status = 0 ] && has "$out" "OOM101"'
run explain OOM999
check "explain unknown code: exit 2" eval '[ $status = 2 ] && has "$err" "OOM999"'
run explain --list
check "explain --list lists every rule" eval '[ $status = 0 ] && [ $(wc -l <<<"$out") -ge 11 ]'

# The same argument rules on every command (one parser, CLI11).
for cmd in diagnose lint snapshot explain lsp; do
  run "$cmd" --help
  check "$cmd --help: exit 0, usage on stdout" eval '[ $status = 0 ] && has "$out" "Usage: oomlens $cmd"'
done
run help snapshot
check "help COMMAND is COMMAND --help" eval '[ $status = 0 ] && has "$out" "Usage: oomlens snapshot"'
script="$fixtures/scripts/empty_cache_in_loop.py"
snapshot=$(ls "$fixtures"/snapshots/*.pickle | head -1)
for args in "diagnose|$oom_log" "lint|$script" "snapshot|$snapshot"; do
  cmd=${args%%|*} file=${args#*|}
  run "$cmd" --format=json "$file"
  joined=$out
  run "$cmd" --format json "$file"
  check "$cmd --format=json is --format json" eval '[ $status != 2 ] && [ "$joined" = "$out" ] && python3 -c "import json,sys; json.loads(sys.stdin.read())" <<<"$out"'
  run "$cmd" --frobnicate "$file"
  check "$cmd: an unknown option is named, exit 2" eval '[ $status = 2 ] && has "$err" "oomlens $cmd: error: unknown option '"'"'--frobnicate'"'"'"'
  run "$cmd" --format=yaml "$file"
  check "$cmd: a bad value names the option and the value" eval '[ $status = 2 ] && has "$err" "--format" && has "$err" "yaml"'
done
run explain --frobnicate
check "explain: an unknown option is named, exit 2" eval '[ $status = 2 ] && has "$err" "unknown option '"'"'--frobnicate'"'"'"'
run diagnose --format
check "an option without its value is named, exit 2" eval '[ $status = 2 ] && has "$err" "--format"'
run lsp --clientProcessId=1
check "lsp: arguments clients add are named and ignored" eval '[ $status != 2 ] && has "$err" "ignoring argument '"'"'--clientProcessId=1'"'"'"'
cp "$oom_log" "$tmp/-dash.log"
(cd "$tmp" && "$oomlens" diagnose --format json -- -dash.log >"$tmp/out" 2>"$tmp/err"); status=$?
check "after --, a name that starts with - is a file" eval '[ $status = 1 ] && has "$(cat $tmp/out)" "\"path\": \"-dash.log\""'

echo "cli e2e: $pass passed, $fail failed"
[ "$fail" = 0 ]
