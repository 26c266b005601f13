// OOM201's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM201.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule pressure_warning_rule() {
  return finding_rule<docs::OOM201>(analyzer::FindingKind::allocator_pressure, Severity::warning);
}

}  // namespace oomlens::rules::log
