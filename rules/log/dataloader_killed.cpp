// OOM203's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM203.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule dataloader_killed_rule() {
  return finding_rule<docs::OOM203>(analyzer::FindingKind::dataloader_killed, Severity::warning);
}

}  // namespace oomlens::rules::log
