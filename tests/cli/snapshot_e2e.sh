#!/usr/bin/env bash
# End-to-end tests of `oomlens snapshot`: the real binary on the snapshot
# fixtures (fixtures/snapshots/README.md has what each one shows).
set -u
fixtures=${1:?usage: snapshot_e2e.sh FIXTURES_DIR}
snaps="$fixtures/snapshots"
source "$(dirname "$0")/e2e_lib.sh"
json_class() {  # the oom class from JSON on stdin, "null" without an oom
  python3 -c 'import json,sys; o=json.load(sys.stdin)["oom"]; print(o["class"] if o else "null")' 2>/dev/null
}
json_keys_ok() {  # the documented contract: every key present, sizes integers
  python3 -c '
import json, sys
j = json.load(sys.stdin)
assert set(["devices", "oom", "top_sites", "settings"]) <= set(j), "top-level keys"
assert isinstance(j["settings"], dict)
for d in j["devices"]:
    for k in ("device", "reserved_bytes", "allocated_bytes", "active_bytes", "inactive_bytes",
              "inactive_split_bytes", "largest_free_block_bytes", "segments", "blocks"):
        assert isinstance(d[k], int), k
o = j["oom"]
if o is not None:
    for k in ("device", "requested_bytes", "device_free_bytes", "largest_free_block_bytes", "cached_free_bytes"):
        assert isinstance(o[k], int), k
    assert o["class"] in ("fragmentation", "capacity", "external", "limit", "unquantified")
for s in j["top_sites"]:
    assert isinstance(s["bytes"], int) and isinstance(s["count"], int)
    for f in s["frames"]:
        assert isinstance(f["filename"], str) and isinstance(f["line"], int) and isinstance(f["name"], str)
' 2>/dev/null
}

run --help
check "top-level help lists snapshot" eval '[ $status = 0 ] && has "$out" "snapshot FILE"'
run snapshot --help
check "snapshot --help documents formats and exit status" eval '[ $status = 0 ] && has "$out" "--format" && has "$out" "Exit status"'
run snapshot
check "no file: usage error" eval '[ $status = 2 ]'

for scenario in fragmentation:fragmentation capacity:capacity external:external limit:limit limit_conf:limit no_oom:null legacy_113:null; do
  name=${scenario%%:*} want=${scenario#*:}
  for p in p2 p4 p5; do
    f="$snaps/${name}_$p.pickle"
    run snapshot --format json "$f"
    check "$name $p: exit 0" eval '[ $status = 0 ]'
    check "$name $p: JSON contract" eval 'json_keys_ok <<<"$out"'
    check "$name $p: class $want" eval '[ "$(json_class <<<"$out")" = "$want" ]'
  done
done
run snapshot --format json "$snaps/fragmentation_torch_jit_p2.pickle"
check "TorchScript pickler's file: fragmentation" eval '[ $status = 0 ] && [ "$(json_class <<<"$out")" = fragmentation ]'
run snapshot --format json "$snaps/fragmentation_p4.pickle"
check "fragmentation: exact numbers" eval 'has "$out" "\"requested_bytes\": 4294967296" && has "$out" "\"cached_free_bytes\": 19364953088" && has "$out" "\"largest_free_block_bytes\": 536870912"'
run snapshot --format json "$snaps/limit_conf_p4.pickle"
check "settings carry the alloc conf" eval 'has "$out" "per_process_memory_fraction"'
run snapshot --format json --top 1 "$snaps/capacity_p4.pickle"
check "--top 1 keeps one site" eval '[ "$(python3 -c "import json,sys; print(len(json.load(sys.stdin)[\"top_sites\"]))" <<<"$out" 2>/dev/null)" = 1 ]'
run snapshot --format json --device-total "80 GiB" "$snaps/external_p4.pickle"
check "--device-total: external quantified" eval '[ $status = 0 ] && [ "$(json_class <<<"$out")" = external ]'

run snapshot "$snaps/fragmentation_p4.pickle"
check "text: verdict, arithmetic, map, sites" eval '[ $status = 0 ] && has "$out" "out of memory on device 0: fragmentation" && has "$out" "largest free block 512.00 MiB < requested 4.00 GiB" && has "$out" "█" && has "$out" "░" && has "$out" "top allocation sites"'
run snapshot "$snaps/no_oom_p4.pickle"
check "text: no oom says so" eval '[ $status = 0 ] && has "$out" "no out-of-memory event" && has "$out" "device 1"'

for hostile in "hostile_global_os_system_p2.pickle:GLOBAL" "hostile_stack_global_p4.pickle:STACK_GLOBAL" \
               "hostile_reduce_in_snapshot_p2.pickle:GLOBAL" "hostile_deep_nesting_p2.pickle:APPEND" \
               "hostile_huge_binunicode8_p4.pickle:BINUNICODE8" "hostile_huge_memo_index_p2.pickle:LONG_BINGET" \
               "truncated_fragmentation_p4.pickle:truncated" "empty.pickle:empty input"; do
  file=${hostile%%:*} word=${hostile#*:}
  run snapshot --format json "$snaps/$file"
  check "$file: exit 2 naming $word" eval '[ $status = 2 ] && has "$err" "$word" && has "$err" "$file" && [ -z "$out" ]'
done

run snapshot "$tmp/does-not-exist.pickle"
check "missing file: exit 2, names file and reason" eval '[ $status = 2 ] && has "$err" "does-not-exist.pickle" && has "$err" "No such file"'
run snapshot "$tmp"
check "directory: exit 2, says so" eval '[ $status = 2 ] && has "$err" "is a directory"'
if [ "$(id -u)" != 0 ]; then
  cp "$snaps/limit_p4.pickle" "$tmp/locked.pickle"; chmod 000 "$tmp/locked.pickle"
  run snapshot "$tmp/locked.pickle"
  check "unreadable file: exit 2" eval '[ $status = 2 ] && has "$err" "Permission denied"'
fi
run snapshot --format yaml "$snaps/limit_p4.pickle"
check "bad format value: exit 2" eval '[ $status = 2 ] && has "$err" "yaml"'
run snapshot --bogus "$snaps/limit_p4.pickle"
check "unknown option: exit 2" eval '[ $status = 2 ] && has "$err" "--bogus"'
run snapshot --top x "$snaps/limit_p4.pickle"
check "bad --top: exit 2" eval '[ $status = 2 ]'

echo "snapshot e2e: $pass passed, $fail failed"
[ "$fail" = 0 ]
