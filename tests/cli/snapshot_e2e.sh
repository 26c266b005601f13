#!/usr/bin/env bash
# End-to-end tests of `oomlens snapshot`: the real binary on the snapshot
# fixtures (fixtures/snapshots/README.md has what each one shows), and its
# outputs compared byte for byte with the goldens beside each fixture.
#   snapshot_e2e.sh FIXTURES_DIR            check (CI)
#   snapshot_e2e.sh FIXTURES_DIR --update   rewrite the goldens; review the diff like code
set -u
fixtures=${1:?usage: snapshot_e2e.sh FIXTURES_DIR [--update]}
update=${2:-}
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
mkdir -p "$tmp/empty-dir"
run snapshot "$tmp/empty-dir"
check "a folder without snapshots: exit 2, says so" eval '[ $status = 2 ] && has "$err" "empty-dir" && has "$err" "is a directory with no snapshot"'
if [ "$(id -u)" != 0 ]; then
  cp "$snaps/limit_p4.pickle" "$tmp/locked.pickle"; chmod 000 "$tmp/locked.pickle"
  run snapshot "$tmp/locked.pickle"
  check "unreadable file: exit 2" eval '[ $status = 2 ] && has "$err" "Permission denied"'
fi
# A pipe cannot be mapped: it is read whole, to the same answer.
piped=$(cat "$snaps/limit_p4.pickle" | "$oomlens" snapshot --format json /dev/stdin 2>/dev/null)
check "a pipe (/dev/stdin) reads like the file" eval '[ "$piped" = "$(cat "$snaps/limit_p4.json")" ]'
run snapshot --format yaml "$snaps/limit_p4.pickle"
check "bad format value: exit 2" eval '[ $status = 2 ] && has "$err" "yaml"'
run snapshot --bogus "$snaps/limit_p4.pickle"
check "unknown option: exit 2" eval '[ $status = 2 ] && has "$err" "--bogus"'
run snapshot --top x "$snaps/limit_p4.pickle"
check "bad --top: exit 2" eval '[ $status = 2 ]'

# --format html: one self-contained page, file strings escaped.
run snapshot --format html "$snaps/markup_p4.pickle"
check "html: exit 0, a whole page" eval '[ $status = 0 ] && has "$out" "<!DOCTYPE html>" && has "$out" "</html>"'
check "html: a frame name <script>alert(1)</script> is shown escaped" \
  eval 'has "$out" "&lt;script&gt;alert(1)&lt;/script&gt;" && ! has "$out" "<script"'
check "html: a filename with markup is escaped" eval 'has "$out" "/tmp/a&amp;b&lt;img src=x onerror=alert(2)&gt;&quot;&#39;.py" && ! has "$out" "<img"'
check "html: settings strings escaped" eval 'has "$out" "&lt;b&gt;conf&lt;/b&gt;" && ! has "$out" "<b>conf"'
no_outside() {  # nothing that runs code or reaches the network
  ! grep -qiE '<script|javascript:|\son[a-z]+=|src=|href=|url\(|@import|<link|<iframe|<object|<embed' <<<"$(sed 's/&lt;[^&]*&gt;//g' <<<"$1")"
}
for f in fragmentation_p4 no_oom_p4 legacy_113_p4 limit_conf_p4; do
  run snapshot --format html "$snaps/$f.pickle"
  check "html $f: no script, no network" eval '[ $status = 0 ] && no_outside "$out" && has "$out" "default-src '"'"'none'"'"'"'
done
run snapshot --format html "$snaps/fragmentation_p4.pickle"
check "html: verdict, arithmetic, request to scale, map, sites" eval 'has "$out" "fragmentation</span>" &&
  has "$out" "largest free block 512.00 MiB &lt; requested 4.00 GiB" && has "$out" "aria-label=\"segment map\"" &&
  has "$out" "class=\"req\"" && has "$out" "Top allocation sites"'
# The request bar is drawn to scale: 4 GiB against the 18.03 GiB cached free (the widest, 560 px): 124.2 px;
# the largest free block, 512 MiB, is 15.5 px.
check "html: request bar to scale" eval 'has "$out" "<rect class=\"req\" x=\"170\" y=\"4\" width=\"124.2\"" && has "$out" "<rect class=\"f\" x=\"170\" y=\"26\" width=\"15.5\""'

