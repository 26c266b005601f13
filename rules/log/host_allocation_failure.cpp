// OOM204's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM204.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule host_allocation_failure_rule() {
  return finding_rule<docs::OOM204>(analyzer::FindingKind::cpu_alloc_failure, Severity::warning);
}

}  // namespace oomlens::rules::log
