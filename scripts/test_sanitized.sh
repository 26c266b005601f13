#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer into
# build-asan/ and runs the whole ctest suite there (unit, goldens, CLI and
# LSP end-to-end, endurance, hostile inputs). Any sanitizer report fails the
# test that triggered it: UBSan halts on the first error, ASan (and its leak
# checker) exit non-zero.
#   scripts/test_sanitized.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
start=$SECONDS
# RelWithDebInfo: the reports name lines; -O2 keeps the suite's run time near the normal build's.
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOOMLENS_WERROR=ON \
  -DOOMLENS_SANITIZE=ON >/dev/null
cmake --build "$root/build-asan" --parallel "$(nproc)"
built=$SECONDS
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:detect_stack_use_after_return=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$root/build-asan"
ctest --output-on-failure --parallel "$(nproc)"
echo "sanitized build: $((built - start)) s, tests: $((SECONDS - built)) s"
