// OOM202 host-oom-kill: The operating system killed the process for using too much host (CPU) memory: not a GPU OOM.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule host_oom_kill_rule() {
  return {{"OOM202", "host-oom-kill", "The operating system killed the process for using too much host (CPU) memory: not a GPU OOM."},
          analyzer::FindingKind::host_oom_kill,
          Severity::warning,
          "Host memory exhausted, not GPU memory",
          "The kernel's OOM killer (or a container limit) ended the process because system RAM ran out. GPU settings will not help: look at DataLoader workers and prefetching, pinned-memory buffers, datasets loaded into RAM, and the container's memory limit (dmesg or kubectl describe shows the kill)."};
}

}  // namespace oomlens::rules::log
