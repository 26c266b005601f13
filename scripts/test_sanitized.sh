#!/usr/bin/env bash
# Builds oomlens, its tests and the fuzz targets with AddressSanitizer +
# UndefinedBehaviorSanitizer into build-asan/ (scripts/build_sanitized.sh) and
# runs the whole ctest suite there (unit, goldens, CLI and LSP end-to-end,
# endurance, hostile inputs, the fuzzers' regression inputs). Any sanitizer
# report fails the test that triggered it: UBSan and ASan halt on the first
# error, the leak checker exits non-zero.
#   scripts/test_sanitized.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
# Not the benchmark tools: nothing runs them here.
"$root/scripts/build_sanitized.sh" oomlens oomlens_tests fuzzers
built=$SECONDS
# The tests start oomlens as a child process: the options reach it through the environment.
export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$root/build-asan"
ctest --output-on-failure --parallel "$(nproc)"
echo "sanitized build: $((built - start)) s, tests: $((SECONDS - built)) s"
