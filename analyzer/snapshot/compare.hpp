// Two snapshots side by side (a run before and after a change): their
// figures, and the allocation sites matched by the user's frames, so the
// sites that grew or shrank most stand out whatever the C++ frames did.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/snapshot/analysis.hpp"

namespace oomlens::analyzer::snapshot {

struct RunFigures {
  std::uint64_t reserved = 0;   // at dump time, all devices
  std::uint64_t allocated = 0;  // likewise
  std::uint64_t inactive_split = 0;
  double fragmentation = 0.0;   // inactive split / reserved, all devices
  // The largest device peak from the trace; without a trace, the dump-time
  // figures of the fullest device (peak_from_trace false).
  std::uint64_t peak_allocated = 0;
  std::uint64_t peak_reserved = 0;
  bool peak_from_trace = false;
  std::optional<OomClass> oom;
  // The timeline of the device whose allocated peak is peak_allocated (the
  // lowest device on a tie), for drawing runs side by side: its curve and
  // moments, without their blocks and sites. None without a trace.
  std::optional<DeviceTimeline> peak_timeline;
};

RunFigures run_figures(const Analysis& analysis);

// One site in either run, matched by its user frames (or, without a stack, by
// why it has none).
struct SiteChange {
  SiteFrames site;  // as in the run where it held more bytes
  std::uint64_t bytes_a = 0, bytes_b = 0;
  std::size_t count_a = 0, count_b = 0;
  std::int64_t change() const { return static_cast<std::int64_t>(bytes_b) - static_cast<std::int64_t>(bytes_a); }
};

struct Comparison {
  RunFigures a, b;
  std::vector<SiteChange> top;     // the sites holding the most in either run, most first
  std::vector<SiteChange> grew;    // most growth first (change > 0)
  std::vector<SiteChange> shrank;  // most shrinkage first (change < 0)
  std::size_t sites_total = 0;     // distinct sites in the two runs together
};

// `a` and `b` must hold every site (AnalysisOptions::top_sites as large as
// needed); each list of the result keeps `top`.
Comparison compare_runs(const Analysis& a, const Analysis& b, std::size_t top);

}  // namespace oomlens::analyzer::snapshot
