#include "lsp/document_features.hpp"

#include "lsp/log_features.hpp"
#include "lsp/source_features.hpp"

namespace oomlens::lsp {
namespace {

// A document of a kind the server does not read: no diagnostics, no features.
class NoFeatures final : public DocumentFeatures {
 public:
  void analyze(DocumentAnalysis&, const AnalysisInputs&) const override {}
  std::optional<Hover> hover(const DocumentAnalysis&, Position, bool) const override { return std::nullopt; }
  std::vector<CodeActionItem> code_actions(const DocumentAnalysis&, const CodeActionParams&,
                                           const ActionContext&) const override {
    return {};
  }
  std::optional<ResolvedParts> resolve(const DocumentAnalysis&, const CodeActionResolveParams&,
                                       const ClientCapabilities&) const override {
    return std::nullopt;
  }
};

}  // namespace

const DocumentFeatures& features_for(DocumentKind kind) {
  static const NoFeatures none;
  switch (kind) {
    case DocumentKind::log: return log_features();
    case DocumentKind::python:
    case DocumentKind::config: return source_features();
    case DocumentKind::other: return none;
  }
  return none;
}

std::shared_ptr<const DocumentAnalysis> analyze_document(const DocumentSnapshot& doc, const Settings& settings,
                                                         PositionEncoding encoding, const std::atomic<bool>& cancelled,
                                                         const std::function<void(double)>& progress,
                                                         const std::shared_ptr<const DocumentAnalysis>& previous,
                                                         const LogBase& base,
                                                         const std::optional<ProjectMember>& project) {
  auto a = std::make_shared<DocumentAnalysis>();
  a->doc = doc;
  a->encoding = encoding;
  a->options = settings.rules;
  features_for(doc->kind).analyze(*a, AnalysisInputs{cancelled, progress, previous.get(), base, project});
  return a;
}

}  // namespace oomlens::lsp
