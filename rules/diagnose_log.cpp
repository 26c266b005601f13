#include <fmt/format.h>

#include "rules/diagnosis.hpp"
#include "rules/rule.hpp"

namespace oomlens::rules {

const char* to_string(Severity s) {
  switch (s) {
    case Severity::error: return "error";
    case Severity::warning: return "warning";
    case Severity::information: return "information";
    case Severity::hint: return "hint";
  }
  return "error";
}

const char* to_string(FixKind k) {
  switch (k) {
    case FixKind::env: return "env";
    case FixKind::edit: return "edit";
    case FixKind::command: return "command";
    case FixKind::advice: return "advice";
  }
  return "advice";
}

const char* to_string(FixSafety s) {
  switch (s) {
    case FixSafety::safe: return "safe";
    case FixSafety::unsafe: return "unsafe";
    case FixSafety::display_only: return "display-only";
  }
  return "display-only";
}

LogReport diagnose_log(analyzer::Analysis analysis, const RuleOptions& options) {
  LogReport report;
  report.bytes = analysis.bytes;
  report.lines = analysis.lines;
  report.capped = analysis.findings_capped;
  for (auto& inc : analysis.incidents) {
    for (const auto& rule : incident_rules()) {
      if (rule.cls != inc.verdict.cls) continue;
      Diagnosis d{std::string(rule.info.code), std::string(rule.info.name), Severity::error, {}, {}, {}, {}};
      rule.describe(inc, options, d);
      report.incidents.push_back({std::move(inc), std::move(d)});
      break;
    }
  }
  for (auto& f : analysis.findings) {
    for (const auto& rule : finding_rules()) {
      if (rule.kind != f.kind) continue;
      Diagnosis d{std::string(rule.info.code), std::string(rule.info.name), rule.severity, {}, {}, {}, {}};
      d.message = std::string(rule.headline) + ": " + (f.detail.empty() ? f.text : f.detail);
      // Repeats of one cause are one finding.
      if (f.count > 1) d.message += fmt::format(" ({} times, lines {} to {})", f.count, f.line, f.last_line);
      d.explanation = std::string(rule.explanation);
      report.findings.push_back({std::move(f), std::move(d)});
      break;
    }
  }
  return report;
}

}  // namespace oomlens::rules
