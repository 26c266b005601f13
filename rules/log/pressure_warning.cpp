// OOM201 allocator-pressure-warning: The allocator is running at the edge of memory: it flushes its cache or retries to avoid an OOM.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule pressure_warning_rule() {
  return {{"OOM201", "allocator-pressure-warning", "The allocator is running at the edge of memory: it flushes its cache or retries to avoid an OOM."},
          analyzer::FindingKind::allocator_pressure,
          Severity::warning,
          "Allocator under memory pressure",
          "The allocator had to flush its cache or retry to satisfy requests. Each flush synchronises the device and calls cudaFree/cudaMalloc again: steps slow down, and the next larger step can fail with an OOM. Treat it as an early warning: the fixes for fragmentation (expandable_segments) and capacity (smaller micro-batch) apply."};
}

}  // namespace oomlens::rules::log
