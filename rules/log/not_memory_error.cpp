// OOM205 not-an-out-of-memory-error: A CUDA error that is often mistaken for an out-of-memory failure but is a program bug.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule not_memory_error_rule() {
  return {{"OOM205", "not-an-out-of-memory-error", "A CUDA error that is often mistaken for an out-of-memory failure but is a program bug."},
          analyzer::FindingKind::not_memory_error,
          Severity::information,
          "Not an out-of-memory error",
          "Illegal memory accesses and device-side asserts are bugs (an index out of range, a wrong shape, a kernel reading past a buffer), not a lack of memory. Re-run with CUDA_LAUNCH_BLOCKING=1 to get the failing operation in the traceback; on CPU the same code usually raises a clear IndexError."};
}

}  // namespace oomlens::rules::log
