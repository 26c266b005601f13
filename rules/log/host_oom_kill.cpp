// OOM202's finding rule. Its words (name, summary, headline, explanation) are
// on its doc page, rules/docs/OOM202.md, read at build time.
#include "rules/log/log_rules.hpp"
#include "rule_doc_texts.hpp"  // generated from rules/docs/*.md

namespace oomlens::rules::log {

FindingRule host_oom_kill_rule() {
  return finding_rule<docs::OOM202>(analyzer::FindingKind::host_oom_kill, Severity::warning);
}

}  // namespace oomlens::rules::log
