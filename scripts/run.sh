#!/usr/bin/env bash
# Builds oomlens, then diagnoses the given logs, or the bundled example log.
#   scripts/run.sh [oomlens diagnose arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" oomlens >&2  # the binary only, not the test suite
if [ $# -gt 0 ]; then
  exec "$root/build/oomlens" diagnose "$@"
fi
example="$root/fixtures/logs/torchrun_4ranks_rank2_first.log"
echo "(no log given: diagnosing the bundled example $example)" >&2
status=0
"$root/build/oomlens" diagnose "$example" || status=$?
# 1 means "found an OOM": for the example that is the point, not a failure.
[ "$status" -le 1 ]
