#include <fmt/format.h>

#include "rules/diagnose_log.hpp"
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

Fix edit_fix(std::string title, FixSafety safety, std::vector<TextEdit> edits) {
  Fix f;
  f.title = std::move(title);
  f.kind = FixKind::edit;
  f.safety = safety;
  f.edits = std::move(edits);
  return f;
}

const Fix* Diagnosis::automatic_fix() const {
  for (const auto& f : fixes)
    if (f.kind == FixKind::edit && !f.edits.empty()) return &f;
  return nullptr;
}

std::optional<std::uint64_t> Diagnosis::evidence_of(std::string_view wanted) const {
  for (const auto& e : evidence)
    if (e.name == wanted) return e.value;
  return std::nullopt;
}

Location source_location(analyzer::python::ByteRange range, analyzer::python::Point start) {
  return {0, start.line, start.line, SourceSpan{range, start}};
}

std::vector<Evidence> memory_evidence(const analyzer::MemoryNumbers& n) {
  std::vector<Evidence> out;
  auto put = [&out](const char* name, const std::optional<std::uint64_t>& v) {
    if (v) out.push_back({name, *v});
  };
  put("requested_bytes", n.requested);
  put("total_bytes", n.total);
  put("free_bytes", n.free);
  put("allocated_bytes", n.allocated);
  put("reserved_bytes", n.reserved);
  put("reserved_unallocated_bytes", n.reserved_unallocated);
  put("private_pools_bytes", n.private_pools);
  put("process_in_use_bytes", n.process_in_use);
  put("non_pytorch_bytes", n.non_pytorch);
  put("limit_bytes", n.limit);
  put("largest_free_block_bytes", n.largest_free_block);
  return out;
}

namespace {

// Every line a finding stands for: its first, the next few, and its last.
template <class Visit>
void each_line(const analyzer::LogFinding& f, Visit&& visit) {
  visit(f.line);
  for (auto l : f.more_lines) visit(l);
  if (f.count > 1 + f.more_lines.size()) visit(f.last_line);
}

std::vector<RelatedPlace> incident_related(const analyzer::Incident& inc) {
  using Kind = RelatedPlace::Kind;
  std::vector<RelatedPlace> out;
  for (const auto& echo : inc.echoes)
    out.push_back({Kind::echo, echo.file, echo.line, echo.end_line,
                   echo.rank && echo.rank != inc.primary.rank ? fmt::format("rank {} also ran out of memory", *echo.rank)
                                                              : std::string("the same failure, reported again")});
  for (const auto& f : inc.collateral)
    each_line(f, [&](std::uint64_t line) {
      out.push_back({Kind::collateral, f.file, line, line,
                     f.rank ? fmt::format("rank {} failed as a consequence", *f.rank)
                            : std::string("a consequence of this failure")});
    });
  for (const auto& f : inc.warnings_before)
    each_line(f, [&](std::uint64_t line) {
      out.push_back({Kind::warning, f.file, line, line, "a memory-pressure warning before the failure"});
    });
  return out;
}

// One diagnosis for all the repeats of one cause: the first few and the last.
std::vector<RelatedPlace> finding_related(const analyzer::LogFinding& f) {
  std::vector<RelatedPlace> out;
  if (f.count <= 1) return out;
  for (auto l : f.more_lines) out.push_back({RelatedPlace::Kind::repeat, f.file, l, l, "the same again"});
  if (f.last_line && f.last_line != f.line && (f.more_lines.empty() || f.more_lines.back() != f.last_line))
    out.push_back({RelatedPlace::Kind::repeat, f.file, f.last_line, f.last_line, fmt::format("the last of {}", f.count)});
  return out;
}

Diagnosis diagnosis_of(const RuleInfo& info, Severity severity) {
  Diagnosis d;
  d.code = std::string(info.code);
  d.name = std::string(info.name);
  d.severity = severity;
  return d;
}

}  // namespace

std::string not_analysed_note(const LogReport& report) {
  if (report.ooms_not_analysed == 0) return {};
  std::uint64_t analysed = 0;
  for (const auto& item : report.incidents) analysed += 1 + item.incident().echoes.size();
  return fmt::format("{} more GPU out-of-memory messages were counted but not analysed: oomlens keeps {} of a log's "
                     "messages, to bound its memory, and incidents among the rest are not in this report.",
                     report.ooms_not_analysed, analysed);
}

LogReport diagnose_log(analyzer::Analysis analysis, const RuleOptions& options) {
  LogReport report;
  report.bytes = analysis.bytes;
  report.lines = analysis.lines;
  report.capped = analysis.findings_capped;
  report.ooms_not_analysed = analysis.ooms_not_analysed;
  for (auto& inc : analysis.incidents) {
    for (const auto& rule : incident_rules()) {
      if (rule.cls != inc.verdict.cls) continue;
      Diagnosis d = diagnosis_of(rule.info, Severity::error);
      rule.describe(inc, options, d);
      d.evidence = memory_evidence(inc.primary.numbers);
      d.location = {inc.primary.file, inc.primary.line, inc.primary.end_line, std::nullopt};
      d.frame = inc.location;
      d.related = incident_related(inc);
      d.subject = std::move(inc);
      report.incidents.push_back(std::move(d));
      break;
    }
  }
  for (auto& f : analysis.findings) {
    for (const auto& rule : finding_rules()) {
      if (rule.kind != f.kind) continue;
      Diagnosis d = diagnosis_of(rule.info, rule.severity);
      d.message = std::string(rule.headline) + ": " + (f.detail.empty() ? f.text : f.detail);
      // Repeats of one cause are one finding.
      if (f.count > 1) d.message += fmt::format(" ({} times, lines {} to {})", f.count, f.line, f.last_line);
      d.explanation = std::string(rule.explanation);
      if (f.bytes) d.evidence.push_back({"bytes", *f.bytes});
      d.location = {f.file, f.line, f.line, std::nullopt};
      d.related = finding_related(f);
      d.subject = std::move(f);
      report.findings.push_back(std::move(d));
      break;
    }
  }
  return report;
}

}  // namespace oomlens::rules
