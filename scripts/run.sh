#!/usr/bin/env bash
# Builds oomlens and diagnoses the given logs, or the bundled example log.
#   scripts/run.sh [oomlens diagnose arguments...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" >&2
if [ $# -eq 0 ]; then
  set -- "$root/examples/multirank-fragmentation.log"
  echo "(no log given: diagnosing the bundled example $1)" >&2
fi
status=0
"$root/build/oomlens" diagnose "$@" || status=$?
# 1 means "found an OOM", which is the point of the example, not a failure.
[ "$status" -le 1 ] || exit "$status"
