// An analysed memory snapshot as one self-contained HTML page: inline CSS and
// SVG, no script of any kind and nothing fetched from the network (a
// Content-Security-Policy of default-src 'none' makes browsers hold the page
// to that). Every string that came from the file is escaped: a snapshot is
// untrusted input, and its frame names end up in a browser.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/compare.hpp"
#include "analyzer/snapshot/ranks.hpp"
#include "rules/snapshot/oom_verdict.hpp"

namespace oomlens::report {

struct SnapshotHtmlOptions {
  // Segments drawn in the map: the largest ones; the rest are counted in one
  // line. A snapshot can hold thousands; the page stays small.
  std::size_t max_segments = 60;
  // Rectangles per segment bar: beyond this, blocks are merged into cells
  // that show the state holding most of their bytes, as the text map does.
  std::size_t max_rects_per_segment = 120;
};

// `source` names the snapshot (a path or a URI) in the title.
std::string snapshot_html(const analyzer::snapshot::Snapshot& snapshot, const rules::SnapshotReport& report,
                          std::string_view source, const SnapshotHtmlOptions& options = {});

// `oomlens snapshot --compare A B --format html`: the two runs' figures side
// by side, their curves on one axis, the top sites and those that grew and
// shrank most, by the user's frames.
std::string snapshot_compare_html(const std::string& path_a, const std::string& path_b,
                                  const analyzer::snapshot::Comparison& comparison);

// `oomlens snapshot DIR --format html`: the per-rank table with a small curve
// per rank, the highest-peak rank marked, the imbalance, and the top sites of
// that rank (`highest`).
std::string snapshot_job_html(const std::string& dir, const analyzer::snapshot::JobSummary& job,
                              const analyzer::snapshot::Analysis& highest);

// Text made safe for HTML element content and quoted attribute values.
std::string html_escape(std::string_view text);

}  // namespace oomlens::report