# stacks="all": every stack leads with the user's frame; the C++ and framework frames are folded.
run snapshot "$snaps/cpp_stacks_p4.pickle"
check "user frames lead, C++ folded" eval '[ $status = 0 ] && has "$out" "#1 8.00 GiB in 2 blocks
      /home/user/llm/model.py:21 build_model" && has "$out" "+ 8 C++ and 1 framework frames folded (--all-frames shows them)" && ! has "$out" "torch::unwind::unwind()"'
check "no stack: the cause is named" eval 'has "$out" "(no stack recorded: allocated before the trace begins" && has "$out" "(only C++ frames: no Python stack, such as autograd"'
check "the failed call leads with the user's line" eval 'has "$out" "failed call:
    /home/user/llm/model.py:88 forward"'
check "peak in the middle of the trace, what was alive, the oom state" eval 'has "$out" "at the allocated peak (after entry 10, +0.002 s): 24.00 GiB allocated, 26.00 GiB reserved, 8 live blocks" &&
  has "$out" "at the oom (after entry 76" && has "$out" "2.00 GiB in 2 blocks allocated before the trace begins"'
check "sparkline" eval 'has "$out" "allocated ▁" && has "$out" "█"'
run snapshot --all-frames "$snaps/cpp_stacks_p4.pickle"
check "--all-frames shows the C++ frames" eval '[ $status = 0 ] && has "$out" "torch::unwind::unwind()" && ! has "$out" "frames folded"'
run snapshot --format json "$snaps/cpp_stacks_p4.pickle"
check "json: user_frame, folded counts, cause, timeline" eval 'python3 -c "
import json, sys
j = json.load(sys.stdin)
s = j[\"top_sites\"][0]
assert s[\"user_frame\"] == {\"filename\": \"/home/user/llm/model.py\", \"line\": 21, \"name\": \"build_model\"}, s[\"user_frame\"]
assert s[\"folded_frames\"] == {\"native\": 8, \"framework\": 1} and s[\"in_user_code\"]
assert s[\"frames\"][0][\"name\"] == \"torch::unwind::unwind()\"
causes = [x[\"no_stack_cause\"] for x in j[\"top_sites\"]]
assert \"before_trace\" in causes, causes
t = j[\"timelines\"][0]
assert t[\"peak_allocated\"][\"allocated_bytes\"] == 24 << 30 and t[\"peak_allocated\"][\"entries\"] == 10
assert t[\"at_oom\"][\"allocated_bytes\"] == 12 << 30 and t[\"unaccounted_bytes\"] == 0
assert j[\"oom\"][\"user_frame\"][\"line\"] == 88
" <<<"$out"'
run snapshot "$snaps/ring_overflow_p4.pickle"
check "ring buffer overflow named" eval '[ $status = 0 ] && has "$out" "1000 entries looks like a full max_entries ring buffer" && has "$out" "the trace looks cut by its max_entries ring buffer"'
run snapshot --format html "$snaps/cpp_stacks_p4.pickle"
check "html: timeline SVG with peak and OOM, folded frames in details" eval '[ $status = 0 ] && no_outside "$out" &&
  has "$out" "aria-label=\"memory over the trace, device 0\"" && has "$out" "class=\"tl-peak\"" && has "$out" "class=\"tl-oom\"" &&
  has "$out" "<details><summary>+ 8 C++ and 1 framework frames folded: all 12 frames</summary>" && has "$out" "<li><b>6.00 GiB</b> model.py:21 build_model</li>" &&
  has "$out" "<text x=\"142.1\" y=\"48.3\">12.00 GiB model.py:88 forward</text>" &&
  has "$out" ">0.005 s</text>" && has "$out" "seconds from the first trace entry"'

# JSON and gzip-compressed snapshots read to the same analysis as the pickle.
want_json=$("$oomlens" snapshot --format json "$snaps/cpp_stacks_p4.pickle" 2>/dev/null)
run snapshot --format json "$snaps/cpp_stacks.snapshot.json"
check "a JSON snapshot: the pickle's analysis" eval '[ $status = 0 ] && [ "$out" = "$want_json" ]'
run snapshot --format json "$snaps/cpp_stacks_p4.pickle.gz"
check "a gzip-compressed pickle: the same analysis" eval '[ $status = 0 ] && [ "$out" = "$want_json" ]'
gzip -c -n "$snaps/cpp_stacks.snapshot.json" >"$tmp/snap.json.gz"
run snapshot --format json "$tmp/snap.json.gz"
check "a gzip-compressed JSON snapshot: the same analysis" eval '[ $status = 0 ] && [ "$out" = "$want_json" ]'
piped=$(cat "$snaps/cpp_stacks_p4.pickle.gz" | "$oomlens" snapshot --format json /dev/stdin 2>/dev/null)
check "gzip through a pipe" eval '[ "$piped" = "$want_json" ]'
head -c 1000 "$snaps/cpp_stacks_p4.pickle.gz" >"$tmp/cut.pickle.gz"
run snapshot "$tmp/cut.pickle.gz"
check "a truncated gzip: exit 2, names file and reason" eval '[ $status = 2 ] && has "$err" "cut.pickle.gz" && has "$err" "gzip: truncated"'
{ head -c 20 "$snaps/cpp_stacks_p4.pickle.gz"; head -c 200 /dev/zero | tr "\0" "x"; } >"$tmp/corrupt.pickle.gz"
run snapshot "$tmp/corrupt.pickle.gz"
check "a corrupt gzip: exit 2" eval '[ $status = 2 ] && has "$err" "corrupt.pickle.gz" && has "$err" "gzip"'
printf '{"segments": [ {"device": 0,' >"$tmp/cut.json"
run snapshot "$tmp/cut.json"
check "malformed JSON: exit 2 naming the byte" eval '[ $status = 2 ] && has "$err" "cut.json" && has "$err" "not a valid JSON snapshot at byte"'
python3 -c 'print("[" * 200000 + "]" * 200000)' >"$tmp/deep.json"
run snapshot "$tmp/deep.json"
check "deeply nested JSON: refused by the depth limit, no crash" eval '[ $status = 2 ] && has "$err" "deep.json"'
printf '{"segments": [{"device": 0, "address": "x", "total_size": 1, "blocks": []}]}' >"$tmp/wrong.json"
run snapshot "$tmp/wrong.json"
check "JSON of the wrong shape names the key" eval '[ $status = 2 ] && has "$err" "segments[0].address: expected an int, found str"'

# Two runs compared by user frames.
run snapshot --compare "$snaps/compare_before_p4.pickle" "$snaps/compare_after_p4.pickle"
check "compare: figures side by side, grew and shrank" eval '[ $status = 0 ] && has "$out" "grew most" && has "$out" "shrank most" &&
  has "$out" "-12.00 GiB  18.00 GiB -> 6.00 GiB (3 -> 3 blocks)" && has "$out" "+2.00 GiB  0 bytes -> 2.00 GiB (0 -> 1 block)"'
run snapshot --compare "$snaps/compare_before_p4.pickle" "$snaps/compare_after_p4.pickle" --format json
check "compare json" eval 'python3 -c "
import json, sys
j = json.load(sys.stdin)
assert j[\"a\"][\"oom_class\"] is not None and j[\"b\"][\"oom_class\"] is None
assert j[\"shrank\"][0][\"change_bytes\"] == -(12 << 30) and j[\"shrank\"][0][\"user_frame\"][\"line\"] == 88
assert j[\"grew\"][0][\"change_bytes\"] == 2 << 30
" <<<"$out"'
run snapshot --compare "$snaps/compare_before_p4.pickle" "$snaps/compare_after_p4.pickle" --format html
check "compare html: one page, figures side by side, both curves on one time axis, grew and shrank" eval '[ $status = 0 ] &&
  no_outside "$out" && has "$out" "default-src '"'"'none'"'"'" && has "$out" "<td>peak allocated</td><td>42.01 GiB</td><td>32.01 GiB</td><td>-10.00 GiB</td>" &&
  has "$out" "aria-label=\"memory over the traces, on one axis\"" && has "$out" "<path class=\"run run-a\"" && has "$out" "<path class=\"run run-b\"" &&
  has "$out" ">0 s</text>" && has "$out" "seconds from the first trace entry" && has "$out" "A OOM" &&
  has "$out" "<b class=\"grew\">+2.00 GiB</b>" && has "$out" "<b class=\"shrank\">-12.00 GiB</b>"'
run snapshot --compare "$snaps/compare_before_p4.pickle" "$tmp/missing.pickle"
check "compare: a missing run is named, exit 2" eval '[ $status = 2 ] && has "$err" "missing.pickle"'
# A trace without times is drawn and told by entry count, and says so.
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
for trace in d['device_traces']:
    for e in trace: e['time_us'] = 0
json.dump(d, open(sys.argv[2], 'w'))
" "$snaps/cpp_stacks.snapshot.json" "$tmp/untimed.json"
run snapshot "$tmp/untimed.json"
check "no times: moments by entry count, and a note" eval '[ $status = 0 ] && has "$out" "trace of device 0: 77 entries
" && has "$out" "moments are placed by entry count" && has "$out" "at the allocated peak (after entry 10):"'
run snapshot --format html "$tmp/untimed.json"
check "no times: the chart counts entries" eval '[ $status = 0 ] && has "$out" "trace entries (no times recorded)" && ! has "$out" " s</text>"'
run snapshot "$snaps/cpp_stacks_p4.pickle"
check "times: the trace's span, the peak and the oom from its first entry" eval 'has "$out" "77 entries over 0.015 s" &&
  has "$out" "at the allocated peak (after entry 10, +0.002 s)" && has "$out" "at the oom (after entry 76, +0.015 s)"'
run snapshot --compare "$snaps/compare_before_p4.pickle"
check "compare needs two files" eval '[ $status = 2 ]'

# A folder of per-rank snapshots: files, or one folder per rank.
run snapshot "$snaps/job_ranks"
check "ranks: table, highest, imbalance" eval '[ $status = 0 ] && has "$out" "4 ranks" && has "$out" "highest peak: rank 2 (rank2.pickle)" && has "$out" "imbalance: 1."'
run snapshot --format html "$snaps/job_ranks"
check "ranks html: the table, the highest rank marked, the imbalance, a curve per rank" eval '[ $status = 0 ] && no_outside "$out" &&
  has "$out" "<tr class=\"highest\"><td>2 <b>highest peak</b></td>" && has "$out" "Imbalance: <b>1." &&
  [ "$(grep -o "aria-label=\"memory over the trace\"" <<<"$out" | wc -l)" = 4 ]'
mkdir -p "$tmp/per-rank"
for r in 0 1 2 3; do mkdir -p "$tmp/per-rank/rank$r"; cp "$snaps/job_ranks/rank$r.pickle" "$tmp/per-rank/rank$r/snapshot.pickle"; done
run snapshot --format json "$tmp/per-rank"
check "ranks in folders: the same job" eval '[ $status = 0 ] && python3 -c "
import json, sys
j = json.load(sys.stdin)
assert [r[\"rank\"] for r in j[\"ranks\"]] == [0, 1, 2, 3] and j[\"highest_rank\"] == 2
assert j[\"ranks\"][0][\"path\"] == \"rank0/snapshot.pickle\"
assert j[\"imbalance\"] > 1.0
" <<<"$out"'
cp "$snaps/hostile_global_os_system_p2.pickle" "$tmp/per-rank/rank3/snapshot.pickle"
run snapshot "$tmp/per-rank"
check "ranks: a refused rank names its file, exit 2" eval '[ $status = 2 ] && has "$err" "rank3/snapshot.pickle" && has "$err" "GLOBAL"'

# Scale: thousands of segments draw the largest ones and count the rest.
python3 - "$tmp/many.pickle" <<'PY'
import pickle, sys
segs = [{"device": 0, "address": (1 << 40) + i * (4 << 20), "total_size": (2 << 20) * (1 + i % 7), "stream": 0,
         "segment_type": "large", "blocks": [{"size": (1 << 20) * (1 + i % 7), "state": "active_allocated",
         "frames": []}, {"size": (1 << 20) * (1 + i % 7), "state": "inactive", "frames": []}]} for i in range(5000)]
# One segment of 6000 alternating 2 MiB blocks: more pieces than a bar draws.
states = ("active_allocated", "inactive", "active_pending_free")
segs.append({"device": 0, "address": 1 << 44, "total_size": 6000 << 21, "stream": 0, "segment_type": "large",
             "blocks": [{"size": 2 << 20, "state": states[i % 3], "frames": []} for i in range(6000)]})
pickle.dump({"segments": segs, "device_traces": [[]]}, open(sys.argv[1], "wb"), protocol=4)
PY
run snapshot --format html "$tmp/many.pickle"
check "html: 5001 segments draw 60 and say how many more" eval '[ $status = 0 ] && has "$out" "and 4941 more segments" &&
  [ "$(grep -o "aria-label=\"segment map\"" <<<"$out" | wc -l)" = 1 ] && [ ${#out} -lt 200000 ]'
check "html: a segment of 6000 blocks is drawn in at most 120 pieces" \
  eval '[ "$(grep -F -A1 "11.72 GiB (6000 blocks" <<<"$out" | grep -o "<rect class=\"[apf]\"" | wc -l)" -le 120 ] &&
        [ "$(grep -F -A1 "11.72 GiB (6000 blocks" <<<"$out" | grep -o "<rect class=\"[apf]\"" | wc -l)" -ge 3 ]'

# Goldens: text and JSON of every snapshot fixture, html of two, and the exact
# refusal of every file that is not a snapshot. Run from the fixture folder so
# the paths printed are the bare file names.
golden() {  # golden FILE EXPECTED-STATUS COMMAND...: stdout (or stderr for status 2) against FILE
  local file=$1 want=$2
  shift 2
  local got status
  if [ "$want" = 2 ]; then
    got=$("$@" 2>&1 >/dev/null); status=$?
  else
    got=$("$@" 2>/dev/null); status=$?
  fi
  if [ "$update" = "--update" ]; then printf '%s\n' "$got" >"$file"; fi
  if [ "$status" = "$want" ] && [ -f "$file" ] && diff -u "$file" <(printf '%s\n' "$got") >/dev/null; then
    pass=$((pass + 1))
  else
    fail=$((fail + 1))
    echo "FAIL golden $file (exit $status, expected $want)"
    [ -f "$file" ] && diff -u "$file" <(printf '%s\n' "$got") | head -20
  fi
}
(
  cd "$snaps" || exit 1
  for f in *.pickle; do
    name=${f%.pickle}
    case $name in
      hostile_* | truncated_* | empty) golden "$name.err" 2 "$oomlens" snapshot "$f" ;;
      *)
        golden "$name.txt" 0 "$oomlens" snapshot "$f"
        golden "$name.json" 0 "$oomlens" snapshot --format json "$f"
        ;;
    esac
  done
  for name in fragmentation_p4 no_oom_p4 cpp_stacks_p4; do golden "$name.html" 0 "$oomlens" snapshot --format html "$name.pickle"; done
  golden cpp_stacks_p4.all-frames.txt 0 "$oomlens" snapshot --all-frames cpp_stacks_p4.pickle
  golden compare.txt 0 "$oomlens" snapshot --compare compare_before_p4.pickle compare_after_p4.pickle
  golden compare.json 0 "$oomlens" snapshot --format json --compare compare_before_p4.pickle compare_after_p4.pickle
  golden job_ranks.txt 0 "$oomlens" snapshot job_ranks
  golden job_ranks.json 0 "$oomlens" snapshot --format json job_ranks
  golden compare.html 0 "$oomlens" snapshot --format html --compare compare_before_p4.pickle compare_after_p4.pickle
  golden job_ranks.html 0 "$oomlens" snapshot --format html job_ranks
  echo "$pass $fail" >"$tmp/golden-counts"
)
read -r pass fail <"$tmp/golden-counts"

echo "snapshot e2e: $pass passed, $fail failed"
[ "$fail" = 0 ]
