// OOM206 collateral-rank-failure: A rank failed because another one did (NCCL timeout, launcher SIGTERM), not from its own OOM.
#include <fmt/format.h>

#include "rules/log/log_rules.hpp"

namespace oomlens::rules::log {
namespace {

void describe(const analyzer::LogFinding& f, Diagnosis& d) {
  d.message = fmt::format("Collateral failure: {}", f.detail.empty() ? f.text : f.detail);
  d.explanation = "When one rank dies, the others wait in a collective until NCCL's watchdog times out, and the launcher then terminates them. These failures are consequences: find the rank that failed first.";
}

}  // namespace

FindingRule collateral_rule() {
  return {{"OOM206", "collateral-rank-failure", "A rank failed because another one did (NCCL timeout, launcher SIGTERM), not from its own OOM."}, analyzer::FindingKind::collateral, Severity::information, describe};
}

}  // namespace oomlens::rules::log
