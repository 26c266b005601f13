// The fix "Record a memory snapshot": record the CUDA caching
// allocator's history before the training loop and dump it when an
// out-of-memory error escapes the loop, so that `oomlens snapshot FILE` can
// show what held the memory. Also the pieces OOM304 (snapshot-never-dumped)
// shares with it: which calls record, whether the file saves a snapshot, and
// the edits that add a dump.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::rules {

// The edits that make the script record allocator history and dump it on an
// OOM: `torch.cuda.memory._record_memory_history(max_entries=100000,
// stacks="python")` before the training loop, the loop wrapped in `try:` / `except
// torch.cuda.OutOfMemoryError:` that dumps the snapshot and re-raises (one
// file per rank when the script is distributed), the missing `import torch` /
// `import os` added. The training loop is the loop that calls `.backward(` /
// `optimizer.step(`, or, given `line` (1-based, the traceback's frame in this
// script), the loop containing that line. Nothing for a script with syntax
// errors, without such a loop, or that already records before that loop ends
// (applying the action twice changes nothing the second time). Unsafe: it
// changes what the script does.
std::optional<Fix> record_snapshot_action(const analyzer::python::Script& script,
                                                   std::optional<std::uint32_t> line = {});

namespace snapshot {

// Calls to torch.cuda.memory._record_memory_history that turn recording on:
// not `(enabled=None)` / `(False)` / `(None)`, which turn it off.
std::vector<analyzer::python::Call> recording_calls(const analyzer::python::Script& script);

// Whether the file names anything that saves the recorded history:
// `_dump_snapshot` (called or passed, e.g. to atexit.register), `_snapshot()`
// (whose result the script pickles itself), `_save_memory_usage` /
// `_save_segment_usage`.
bool saves_snapshot(const analyzer::python::Script& script);

// The file the inserted code writes, as `oomlens snapshot` is to be given it:
// "oom_snapshot.pickle", or rank 0's "oom_snapshot_rank0.pickle" when the
// script is distributed (each rank writes its own).
std::string snapshot_file(const analyzer::python::Script& script);

// Whether `node` runs before the byte `limit`: it sits before it, or in a
// function of this file called (transitively) from before it.
bool runs_before(const analyzer::python::Script& script, analyzer::python::Node node, std::uint32_t limit);

// The edits wrapping `loop` in a dump-and-re-raise on OutOfMemoryError; with
// `record_history`, the record call goes before the `try:`. Nothing when the
// loop cannot be wrapped exactly (it does not start its line).
std::optional<std::vector<TextEdit>> dump_on_oom_edits(const analyzer::python::Script& script,
                                                       const analyzer::python::Loop& loop, bool record_history);

// The edits registering `atexit.register(torch.cuda.memory._dump_snapshot,
// FILE)` on the line after the statement of `record_call` (atexit runs after
// an uncaught OOM too). Nothing when that call is not a statement of its own
// line.
std::optional<std::vector<TextEdit>> dump_at_exit_edits(const analyzer::python::Script& script,
                                                        const analyzer::python::Call& record_call);

}  // namespace snapshot

}  // namespace oomlens::rules
