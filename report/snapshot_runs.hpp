// What the pages of several runs (--compare A B, a folder of ranks) show,
// decided once for the text, HTML and editor renderers: the figures of a
// comparison in their order, and the signed sizes of a change.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/snapshot/compare.hpp"

namespace oomlens::report {

struct ComparisonRow {
  enum class Kind { bytes, ratio, verdict };
  std::string name;  // "peak allocated*" when a run has no trace
  Kind kind = Kind::bytes;
  std::uint64_t a = 0, b = 0;    // Kind::bytes
  double ratio_a = 0, ratio_b = 0;  // Kind::ratio (0..1)
  std::string verdict_a, verdict_b;  // Kind::verdict ("none" without an oom)
};

// Peak allocated and reserved, reserved and allocated at dump, inactive
// split, fragmentation and the oom verdict of each run.
std::vector<ComparisonRow> comparison_rows(const analyzer::snapshot::Comparison& comparison);

// True when a run has no trace, so its dump-time figures stand for the peak.
bool dump_figures_stand_for_peak(const analyzer::snapshot::Comparison& comparison);

// "+2.00 GiB", "-12.00 GiB", "0 B".
std::string signed_size(std::int64_t change);

// "fragmentation", ... or "none".
std::string oom_name(const analyzer::snapshot::RunFigures& run);

}  // namespace oomlens::report
