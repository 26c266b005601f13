#!/usr/bin/env bash
# Builds and tests the VS Code extension (vscode-extension/): npm ci, lint,
# typecheck, unit tests, bundle, integration test against build/oomlens,
# .vsix package (bundling build/oomlens), then the extension in a real VS Code
# (code-server in headless Chromium). Called by scripts/test.sh after ctest.
#   OOMLENS_BIN=PATH             the binary to test and bundle (default build/oomlens, built if missing)
#   OOMLENS_SKIP_BROWSER_TEST=1  skips the code-server test (local quick runs)
# Artifacts (screenshots, code-server log, results): build/ci-artifacts/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ext="$root/vscode-extension"
artifacts="$root/build/ci-artifacts"
mkdir -p "$artifacts"

step_start=$SECONDS
timings=()
step() {
  local now=$SECONDS
  [ -n "${current_step:-}" ] && timings+=("$(printf '%-22s %4ds' "$current_step" $((now - step_start)))")
  current_step=$1
  step_start=$now
  echo "== test_extension: $1" >&2
}

# Node 20 fetched by scripts/setup.sh on machines whose own Node is older.
[ -x "$root/.cache/node20/bin/node" ] && export PATH="$root/.cache/node20/bin:$PATH"

binary=${OOMLENS_BIN:-$root/build/oomlens}
if [ ! -x "$binary" ]; then
  [ -z "${OOMLENS_BIN:-}" ] || { echo "test_extension: OOMLENS_BIN=$OOMLENS_BIN is not an executable" >&2; exit 1; }
  "$root/scripts/build.sh"
fi

cd "$ext"
step "npm ci"
npm ci --no-audit --no-fund --loglevel=error
step "lint"
npm run -s lint
step "typecheck"
npm run -s typecheck
step "unit tests"
npm run -s test:unit
step "bundle"
npm run -s bundle
step "integration test"
OOMLENS_BIN="$binary" npm run -s test:integration

step "package"
# A per-platform package with the binary inside: the extension finds it
# without settings (binary discovery: setting, bundled, PATH).
rm -rf bin && mkdir -p bin && cp "$binary" bin/oomlens
vsix="$ext/oomlens-linux-x64-0.1.0.vsix"
rm -f "$vsix"
npx vsce package --no-dependencies --skip-license --allow-missing-repository --target linux-x64 -o "$vsix"
cp "$vsix" "$artifacts/"

if [ "${OOMLENS_SKIP_BROWSER_TEST:-0}" != 1 ]; then
  step "code-server install"
  code_server=$("$root/tests/editors/code_server/install_code_server.sh" "$root/.cache/code-server")
  step "code-server test"
  [ -x /usr/bin/chromium ] || { echo "test_extension: Debian chromium is needed (scripts/setup.sh installs it)" >&2; exit 1; }
  node "$root/tests/editors/code_server/run_test.mjs" --code-server "$code_server" --vsix "$vsix" --artifacts "$artifacts"
fi
step "done"
printf '%s\n' "test_extension: timings" "${timings[@]}" >&2
