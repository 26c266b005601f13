#include "lsp/action_support.hpp"

#include "lsp/local_files.hpp"
#include "report/diagnosis_json.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {

int lsp_severity(rules::Severity s) {
  switch (s) {
    case rules::Severity::error: return 1;
    case rules::Severity::warning: return 2;
    case rules::Severity::information: return 3;
    case rules::Severity::hint: return 4;
  }
  return 1;
}

Diagnostic diagnostic_of(const DocumentAnalysis& a, const rules::Diagnosis& d, ByteRange bytes, std::string ref) {
  Diagnostic out;
  out.range = a.doc->lines().range_of(bytes, a.encoding);
  out.severity = lsp_severity(d.severity);
  out.code = d.code;
  out.code_href = rules::rule_doc_url(d.code);
  out.message = d.message;
  out.data.ref = std::move(ref);
  out.data.version = a.doc->version;
  if (const auto* fix = d.automatic_fix()) out.data.fix_safety = std::string(rules::to_string(fix->safety));
  if (const auto* inc = std::get_if<analyzer::Incident>(&d.subject)) {
    out.data.verdict_class = std::string(analyzer::to_string(inc->verdict.cls));
    out.data.fixes = report::fixes_json(d.fixes);
    out.data.verify = d.verify;
    if (inc->entry) out.data.script = inc->entry->file;
  }
  // A script's places in other files of its project (a log's related places
  // are its own lines: log_diagnostics.cpp).
  std::vector<DiagnosticRelatedInformation> related;
  for (const auto& r : d.related) {
    auto uri = r.path.empty() ? std::nullopt : file_uri_from_path(r.path);
    if (!uri) continue;
    Position at{static_cast<std::uint32_t>(r.line > 0 ? r.line - 1 : 0), r.column > 0 ? r.column - 1 : 0};
    related.push_back({Location{*uri, Range{at, at}}, r.message});
  }
  if (!related.empty()) out.related_information = std::move(related);
  return out;
}

Diagnostic diagnostic_of(const DocumentAnalysis& a, const rules::Diagnosis& d, std::string ref) {
  const auto& where = d.location;
  ByteRange bytes = where.source ? ByteRange{where.source->range.begin, where.source->range.end}
                                 : a.doc->lines().newline_lines_bytes(where.line, where.end_line);
  return diagnostic_of(a, d, bytes, std::move(ref));
}

bool kind_allowed(const std::string& kind, const Kinds& only) {
  if (!only || only->empty()) return true;
  for (const auto& prefix : *only)
    if (!prefix.empty() && (kind == prefix || kind.starts_with(prefix + "."))) return true;
  return false;
}

bool explicitly_asked(const std::string& kind, const Kinds& only) {
  return only && !only->empty() && kind_allowed(kind, only);
}

std::vector<std::string> refs_in_request(const DocumentAnalysis& a, const CodeActionParams& params) {
  std::vector<std::string> refs;
  for (const auto& d : params.diagnostics)
    if (d.version == a.doc->version) refs.push_back(d.ref);
  if (!refs.empty() || !params.range) return refs;
  std::uint32_t first = params.range->start.line;
  std::uint32_t last = params.range->end.line;
  for (const auto& d : a.diagnostics)
    if (d.range.start.line <= last && d.range.end.line >= first) refs.push_back(d.data.ref);
  return refs;
}

const Diagnostic* diagnostic_for(const DocumentAnalysis& a, const std::string& ref) {
  for (const auto& d : a.diagnostics)
    if (d.data.ref == ref) return &d;
  return nullptr;
}

std::vector<Diagnostic> about(const Diagnostic* diagnostic) {
  if (!diagnostic) return {};
  Diagnostic echo;
  echo.range = diagnostic->range;
  echo.severity = diagnostic->severity;
  echo.code = diagnostic->code;
  echo.code_href = diagnostic->code_href;
  echo.message = diagnostic->message;
  echo.related_information = diagnostic->related_information;
  echo.data.ref = diagnostic->data.ref;
  echo.data.version = diagnostic->data.version;
  return {std::move(echo)};
}

}  // namespace oomlens::lsp
