// What the client can do (read once from initialize), what the user chose
// (settings), and the commands the server announces. lsp/protocol.cpp reads
// the first two from their JSON and says the rest of what the server announces.
#pragma once

#include <cstddef>

#include "lsp/positions.hpp"
#include "rules/diagnose_log.hpp"

namespace oomlens::lsp {

struct ClientCapabilities {
  PositionEncoding encoding = PositionEncoding::utf16;
  bool pull_diagnostics = false;      // textDocument.diagnostic: then never push
  bool diagnostic_refresh = false;    // workspace.diagnostics.refreshSupport
  bool code_action_literals = false;  // codeActionLiteralSupport: CodeAction[] instead of Command[]
  bool resolve_command = false;       // codeAction resolveSupport.properties has "command" (and dataSupport)
  bool resolve_edit = false;          // ... has "edit"
  bool document_changes = false;      // workspace.workspaceEdit.documentChanges
  bool work_done_progress = false;    // window.workDoneProgress
  bool configuration = false;         // workspace.configuration
  bool markdown_hover = false;        // hover.contentFormat includes markdown
  bool inlay_hint_refresh = false;    // workspace.inlayHint.refreshSupport
  bool watch_files = false;           // workspace.didChangeWatchedFiles.dynamicRegistration
  bool show_message = true;
};

// Settings under the "oomlens" section (initializationOptions or
// workspace/configuration), e.g. {"allocatorOption": "expandable_segments:True"}.
struct Settings {
  rules::RuleOptions rules;
  std::size_t progress_threshold_bytes = 4u << 20;  // show progress for documents this large
};

// The commands the server executes (workspace/executeCommand).
inline constexpr const char* kDiagnoseText = "oomlens.diagnoseText";
inline constexpr const char* kExplain = "oomlens.explain";
inline constexpr const char* kExplainDocument = "oomlens.explainDocument";
inline constexpr const char* kCopyVerification = "oomlens.copyVerification";
inline constexpr const char* kRunVerification = "oomlens.runVerification";
inline constexpr const char* kShowFix = "oomlens.showFix";
inline constexpr const char* kFixScript = "oomlens.fixScript";
inline constexpr const char* kAnalyzeSnapshot = "oomlens.analyzeSnapshot";
inline constexpr const char* kCompareSnapshots = "oomlens.compareSnapshots";
inline constexpr const char* kVerify = "oomlens.verify";

}  // namespace oomlens::lsp
