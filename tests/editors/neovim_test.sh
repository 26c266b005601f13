#!/usr/bin/env bash
# Real-client test: headless Neovim (Debian `neovim`, installed by
# scripts/setup.sh) attaches `oomlens lsp` to a fixture log and checks the
# diagnostics, code action titles and hover it receives, edits the buffer and
# shuts the server down (see neovim_lsp_test.lua).
#
#   tests/editors/neovim_test.sh OOMLENS_BINARY FIXTURES_DIR
#
# Prints Neovim's JSON summary; exits non-zero on any failure.
set -uo pipefail

if (($# != 2)); then
  echo "usage: $0 OOMLENS_BINARY FIXTURES_DIR" >&2
  exit 2
fi
oomlens=$(realpath "$1")
fixtures=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)

if ! command -v nvim >/dev/null; then
  echo "neovim_test: nvim is not installed (scripts/setup.sh installs the Debian package neovim)" >&2
  exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Neovim writes lsp.log, shada and swap files under these: keep them out of $HOME.
export XDG_CONFIG_HOME="$tmp/config" XDG_DATA_HOME="$tmp/data" XDG_CACHE_HOME="$tmp/cache" XDG_STATE_HOME="$tmp/state"
# The log is edited in the buffer (never saved); a copy keeps the fixture safe anyway.
cp "$fixtures/logs/pytorch26_fragmentation.log" "$tmp/train.log"
cp "$fixtures/scripts/empty_cache_in_loop.py" "$tmp/train.py"

OOMLENS="$oomlens" OOMLENS_LOG="$tmp/train.log" OOMLENS_SCRIPT="$tmp/train.py" \
  OOMLENS_SCRIPT_FIXED="$fixtures/scripts/empty_cache_in_loop.fixed.py" \
  timeout 60 nvim --headless -u NONE -i NONE -n -c "luafile $here/neovim_lsp_test.lua" \
  >"$tmp/stdout" 2>"$tmp/stderr" </dev/null
status=$?

summary=$(grep -m1 '^{' "$tmp/stdout")
echo "${summary:-(no summary printed)}"
if ((status != 0)) || [[ -z $summary ]] || ! [[ $summary =~ \"ok\":\ ?true ]]; then
  echo "neovim_test: FAILED (nvim exit status $status)" >&2
  ((status == 124)) && echo "neovim_test: nvim timed out after 60 s" >&2
  echo "--- nvim output ---" >&2
  cat "$tmp/stdout" "$tmp/stderr" >&2
  if [[ -f $tmp/cache/nvim/lsp.log ]]; then
    echo "--- lsp.log (last lines) ---" >&2
    tail -n 30 "$tmp/cache/nvim/lsp.log" >&2
  fi
  exit 1
fi
echo "neovim_test: passed"
