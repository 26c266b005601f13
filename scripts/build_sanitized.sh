#!/usr/bin/env bash
# Configures build-asan/ (clang, AddressSanitizer + UndefinedBehaviorSanitizer,
# with the fuzz targets) and builds the given targets there.
#   scripts/build_sanitized.sh TARGET...
# One build serves both scripts/test_sanitized.sh and scripts/fuzz.sh: the
# fuzzers need clang and every library instrumented for coverage, and a
# second instrumented build of the whole project would double CI's longest
# stage. -O1 with line tables only keeps that build short; reports still
# name file and line. For a local cache, export CMAKE_CXX_COMPILER_LAUNCHER=ccache
# before the first configure (CMake reads it from the environment).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build-asan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only -DNDEBUG" -DCMAKE_CXX_COMPILER=clang++ \
  -DOOMLENS_SANITIZE=ON -DOOMLENS_FUZZ=ON >/dev/null
cmake --build "$root/build-asan" --parallel "$(nproc)" --target "$@"
