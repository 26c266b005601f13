// Training scripts (Python documents) and the files that configure their runs
// (shell scripts, .env, .vscode/launch.json) in the editor: the source rules'
// diagnostics, hovers, and code actions whose edits are exact text edits on
// the version of the document the analysis was made from (the client
// rejects them if the document changed since: no lost text).
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "lsp/document_analysis.hpp"

namespace oomlens::lsp {

// A script: parses it (incrementally from `previous` when it holds an
// earlier script of the same document) and fills script; a configuration
// file: fills config_kind. Then source_diagnostics and diagnostics.
// Files over kMaxSourceBytes get one note instead; an analysis superseded
// after the parse stops there (cancelled).
void analyze_source(DocumentAnalysis& analysis, const DocumentAnalysis* previous, const std::atomic<bool>& cancelled);
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

// Whether the analysis is of a script or configuration file (these features),
// rather than of a log.
inline bool is_source(const DocumentAnalysis& analysis) {
  return analysis.doc->kind == DocumentKind::python || analysis.doc->kind == DocumentKind::config;
}

nlohmann::json source_hover(const DocumentAnalysis& analysis, const nlohmann::json& position, bool markdown);

// Quick fixes of the diagnostics in the request, and (when `only` asks for
// them) the source actions: source.fixAll.oomlens, source.oomlens.setAllocatorConf,
// source.oomlens.recordSnapshot (scripts), source.oomlens.verify (commands
// that re-run the script with and without the allocator setting).
nlohmann::json source_code_actions(const DocumentAnalysis& analysis, const nlohmann::json& params,
                                   const ClientCapabilities& client);
// Puts back the edit left out for clients that resolve it; null when the
// action no longer matches the analysis.
nlohmann::json resolve_source_code_action(const DocumentAnalysis& analysis, const nlohmann::json& action,
                                          const ClientCapabilities& client);

// `oomlens.fixScript`: the edit of one fix on the script (or, for "env",
// on a configuration file), as {"title", "safety", "edit", "verify"} — or
// {"title": null, "edit": null, "message"} when the
// script needs no change (already fixed) or the fix does not apply.
// `versioned` is false for a script read from disk (not open in the client):
// its edit then names no version. Throws ParamsError for a malformed fix.
nlohmann::json script_fix(const DocumentAnalysis& analysis, const nlohmann::json& fix,
                          const ClientCapabilities& client, bool versioned);

// An analysis made for computing fixes (not one of the server's analyses):
// of a document snapshot, or of a file the client has not opened, read from
// disk (nothing, with the reason in `error`, when it cannot be read). Its
// script_fix edits name no version unless asked to.
std::shared_ptr<const DocumentAnalysis> analyze_for_fixes(const DocumentSnapshot& doc, const ClientCapabilities& client,
                                                          const Settings& settings);
std::shared_ptr<const DocumentAnalysis> analyze_file_for_fixes(const std::string& uri, const std::string& path,
                                                               const ClientCapabilities& client,
                                                               const Settings& settings, std::string& error);

}  // namespace oomlens::lsp
