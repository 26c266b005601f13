// workspace/executeCommand oomlens.analyzeSnapshot: a memory snapshot file
// read and analysed off the protocol thread, answered with the same JSON as
// `oomlens snapshot --format json`, a Markdown summary and the HTML page.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/snapshot/analysis.hpp"
#include "lsp/protocol.hpp"
#include "lsp/snapshot_lines.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::lsp {

// The file the command's argument names (snapshot_argument: the path or URI
// of [{"path": "/abs/x.pickle"}], [{"uri": "file:///abs/x.pickle"}], or a
// plain string). The path must be absolute (the server's working directory
// is not the user's). Throws ParamsError otherwise.
std::string snapshot_argument_path(const std::optional<std::string>& given);

struct SnapshotCommandOutcome {
  CommandResult result;  // json, markdown and html on success
  int error_code = 0;     // a JSON-RPC error code when the file was missing or refused
  std::string error;
  bool cancelled = false;
  std::optional<SnapshotLines> lines;  // memory at the peak by line, for the editor
};

// Reads, parses and analyses; gives up between stages once `cancelled` is set.
SnapshotCommandOutcome run_snapshot_command(const std::string& path, const std::atomic<bool>& cancelled);

// Figures per device, the verdict with its arithmetic, the top sites.
std::string snapshot_markdown(const analyzer::snapshot::Snapshot& snapshot, const rules::SnapshotReport& report,
                              std::string_view source);

}  // namespace oomlens::lsp
