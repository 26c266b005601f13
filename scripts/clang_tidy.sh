#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy) over the project's own sources
# with the compile commands of a configured build (default build/), in
# parallel; any finding fails.   scripts/clang_tidy.sh [BUILD_DIR] [FILE...]
# The build must have generated its headers first (any build of oomlens does).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
jobs=${CLANG_TIDY_JOBS:-$(nproc)}
if [ ! -f "$build/compile_commands.json" ]; then
  echo "clang_tidy.sh: $build/compile_commands.json is missing: configure the build first (scripts/build.sh)" >&2
  exit 2
fi
if (($#)); then
  files=("$@")
else
  # Production code only: third_party/ is not ours, generated files come from
  # templates, and tests/, bench/ and fuzz/ are left to the compiler's warnings.
  mapfile -t files < <(cd "$root" && git ls-files 'analyzer/*.cpp' 'rules/*.cpp' 'report/*.cpp' 'cli/*.cpp' 'lsp/*.cpp' |
    sed "s|^|$root/|")
fi
start=$SECONDS
printf '%s\n' "${files[@]}" |
  xargs -P "$jobs" -n 4 clang-tidy -p "$build" --quiet 2> >(grep -v "warnings generated\|Suppressed .* warnings\|Use -header-filter\|NOLINT" >&2)
echo "clang-tidy: ${#files[@]} files clean in $((SECONDS - start)) s"
