#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# while on seeds from fixtures/ and fuzz/seeds/.   scripts/fuzz.sh [SECONDS_PER_TARGET]
# A crash or a hang fails it, with the input left in build-asan/fuzz-artifacts/:
# fix it and add the input to fuzz/regressions/TARGET/ (ctest replays them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
# The sanitized build's fuzz targets: CI builds them once for its tests too.
"$root/scripts/build_sanitized.sh" fuzzers
fuzzers=$root/build-asan/fuzz
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/logs" "$corpus/lsp" "$corpus/snapshots" "$corpus/replay" "$corpus/source" "$corpus/probe" "$corpus/cli"
# Small snapshots only: under ASan a 200 KB one takes a tenth of a second,
# and a few hundred runs find little.
find "$root/fixtures/snapshots" -name '*.pickle' -size -64k -exec cp -t "$corpus/snapshots/" {} +
cp "$corpus"/snapshots/* "$corpus/replay/"
cp "$root"/fuzz/seeds/probe/* "$corpus/probe/"
# Command lines: the arguments separated by NUL bytes.
n=0
while IFS= read -r line; do
  printf '%s' "$line" | tr ' ' '\000' >"$corpus/cli/$((n++))"
done <"$root/fuzz/seeds/command_lines.txt"
cp "$root"/fixtures/logs/*.log "$corpus/logs/"
i=0
# Source seeds: the first byte picks the kind (0 script, 1 shell, 2 .env, 3 launch.json).
for f in "$root"/fixtures/scripts/*.py "$root"/fixtures/scripts/*/*.py; do
  { printf '\000'; cat "$f"; } >"$corpus/source/py$((i++))"
done
for f in $(find "$root/fixtures/config" -type f); do
  case $f in *.sh) k='\001' ;; *.json) k='\003' ;; *) k='\002' ;; esac
  { printf "$k"; cat "$f"; } >"$corpus/source/cfg$((i++))"
done
printf 'Content-Length: 59\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"shutdown","params":null}' >"$corpus/lsp/seed"
# A script and a launch file in an editor session: the source features' paths.
python3 - "$root/fixtures/scripts/alloc_conf_too_late.py" "$corpus/lsp/python-session" <<'PY'
import json, sys
def frame(m):
    b = json.dumps(m).encode()
    return b"Content-Length: %d\r\n\r\n" % len(b) + b
caps = {"textDocument": {"codeAction": {"codeActionLiteralSupport": {"codeActionKind": {"valueSet": ["quickfix", "source"]}},
                                        "dataSupport": True, "resolveSupport": {"properties": ["edit"]}}},
        "workspace": {"workspaceEdit": {"documentChanges": True}}}
here = {"start": {"line": 9, "character": 0}, "end": {"line": 9, "character": 0}}
msgs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": caps}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": "file:///t.py", "languageId": "python", "version": 1, "text": open(sys.argv[1]).read()}}},
    {"jsonrpc": "2.0", "id": 2, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": "file:///t.py"}, "range": here, "context": {"diagnostics": [], "only": ["source"]}}},
    {"jsonrpc": "2.0", "method": "textDocument/didChange", "params": {"textDocument": {"uri": "file:///t.py", "version": 2},
        "contentChanges": [{"range": {"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 3}}, "text": "é"}]}},
    {"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {
        "textDocument": {"uri": "file:///t.py"}, "position": {"line": 9, "character": 2}}},
    {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "oomlens.fixScript",
        "arguments": [{"uri": "file:///t.py", "fix": {"kind": "snapshot", "line": 13}}]}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": "file:///r.sh",
        "languageId": "shellscript", "version": 1, "text": "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:true\npython t.py\n"}}},
    {"jsonrpc": "2.0", "id": 5, "method": "shutdown"},
]
open(sys.argv[2], "wb").write(b"".join(frame(m) for m in msgs))
PY
status=0
artifacts=$root/build-asan/fuzz-artifacts
mkdir -p "$artifacts"
# Runs one target on its seeds for the given time; says how many inputs it ran.
fuzz() {
  local target=$1 seeds=$2 max_len=$3 log
  log=$(mktemp)
  # -close_fd_mask=3: the code under test writes (help, usage errors) on
  # stdout and stderr; libFuzzer's own and the sanitizers' reports still show.
  if ! "$fuzzers/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -close_fd_mask=3 \
    -print_final_stats=1 -artifact_prefix="$artifacts/$target-" "$corpus/$seeds" >"$log" 2>&1; then
    cat "$log"
    echo "fuzz: $target FAILED; the input is in $artifacts/" >&2
    status=1
  fi
  echo "fuzz: $target: $(sed -n 's/^stat::number_of_executed_units: *//p' "$log") executions in ${seconds} s"
  rm -f "$log"
}
fuzz log_analyzer_fuzzer logs 65536
fuzz lsp_message_fuzzer lsp 16384
fuzz snapshot_fuzzer snapshots 65536
fuzz snapshot_replay_fuzzer replay 65536
fuzz source_rules_fuzzer source 16384
fuzz probe_report_fuzzer probe 16384
fuzz command_line_fuzzer cli 1024
exit $status
