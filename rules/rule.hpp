// What a rule is: a stable code, a name for the pattern, a doc page, and the
// code that turns an analyzer fact into a Diagnosis. The words (code, name,
// summary, explanations) are written once, in the doc page; the build turns
// the pages into rules::docs::OOMnnn (cmake/rule_docs.py), which rule files
// read.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "rules/diagnose_log.hpp"

namespace oomlens::rules {

struct RuleInfo {
  std::string_view code;
  std::string_view name;
  std::string_view summary;
};

// A rule's identity from its doc page's constants (rules::docs::OOMnnn).
template <class Doc>
constexpr RuleInfo rule_info() {
  return {Doc::code, Doc::name, Doc::summary};
}

// A rule over incidents: applies to the incidents of one class.
struct IncidentRule {
  RuleInfo info;
  analyzer::OomClass cls;
  void (*describe)(const analyzer::Incident&, const RuleOptions&, Diagnosis&);
};

// A rule over findings that are not GPU OOMs: one finding kind each. Its
// message is `headline: <what the parser read>`; the explanation is fixed.
// Both come from the doc page (`Message: **headline**`, `Explanation: ...`).
struct FindingRule {
  RuleInfo info;
  analyzer::FindingKind kind;
  Severity severity;
  std::string_view headline;
  std::string_view explanation;
};

template <class Doc>
constexpr FindingRule finding_rule(analyzer::FindingKind kind, Severity severity) {
  return {rule_info<Doc>(), kind, severity, Doc::headline, Doc::explanation};
}

const std::vector<IncidentRule>& incident_rules();
const std::vector<FindingRule>& finding_rules();
std::vector<RuleInfo> all_rules();

// The rule's doc page (Markdown, embedded at build time), by code or name.
std::optional<std::string_view> rule_doc(std::string_view code_or_name);
std::optional<RuleInfo> find_rule(std::string_view code_or_name);

// Where the doc page lives online (codeDescription.href in LSP, SARIF helpUri).
std::string rule_doc_url(std::string_view code);

}  // namespace oomlens::rules
