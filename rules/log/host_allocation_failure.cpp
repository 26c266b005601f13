// OOM204 host-allocation-failure: A host (CPU) memory allocation failed: not a GPU OOM.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule host_allocation_failure_rule() {
  return {{"OOM204", "host-allocation-failure", "A host (CPU) memory allocation failed: not a GPU OOM."},
          analyzer::FindingKind::cpu_alloc_failure,
          Severity::warning,
          "Host allocation failed, not GPU memory",
          "The failing allocation was in system RAM (PyTorch's CPU allocator, XLA's host memory). GPU allocator settings will not help: reduce what is loaded into host memory, or raise the container or host memory limit."};
}

}  // namespace oomlens::rules::log
