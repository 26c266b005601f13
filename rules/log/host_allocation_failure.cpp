// OOM204 host-allocation-failure: A host (CPU) memory allocation failed: not a GPU OOM.
#include <fmt/format.h>

#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {
namespace {

void describe(const analyzer::LogFinding& f, Diagnosis& d) {
  d.message = fmt::format("Host allocation failed, not GPU memory: {}", f.detail.empty() ? f.text : f.detail);
  d.explanation = "The failing allocation was in system RAM (PyTorch's CPU allocator, XLA's host memory). GPU allocator settings will not help: reduce what is loaded into host memory, or raise the container or host memory limit.";
}

}  // namespace

FindingRule host_allocation_failure_rule() {
  return {{"OOM204", "host-allocation-failure", "A host (CPU) memory allocation failed: not a GPU OOM."}, analyzer::FindingKind::cpu_alloc_failure, Severity::warning, describe};
}

}  // namespace oomlens::rules::log
