// workspace/executeCommand oomlens.analyzeSnapshot: a memory snapshot file
// (or a folder of per-rank snapshots) read and analysed off the protocol
// thread, answered with the same JSON as `oomlens snapshot --format json`, a
// Markdown summary and the HTML page; oomlens.compareSnapshots likewise for
// `oomlens snapshot --compare A B` (snapshot_runs_command.cpp).
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/snapshot/analysis.hpp"
#include "lsp/protocol.hpp"
#include "lsp/snapshot_lines.hpp"
#include "report/snapshot_file.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::lsp {

// The file an argument names (snapshot_argument: the path or URI of
// {"path": "/abs/x.pickle"}, {"uri": "file:///abs/x.pickle"}, or a plain
// string). The path must be absolute (the server's working directory is not
// the user's). Throws ParamsError otherwise, naming `command` and its `usage`.
std::string snapshot_argument_path(
    const std::optional<std::string>& given, std::string_view command = "oomlens.analyzeSnapshot",
    std::string_view usage = "[{\"path\": \"/abs/file.pickle\"}], a path or a file:// URI");

struct SnapshotCommandOutcome {
  CommandResult result;  // json, markdown and html on success
  int error_code = 0;     // a JSON-RPC error code when the file was missing or refused
  std::string error;
  bool cancelled = false;
  std::optional<SnapshotLines> lines;  // memory at the peak by line, for the editor
};

// Reads, parses and analyses; gives up between stages once `cancelled` is set.
// A folder is read as a job's ranks (run_job_command).
SnapshotCommandOutcome run_snapshot_command(const std::string& path, const std::atomic<bool>& cancelled);

// oomlens.compareSnapshots: `oomlens snapshot --compare A B`'s JSON and page,
// and a Markdown summary.
SnapshotCommandOutcome run_compare_command(const std::string& path_a, const std::string& path_b,
                                           const std::atomic<bool>& cancelled);

// A folder of per-rank snapshots: `oomlens snapshot DIR`'s JSON and page, and
// a Markdown summary.
SnapshotCommandOutcome run_job_command(const std::string& dir, const std::atomic<bool>& cancelled);

// The outcome of a file that could not be read or was refused: InvalidParams
// naming the file and the reason.
SnapshotCommandOutcome refused_outcome(const std::string& path, const report::SnapshotFileError& error);

// A stack as Markdown list items: at most `max` of the user's frames, the
// rest folded into one line.
void frames_markdown(std::string& out, const analyzer::snapshot::FrameList& frames,
                     const analyzer::snapshot::FoldedStack* folded, analyzer::snapshot::MissingStack missing,
                     std::size_t max, std::string_view indent);

// Figures per device, the verdict with its arithmetic, the top sites.
std::string snapshot_markdown(const analyzer::snapshot::Snapshot& snapshot, const rules::SnapshotReport& report,
                              std::string_view source);

}  // namespace oomlens::lsp
