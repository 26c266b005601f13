// Training logs and pasted terminal output in the editor: the log rules'
// diagnoses as diagnostics (lsp/log_diagnostics.hpp), their Markdown in
// hovers, and code actions from the fixes each diagnostic carries
// (lsp/log_code_actions.cpp).
#pragma once

#include <atomic>
#include <string_view>

#include "lsp/document_features.hpp"

namespace oomlens::lsp {

const DocumentFeatures& log_features();

// Analyses text that is not a document (a selection, a terminal).
rules::LogReport analyze_text_report(std::string_view text, const Settings& settings, const std::atomic<bool>& cancelled);

// The log's code actions and their resolution (lsp/log_code_actions.cpp).
std::vector<CodeActionItem> log_code_actions(const DocumentAnalysis& analysis, const CodeActionParams& params,
                                             const ActionContext& context);
std::optional<ResolvedParts> resolve_log_code_action(const DocumentAnalysis& analysis,
                                                     const CodeActionResolveParams& action);

}  // namespace oomlens::lsp
