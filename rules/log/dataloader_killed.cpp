// OOM203 dataloader-worker-killed: A DataLoader worker process was killed, usually by the host OOM killer: not a GPU OOM.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule dataloader_killed_rule() {
  return {{"OOM203", "dataloader-worker-killed", "A DataLoader worker process was killed, usually by the host OOM killer: not a GPU OOM."},
          analyzer::FindingKind::dataloader_killed,
          Severity::warning,
          "DataLoader worker died",
          "A worker process of torch.utils.data.DataLoader was killed by a signal, most often SIGKILL from the host OOM killer. Each worker holds its own copy of the dataset object: lower num_workers or prefetch_factor, avoid Python lists of large objects in the Dataset (copy-on-read), and check shared memory (/dev/shm) in containers."};
}

}  // namespace oomlens::rules::log
