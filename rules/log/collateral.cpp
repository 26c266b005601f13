// OOM206 collateral-rank-failure: A rank failed because another one did (NCCL timeout, launcher SIGTERM), not from its own OOM.
#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {

FindingRule collateral_rule() {
  return {{"OOM206", "collateral-rank-failure", "A rank failed because another one did (NCCL timeout, launcher SIGTERM), not from its own OOM."},
          analyzer::FindingKind::collateral,
          Severity::information,
          "Collateral failure",
          "When one rank dies, the others wait in a collective until NCCL's watchdog times out, and the launcher then terminates them. These failures are consequences: find the rank that failed first."};
}

}  // namespace oomlens::rules::log
