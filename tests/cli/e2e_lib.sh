# Shared by the command-line end-to-end scripts (source it after setting
# `fixtures`): the binary, a temp dir, and check/run/has with pass/fail counts.
oomlens=$(realpath "${OOMLENS:?set OOMLENS to the oomlens binary}")
tmp=$(mktemp -d)
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0 fail=0

check() {  # check NAME CONDITION-COMMAND...
  local name=$1
  shift
  if "$@"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $name"; fi
}
run() {  # run ARGS... -> $out $err $status
  out=$("$oomlens" "$@" 2>"$tmp/err" </dev/null); status=$?
  err=$(cat "$tmp/err")
}
has() { grep -qF -- "$2" <<<"$1"; }
