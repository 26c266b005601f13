#include "lsp/log_features.hpp"

#include "analyzer/log/analyzer.hpp"
#include "lsp/log_diagnostics.hpp"
#include "lsp/markdown.hpp"
#include "rules/rule.hpp"

namespace oomlens::lsp {
namespace {

// Reads the text in pieces, so that a cancellation (a newer version) is seen
// between them; none for the rest once nothing can stop it.
std::optional<analyzer::Analysis> read_log(std::string_view text, const AnalysisInputs& in) {
  analyzer::LogAnalyzer analyzer;
  constexpr std::size_t kPiece = 1 << 20;
  for (std::size_t at = 0; at < text.size(); at += kPiece) {
    if (in.cancelled.load(std::memory_order_relaxed)) return std::nullopt;
    analyzer.feed(text.substr(at, kPiece));
    if (in.progress && (at / kPiece) % 16 == 15) in.progress(static_cast<double>(at) / static_cast<double>(text.size()));
  }
  return analyzer.finish();
}

// A large log, by segment: from the previous version's segments and the
// edit since when there are some, else read whole. False when cancelled.
bool read_segmented(DocumentAnalysis& a, const AnalysisInputs& in) {
  const LogBase& base = in.base;
  // Superseded while it waited its turn (a burst of keystrokes): the next
  // version's analysis follows the edits from the same base.
  if (base.log && in.cancelled.load(std::memory_order_relaxed)) return false;
  if (base.log && !base.edit) {
    a.segmented = base.log;  // the same text
  } else if (base.log) {
    auto updated = std::make_shared<analyzer::SegmentedLog>(*base.log);
    updated->apply(a.doc->text, *base.edit);
    a.segmented = std::move(updated);
  } else {
    // The line index is there already when the text came with a didOpen
    // (its line starts were collected as it was read), and is needed for
    // the diagnostics' positions anyway.
    auto whole = std::make_shared<analyzer::SegmentedLog>(a.doc->text, &in.cancelled, in.progress,
                                                          a.doc->lines().newline_starts());
    if (whole->incomplete()) return false;
    a.segmented = std::move(whole);
  }
  // Superseded: the segmented analysis is still this version's and is kept
  // (scheduling.cpp), but the report would never be published.
  return !in.cancelled.load(std::memory_order_relaxed);
}

class LogFeatures final : public DocumentFeatures {
 public:
  void analyze(DocumentAnalysis& a, const AnalysisInputs& in) const override {
    analyzer::Analysis analysis;
    if (a.doc->text.size() >= kSegmentedLogBytes) {
      if (!read_segmented(a, in)) {
        a.cancelled = true;
        return;
      }
      analysis = analyzer::analysis_of(a.segmented->parsed());
    } else {
      auto read = read_log(a.doc->text, in);
      if (!read) {
        a.cancelled = true;
        return;
      }
      analysis = std::move(*read);
    }
    a.report = rules::diagnose_log(std::move(analysis), a.options);
    a.diagnostics = log_diagnostics(a);
  }

  std::optional<Hover> hover(const DocumentAnalysis& a, Position position, bool markdown) const override {
    if (a.report.incidents.empty() && a.report.findings.empty()) return std::nullopt;
    auto offset = a.doc->lines().offset_of(position, a.encoding);
    if (!offset) return std::nullopt;
    std::uint64_t line = a.doc->lines().newline_line_of(*offset);
    std::string text;
    for (const auto& item : a.report.incidents)
      if (incident_covers(a, item.incident(), line)) {
        text = diagnosis_markdown(item);
        break;
      }
    if (text.empty())
      for (const auto& item : a.report.findings)
        if (item.location.file == a.file && item.location.line == line) {
          text = diagnosis_markdown(item);
          break;
        }
    if (text.empty()) return std::nullopt;
    return Hover{markdown, markdown ? text : markdown_to_plaintext(text)};
  }

  std::vector<CodeActionItem> code_actions(const DocumentAnalysis& a, const CodeActionParams& params,
                                           const ActionContext& context) const override {
    return log_code_actions(a, params, context);
  }

  std::optional<ResolvedParts> resolve(const DocumentAnalysis& a, const CodeActionResolveParams& action,
                                       const ClientCapabilities&) const override {
    return resolve_log_code_action(a, action);
  }
};

}  // namespace

const DocumentFeatures& log_features() {
  static const LogFeatures features;
  return features;
}

rules::LogReport analyze_text_report(std::string_view text, const Settings& settings, const std::atomic<bool>& cancelled) {
  analyzer::LogAnalyzer analyzer;
  constexpr std::size_t kPiece = 1 << 20;
  for (std::size_t at = 0; at < text.size() && !cancelled.load(std::memory_order_relaxed); at += kPiece)
    analyzer.feed(text.substr(at, kPiece));
  return rules::diagnose_log(analyzer.finish(), settings.rules);
}

}  // namespace oomlens::lsp
