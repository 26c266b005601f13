#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) and runs each for a
# while on the fixture logs as seeds.   scripts/fuzz.sh [SECONDS_PER_TARGET]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
"$root/scripts/setup.sh"
# libFuzzer ships with clang's runtime, which the build itself does not need.
if ! dpkg-query -W -f='${Status}' clang libclang-rt-14-dev 2>/dev/null | grep -c "install ok installed" | grep -q 2; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev
fi
cmake -S "$root" -B "$root/build-fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
  -DOOMLENS_FUZZ=ON -DOOMLENS_TESTS=OFF >/dev/null
cmake --build "$root/build-fuzz" --target log_analyzer_fuzzer lsp_message_fuzzer snapshot_fuzzer source_rules_fuzzer
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
mkdir -p "$corpus/logs" "$corpus/lsp" "$corpus/snapshots" "$corpus/source"
cp "$root"/fixtures/snapshots/*.pickle "$corpus/snapshots/"
cp "$root"/fixtures/logs/*.log "$corpus/logs/"
# Source seeds: the first byte picks the kind (0 script, 1 shell, 2 .env, 3 launch.json).
i=0
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
"$root/build-fuzz/fuzz/log_analyzer_fuzzer" -max_total_time="$seconds" -max_len=65536 -timeout=10 "$corpus/logs" || status=1
"$root/build-fuzz/fuzz/lsp_message_fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=10 "$corpus/lsp" || status=1
"$root/build-fuzz/fuzz/snapshot_fuzzer" -max_total_time="$seconds" -max_len=262144 -timeout=10 "$corpus/snapshots" || status=1
"$root/build-fuzz/fuzz/source_rules_fuzzer" -max_total_time="$seconds" -max_len=16384 -timeout=10 "$corpus/source" || status=1
exit $status
