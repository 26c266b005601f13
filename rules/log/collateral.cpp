// OOM206's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM206.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule collateral_rule() {
  return finding_rule<docs::OOM206>(analyzer::FindingKind::collateral, Severity::information);
}

}  // namespace oomlens::rules::log
