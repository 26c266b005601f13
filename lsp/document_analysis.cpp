#include "lsp/document_analysis.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "analyzer/analyzer.hpp"
#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "lsp/markdown.hpp"
#include "lsp/source_features.hpp"
#include "report/json_report.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {
namespace {

using nlohmann::json;

// The bytes of '\n'-counted lines [first, last] (as the analyzer reports
// them), without the final line terminator.
ByteRange line_bytes(const LineIndex& lines, std::uint64_t first, std::uint64_t last) {
  std::size_t begin = lines.newline_line_start(first);
  std::size_t end = lines.newline_line_start(last + 1);
  std::string_view text = lines.text();
  while (end > begin && (text[end - 1] == '\n' || text[end - 1] == '\r')) --end;
  return {begin, std::max(begin, end)};
}

json related(const std::string& uri, const Range& range, const std::string& message) {
  return {{"location", {{"uri", uri}, {"range", range_json(range)}}}, {"message", message}};
}

json incident_diagnostic(const DocumentAnalysis& a, std::size_t index) {
  const auto& item = a.report.incidents[index];
  const auto& inc = item.incident;
  const LineIndex& lines = a.doc->lines();
  json d = diagnostic_json(a, item.diagnosis, line_bytes(lines, inc.primary.line, inc.primary.end_line),
                      fmt::format("incident:{}", index));
  d["data"]["class"] = analyzer::to_string(inc.verdict.cls);
  d["data"]["fixes"] = report::fixes_json(item.diagnosis.fixes);
  d["data"]["verify"] = item.diagnosis.verify;
  if (inc.entry) d["data"]["script"] = inc.entry->file;
  json rel = json::array();
  if (inc.location) {
    if (auto uri = file_uri_from_path(inc.location->file)) {
      std::uint32_t line = inc.location->line > 0 ? static_cast<std::uint32_t>(inc.location->line - 1) : 0;
      rel.push_back(related(*uri, Range{{line, 0}, {line, 0}},
                            fmt::format("the failing call in your code{}",
                                        inc.location->function.empty() ? "" : " (" + inc.location->function + ")")));
    }
  }
  for (const auto& echo : inc.echoes) {
    if (rel.size() >= 32) break;
    std::string what = echo.rank && echo.rank != inc.primary.rank ? fmt::format("rank {} also ran out of memory", *echo.rank)
                                                                  : std::string("the same failure, reported again");
    rel.push_back(related(a.doc->uri, lines.range_of(line_bytes(lines, echo.line, echo.end_line), a.encoding), what));
  }
  auto each_line = [](const analyzer::LogFinding& f, auto&& visit) {
    visit(f.line);
    for (auto l : f.more_lines) visit(l);
    if (f.count > 1 + f.more_lines.size()) visit(f.last_line);
  };
  for (const auto& f : inc.collateral)
    each_line(f, [&](std::uint64_t line) {
      if (rel.size() >= 48) return;
      rel.push_back(related(a.doc->uri, lines.range_of(line_bytes(lines, line, line), a.encoding),
                            f.rank ? fmt::format("rank {} failed as a consequence", *f.rank)
                                   : std::string("a consequence of this failure")));
    });
  for (const auto& f : inc.warnings_before)
    each_line(f, [&](std::uint64_t line) {
      if (rel.size() >= 56) return;
      rel.push_back(related(a.doc->uri, lines.range_of(line_bytes(lines, line, line), a.encoding),
                            "a memory-pressure warning before the failure"));
    });
  if (!rel.empty()) d["relatedInformation"] = rel;
  return d;
}

json finding_diagnostic(const DocumentAnalysis& a, std::size_t index) {
  const auto& item = a.report.findings[index];
  const auto& f = item.finding;
  const LineIndex& lines = a.doc->lines();
  json d = diagnostic_json(a, item.diagnosis, line_bytes(lines, f.line, f.line), fmt::format("finding:{}", index));
  // One diagnostic for all the repeats of one cause, pointing at the first
  // few and the last.
  if (f.count > 1) {
    json rel = json::array();
    auto add = [&](std::uint64_t line, std::string message) {
      rel.push_back(related(a.doc->uri, lines.range_of(line_bytes(lines, line, line), a.encoding), message));
    };
    for (auto l : f.more_lines) add(l, "the same again");
    if (f.last_line && f.last_line != f.line &&
        (f.more_lines.empty() || f.more_lines.back() != f.last_line))
      add(f.last_line, fmt::format("the last of {}", f.count));
    d["relatedInformation"] = rel;
  }
  return d;
}

bool contains_line(const analyzer::Incident& inc, std::uint64_t line) {
  if (line >= inc.primary.line && line <= inc.primary.end_line) return true;
  return std::any_of(inc.echoes.begin(), inc.echoes.end(),
                     [&](const analyzer::OomEvent& e) { return line >= e.line && line <= e.end_line; });
}

std::optional<Position> read_position(const json& j) {
  if (!j.is_object() || !j.contains("line") || !j.contains("character") || !j["line"].is_number_unsigned() ||
      !j["character"].is_number_unsigned())
    return std::nullopt;
  return Position{j["line"].get<std::uint32_t>(), j["character"].get<std::uint32_t>()};
}

}  // namespace

