#include "rules/verify/measures.hpp"

#include <algorithm>

namespace oomlens::rules::verify {

RunTotals totals_of(const RunMeasure& run) {
  RunTotals t;
  for (const auto& p : run.processes) {
    if (!p.cuda_initialized) continue;
    t.measured = true;
    for (const auto& d : p.devices) {
      t.peak_reserved = std::max(t.peak_reserved, d.peak_reserved);
      t.peak_allocated = std::max(t.peak_allocated, d.peak_allocated);
      t.num_alloc_retries += d.num_alloc_retries;
      t.num_ooms += d.num_ooms;
    }
    for (const auto& o : p.ooms)
      if (!t.first_oom_seconds || o.seconds < *t.first_oom_seconds) t.first_oom_seconds = o.seconds;
  }
  return t;
}

bool ran_out_of_memory(const RunMeasure& run) {
  if (run.oom) return true;
  auto t = totals_of(run);
  return t.num_ooms > 0 || t.first_oom_seconds.has_value();
}

}  // namespace oomlens::rules::verify
