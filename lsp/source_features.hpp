// Training scripts (Python documents) and the files that configure their runs
// (shell scripts, .env, .vscode/launch.json) in the editor: the source rules'
// diagnostics, hovers, and code actions whose edits are exact text edits on
// the version of the document the analysis was made from
// (lsp/source_code_actions.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lsp/document_features.hpp"

namespace oomlens::lsp {

// A script is parsed (incrementally from an earlier version's) and linted; a
// configuration file is linted. Files over kMaxSourceBytes get one note
// instead; an analysis superseded after the parse stops there (cancelled).
const DocumentFeatures& source_features();
inline constexpr std::size_t kMaxSourceBytes = 16u << 20;

// Quick fixes of the diagnostics in the request, and (when `only` asks for
// them) the source actions: source.fixAll.oomlens, source.oomlens.setAllocatorConf,
// source.oomlens.recordSnapshot (scripts), source.oomlens.verify (the
// `oomlens verify` A/B run of the script with and without the allocator setting).
std::vector<CodeActionItem> source_code_actions(const DocumentAnalysis& analysis, const CodeActionParams& params,
                                                const ClientCapabilities& client);
// `oomlens.verify`: the `oomlens verify` command for a script (with `conf`,
// else the allocator option the server proposes) or a log (its first
// incident's); empty when the document has neither.
std::string verify_command_for(const DocumentAnalysis& analysis, const std::optional<std::string>& conf);

// Puts back the edit left out for clients that resolve it; nothing when the
// action no longer matches the analysis.
std::optional<ResolvedParts> resolve_source_code_action(const DocumentAnalysis& analysis,
                                                        const CodeActionResolveParams& action,
                                                        const ClientCapabilities& client);

// `oomlens.fixScript`: the edit of one fix on the script (or, for "env",
// on a configuration file), or why there is none (the script needs no
// change, or the fix does not apply). `versioned` is false for a script read
// from disk (not open in the client): its edit then names no version.
ScriptFix script_fix(const DocumentAnalysis& analysis, const FixRequest& fix, const ClientCapabilities& client,
                     bool versioned);

// An analysis made for computing fixes (not one of the server's analyses):
// of a document snapshot, or of a file the client has not opened, read from
// disk (nothing, with the reason in `error`, when it cannot be read). Kept
// for a few requests (lsp/fix_analyses.cpp).
std::shared_ptr<const DocumentAnalysis> analyze_for_fixes(const DocumentSnapshot& doc, const ClientCapabilities& client,
                                                          const Settings& settings);
std::shared_ptr<const DocumentAnalysis> analyze_file_for_fixes(const std::string& uri, const std::string& path,
                                                               const ClientCapabilities& client,
                                                               const Settings& settings, std::string& error);

}  // namespace oomlens::lsp
