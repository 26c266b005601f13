#!/usr/bin/env bash
# Builds oomlens and runs every test: unit, golden fixtures, end-to-end.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh"
cd "$root/build"
ctest --output-on-failure --parallel "$(nproc)"
"$root/scripts/test_extension.sh"
