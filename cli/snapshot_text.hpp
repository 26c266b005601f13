// `oomlens snapshot` as text for the terminal: figures per device, the OOM
// verdict, a map of the segments, the trace's peaks with what was alive, and
// the top allocation sites, each stack led by the user's own frame.
#pragma once

#include <ostream>
#include <string>

#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/compare.hpp"
#include "analyzer/snapshot/ranks.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::cli {

struct SnapshotTextStyle {
  bool all_frames = false;  // every recorded frame instead of the user's with the rest folded
};

void print_snapshot_text(std::ostream& out, const std::string& path, const analyzer::snapshot::Snapshot& snapshot,
                         const rules::SnapshotReport& report, const SnapshotTextStyle& style);

// A stack led by the user's frames, one line each, under `indent`.
void print_stack(std::ostream& out, const analyzer::snapshot::FrameList& frames,
                 const analyzer::snapshot::FoldedStack* folded, analyzer::snapshot::MissingStack missing,
                 std::size_t max, const char* indent, const SnapshotTextStyle& style);

// `oomlens snapshot --compare A B`: the two runs' figures side by side, the
// top sites with both runs' bytes, and the sites that grew and shrank most.
void print_comparison_text(std::ostream& out, const std::string& path_a, const std::string& path_b,
                           const analyzer::snapshot::Comparison& comparison, const SnapshotTextStyle& style);

// `oomlens snapshot DIR`: a table per rank, the rank with the highest peak and
// the imbalance, then the top sites of that rank.
void print_job_text(std::ostream& out, const std::string& dir, const analyzer::snapshot::JobSummary& job,
                    const analyzer::snapshot::Analysis& highest, const SnapshotTextStyle& style);

}  // namespace oomlens::cli
