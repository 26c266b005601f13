#!/usr/bin/env bash
# Fetches the tree-sitter-python grammar (generated C sources) from the npm
# registry into third_party/tree-sitter-python/, pinned to one version and
# checked against the registry's sha512 integrity before anything is extracted.
# The grammar is compiled into oomlens (cmake/tree_sitter_python.cmake) and
# never committed: third_party/ is git-ignored.
#
# Idempotent and offline-safe: once the files are there with a stamp naming
# the verified integrity, it does nothing. Set OOMLENS_TS_PYTHON_DIR to
# extract somewhere else (tests of this script do).
set -euo pipefail

version=0.21.0   # ABI 14: loads in Debian's libtree-sitter 0.20.7
integrity="sha512-IUKx7JcTVbByUx1iHGFS/QsIjx7pqwTMHL9bl/NGyhyyydbfNrpruo2C7W6V4KZrbkkCOlX8QVrCoGOFW5qecg=="

root=$(cd "$(dirname "$0")/.." && pwd)
dest=${OOMLENS_TS_PYTHON_DIR:-$root/third_party/tree-sitter-python}
stamp="$dest/.integrity"
wanted=(src/parser.c src/scanner.c src/tree_sitter/parser.h LICENSE)

complete() {
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "tree-sitter-python@$version $integrity" ] || return 1
  local f
  for f in "${wanted[@]}"; do [ -s "$dest/$f" ] || return 1; done
}

if complete; then
  exit 0
fi

command -v npm >/dev/null || { echo "fetch_tree_sitter_python: npm is needed (Debian package npm)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

echo "fetch_tree_sitter_python: downloading tree-sitter-python@$version from the npm registry" >&2
# --prefer-offline: a tarball already in npm's cache is used without asking the registry.
if ! (cd "$work" && npm pack "tree-sitter-python@$version" --ignore-scripts --prefer-offline --loglevel=error >/dev/null); then
  echo "fetch_tree_sitter_python: npm pack failed (no network, and not in npm's cache?)" >&2
  exit 1
fi
tarball="$work/tree-sitter-python-$version.tgz"
[ -f "$tarball" ] || { echo "fetch_tree_sitter_python: npm pack produced no $tarball" >&2; exit 1; }

actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$integrity" ]; then
  {
    echo "fetch_tree_sitter_python: INTEGRITY MISMATCH for tree-sitter-python@$version"
    echo "  expected $integrity"
    echo "  got      $actual"
    echo "  refusing to use it."
  } >&2
  exit 1
fi

# Extract only the C sources (and the licence that ships with them) into a
# fresh folder, then swap it in, so an interrupted run leaves no half state.
tar -xzf "$tarball" -C "$work" --wildcards \
  package/src/parser.c package/src/scanner.c 'package/src/tree_sitter/*.h' package/LICENSE
for f in "${wanted[@]}"; do
  [ -s "$work/package/$f" ] || { echo "fetch_tree_sitter_python: $f missing from the tarball" >&2; exit 1; }
done
echo "tree-sitter-python@$version $integrity" >"$work/package/.integrity"

mkdir -p "$(dirname "$dest")"
rm -rf "$dest.tmp"
mv "$work/package" "$dest.tmp"
rm -rf "$dest"
mv "$dest.tmp" "$dest"
echo "fetch_tree_sitter_python: verified and extracted into $dest" >&2