rules::LogReport analyze_text_report(std::string_view text, const Settings& settings, const std::atomic<bool>& cancelled) {
  analyzer::LogAnalyzer analyzer;
  constexpr std::size_t kPiece = 1 << 20;
  for (std::size_t at = 0; at < text.size() && !cancelled.load(std::memory_order_relaxed); at += kPiece)
    analyzer.feed(text.substr(at, kPiece));
  return rules::diagnose_log(analyzer.finish(), settings.rules);
}

std::shared_ptr<const DocumentAnalysis> analyze_document(const DocumentSnapshot& doc, const Settings& settings,
                                                         PositionEncoding encoding, const std::atomic<bool>& cancelled,
                                                         const std::function<void(double)>& progress,
                                                         std::shared_ptr<const DocumentAnalysis> previous,
                                                         const LogBase& base) {
  auto a = std::make_shared<DocumentAnalysis>();
  a->doc = doc;
  a->encoding = encoding;
  a->options = settings.rules;
  if (doc->kind == DocumentKind::python || doc->kind == DocumentKind::config) {
    analyze_source(*a, previous.get(), cancelled);
    return a;
  }
  if (doc->kind != DocumentKind::log) return a;

  std::string_view text = doc->text;
  analyzer::Analysis analysis;
  if (text.size() >= kSegmentedLogBytes) {
    // Superseded while it waited its turn (a burst of keystrokes): the next
    // version's analysis follows the edits from the same base.
    if (base.log && cancelled.load(std::memory_order_relaxed)) {
      a->cancelled = true;
      return a;
    }
    if (base.log && !base.edit) {
      a->segmented = base.log;  // the same text
    } else if (base.log) {
      auto updated = std::make_shared<analyzer::SegmentedLog>(*base.log);
      updated->apply(text, *base.edit);
      a->segmented = std::move(updated);
    } else {
      auto whole = std::make_shared<analyzer::SegmentedLog>(text, &cancelled, progress);
      if (whole->incomplete()) {
        a->cancelled = true;
        return a;
      }
      a->segmented = std::move(whole);
    }
    // Superseded: the segmented analysis is still this version's and is kept
    // (text_sync.cpp), but the report would never be published.
    if (cancelled.load(std::memory_order_relaxed)) {
      a->cancelled = true;
      return a;
    }
    analysis = analyzer::analysis_of(a->segmented->parsed());
  } else {
    analyzer::LogAnalyzer analyzer;
    constexpr std::size_t kPiece = 1 << 20;
    for (std::size_t at = 0; at < text.size(); at += kPiece) {
      if (cancelled.load(std::memory_order_relaxed)) {
        a->cancelled = true;
        return a;
      }
      analyzer.feed(text.substr(at, kPiece));
      if (progress && (at / kPiece) % 16 == 15) progress(static_cast<double>(at) / static_cast<double>(text.size()));
    }
    analysis = analyzer.finish();
  }
  a->report = rules::diagnose_log(std::move(analysis), settings.rules);
  for (std::size_t i = 0; i < a->report.incidents.size(); ++i) a->diagnostics.push_back(incident_diagnostic(*a, i));
  for (std::size_t i = 0; i < a->report.findings.size(); ++i) a->diagnostics.push_back(finding_diagnostic(*a, i));
  return a;
}

json hover_at(const DocumentAnalysis& a, const json& position, bool markdown) {
  auto pos = read_position(position);
  if (!pos || (a.report.incidents.empty() && a.report.findings.empty())) return nullptr;
  auto offset = a.doc->lines().offset_of(*pos, a.encoding);
  if (!offset) return nullptr;
  std::uint64_t line = a.doc->lines().newline_line_of(*offset);
  std::string text;
  for (const auto& item : a.report.incidents)
    if (contains_line(item.incident, line)) {
      text = incident_markdown(item);
      break;
    }
  if (text.empty())
    for (const auto& item : a.report.findings)
      if (item.finding.line == line) {
        text = finding_markdown(item);
        break;
      }
  if (text.empty()) return nullptr;
  if (!markdown) text = markdown_to_plaintext(text);
  return {{"contents", {{"kind", markdown ? "markdown" : "plaintext"}, {"value", text}}}};
}

}  // namespace oomlens::lsp
