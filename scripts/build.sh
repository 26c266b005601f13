#!/usr/bin/env bash
# Configures and builds oomlens (Release, Ninja) into build/. Used by run.sh and test.sh.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
cmake -S "$root" -B "$root/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOOMLENS_WERROR=ON >/dev/null
cmake --build "$root/build" --parallel "$(nproc)"
