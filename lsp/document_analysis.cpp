#include "lsp/document_analysis.hpp"

#include "analyzer/log/analyzer.hpp"
#include "lsp/log_diagnostics.hpp"
#include "lsp/markdown.hpp"
#include "lsp/source_features.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {
namespace {

using nlohmann::json;

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
  a->diagnostics = log_diagnostics(*a);
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
    if (incident_covers(a, item.incident, line)) {
      text = incident_markdown(item);
      break;
    }
  if (text.empty())
    for (const auto& item : a.report.findings)
      if (item.finding.file == a.file && item.finding.line == line) {
        text = finding_markdown(item);
        break;
      }
  if (text.empty()) return nullptr;
  if (!markdown) text = markdown_to_plaintext(text);
  return {{"contents", {{"kind", markdown ? "markdown" : "plaintext"}, {"value", text}}}};
}

}  // namespace oomlens::lsp
