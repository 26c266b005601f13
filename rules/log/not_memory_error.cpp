// OOM205's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM205.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule not_memory_error_rule() {
  return finding_rule<docs::OOM205>(analyzer::FindingKind::not_memory_error, Severity::information);
}

}  // namespace oomlens::rules::log
