#!/usr/bin/env bash
# Nothing is uploaded, ever: every mode of oomlens runs under strace, which
# records each network system call (socket, connect, sendto, ...) of the
# process and its children. A call that opens or addresses anything other
# than a local AF_UNIX socket fails the test: reaching another machine needs
# an AF_INET/AF_INET6 (or packet) socket first, while glibc itself may ask
# the local name-service cache over AF_UNIX (`/var/run/nscd/socket`) when a
# job looks up its user. A positive control (a process that opens an internet
# socket) proves the trace would see one.
#   OOMLENS=build/oomlens tests/cli/offline_e2e.sh FIXTURES
set -uo pipefail
fixtures=$(realpath "${1:?usage: offline_e2e.sh FIXTURES}")
source "$(dirname "$0")/e2e_lib.sh"

if ! command -v strace >/dev/null; then
  echo "offline_e2e: strace is missing (scripts/setup.sh installs it)" >&2
  exit 1
fi

# traced NAME ARGS... [< input]: the network calls of `oomlens ARGS...`.
traced() {
  local name=$1
  shift
  strace -f -qq -e trace=network -e signal=none -o "$tmp/$name.trace" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err"
  status=$?
  # Lines that create a socket of another family than AF_UNIX, or name an
  # address of another family (connect, sendto, bind, ...).
  grep -E 'socket\(|sa_family=' "$tmp/$name.trace" | grep -vE 'socket\(AF_UNIX,|sa_family=AF_UNIX' >"$tmp/$name.net"
  calls=$(grep -c . "$tmp/$name.net")
}
offline() {  # offline NAME ARGS...: traced, and no network call
  local name=$1
  traced "$@"
  check "$name ran (status $status): $(head -c 300 "$tmp/$name.err")" test "$status" -le 1 -a -s "$tmp/$name.out"
  check "$name made no network call: $(head -3 "$tmp/$name.net")" test "$calls" -eq 0
}

# The control: the same trace on a process that opens a socket.
traced control python3 -c "import socket; socket.socket().close()"
check "the trace sees an internet socket() (control)" test "$calls" -gt 0
traced control-unix python3 -c "import socket; socket.socket(socket.AF_UNIX).close()"
check "a local AF_UNIX socket is not counted as a network call (control)" test "$calls" -eq 0 -a -s "$tmp/control-unix.trace"

offline diagnose "$oomlens" diagnose "$fixtures/logs/pytorch26_fragmentation.log"
offline diagnose-json "$oomlens" diagnose --format json "$fixtures/logs/torchrun_4ranks_rank2_first.log"
offline diagnose-job-dir "$oomlens" diagnose "$fixtures/logs/jobs/torchrun_log_dir"
offline diagnose-stdin sh -c "'$oomlens' diagnose < '$fixtures/logs/pytorch25_capacity.log'"
offline lint "$oomlens" lint "$fixtures/scripts/empty_cache_in_loop.py"
offline snapshot "$oomlens" snapshot --format json "$fixtures/snapshots/capacity_p2.pickle"
offline explain "$oomlens" explain OOM101
# verify runs a fake training job (and its probe) on a stand-in torch: the
# trace follows the job's processes too.
verify_tests=$(cd "$(dirname "$0")/../verify" && pwd)
offline verify env PYTHONPATH="$verify_tests/fake_torch" "$oomlens" verify --baseline --conf expandable_segments:True \
  -- python3 "$verify_tests/jobs/fragmenting_job.py"
check "verify ran the job under the trace" grep -q "^fixed: " "$tmp/verify.out"

# The language server driven as an editor would: initialize, open a log and
# a script, hover, ask for code actions, run a command, shut down.
python3 - "$fixtures" >"$tmp/session.bin" <<'EOF'
import json, sys
fixtures = sys.argv[1]
def frame(obj):
    body = json.dumps(obj).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
log_uri = "file://" + fixtures + "/logs/pytorch26_fragmentation.log"
script_uri = "file://" + fixtures + "/scripts/empty_cache_in_loop.py"
log = open(fixtures + "/logs/pytorch26_fragmentation.log", encoding="utf-8", errors="replace").read()
script = open(fixtures + "/scripts/empty_cache_in_loop.py", encoding="utf-8").read()
msgs = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": log_uri, "languageId": "log", "version": 1, "text": log}}},
    {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {"uri": script_uri, "languageId": "python", "version": 1, "text": script}}},
    {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover", "params": {"textDocument": {"uri": log_uri}, "position": {"line": 30, "character": 3}}},
    {"jsonrpc": "2.0", "id": 3, "method": "textDocument/codeAction", "params": {"textDocument": {"uri": script_uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 5, "character": 0}}, "context": {"diagnostics": []}}},
    {"jsonrpc": "2.0", "id": 4, "method": "workspace/executeCommand", "params": {"command": "oomlens.diagnoseText", "arguments": [log]}},
    {"jsonrpc": "2.0", "id": 5, "method": "shutdown"},
    {"jsonrpc": "2.0", "method": "exit"},
]
sys.stdout.buffer.write(b"".join(frame(m) for m in msgs))
EOF
traced lsp "$oomlens" lsp <"$tmp/session.bin"
check "lsp exited 0 after shutdown (status $status): $(head -c 300 "$tmp/lsp.err")" test "$status" -eq 0
check "lsp answered the editor's requests" grep -q '"id":4' "$tmp/lsp.out"
check "lsp made no network call: $(head -3 "$tmp/lsp.net")" test "$calls" -eq 0

echo "offline e2e: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
