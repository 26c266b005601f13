#!/usr/bin/env bash
# Configures and builds oomlens (Release, Ninja) into build/. Used by run.sh and test.sh.
#   scripts/build.sh            everything: the binary, the tests, the benchmark tools
#   scripts/build.sh TARGET...  only those targets (run.sh builds only `oomlens`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOOMLENS_WERROR=ON >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$root/build" --parallel "$(nproc)" "${targets[@]}"
