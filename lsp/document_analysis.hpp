// One analysed version of one document, and what the features read from it:
// diagnostics, hovers and code actions. Built off the protocol thread,
// immutable afterwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "analyzer/python/script.hpp"
#include "analyzer/log/segmented_log.hpp"
#include "lsp/capabilities.hpp"
#include "lsp/documents.hpp"
#include "rules/diagnosis.hpp"
#include "rules/source/config_lint.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::lsp {

struct DocumentAnalysis {
  DocumentSnapshot doc;
  PositionEncoding encoding = PositionEncoding::utf16;
  rules::LogReport report;              // log documents; empty otherwise
  // Large log documents: the analysis kept by segment, which the next
  // version's analysis updates around the edit instead of reading it all.
  std::shared_ptr<const analyzer::SegmentedLog> segmented;
  // A log that is one file of a job read together (lsp/job_analysis.hpp):
  // its index among the job's inputs, the `file` of the events read from
  // it. Only those give ranges here. 0 for a log read alone.
  std::uint32_t file = 0;
  // What the user should hear about how the job was read (a file that
  // could not be read, left out; a walk cut at its bound), for the log.
  std::vector<std::string> job_messages;
  // Python documents: the parsed script (kept for the next version's
  // incremental parse) and the source rules' diagnostics, in the order of
  // `diagnostics` after the syntax error (if any).
  std::shared_ptr<const analyzer::python::Script> script;
  std::optional<rules::ConfigFileKind> config_kind;  // shell/.env/launch.json documents
  std::vector<rules::SourceDiagnostic> source_diagnostics;
  rules::RuleOptions options;           // the settings it was made with (fix values)
  // The document-wide actions (set allocator config, record snapshot), made
  // on the first request that asks for them and kept: later requests on the
  // same version answer from here (source_features.cpp).
  mutable std::once_flag source_actions_once;
  mutable std::optional<rules::ScriptAction> set_alloc_conf_action;
  mutable std::optional<rules::ScriptAction> record_snapshot_action;
  nlohmann::json diagnostics = nlohmann::json::array();  // LSP Diagnostic[]
  bool cancelled = false;               // superseded while running: never published
};

// Logs from this size on are analysed by segment (DocumentAnalysis::segmented):
// below it a whole analysis takes less than re-reading the margins around an edit.
constexpr std::uint64_t kSegmentedLogBytes = 2 * analyzer::SegmentedLog::kSegmentBytes;

// An earlier version's segmented analysis of a log document and the edit
// that turns that version's text into the one analysed now (none: the same
// text, re-analysed for new settings).
struct LogBase {
  std::shared_ptr<const analyzer::SegmentedLog> log;
  std::optional<analyzer::LogEdit> edit;
};

// Analyses a document. `cancelled` is polled between pieces of the text;
// `progress(fraction)` is called now and then for large documents.
// `previous`, an earlier analysis of the same document, lets a script be
// re-parsed incrementally; `base` lets a large log be re-read only around
// an edit.
std::shared_ptr<const DocumentAnalysis> analyze_document(const DocumentSnapshot& doc, const Settings& settings,
                                                         PositionEncoding encoding, const std::atomic<bool>& cancelled,
                                                         const std::function<void(double)>& progress,
                                                         std::shared_ptr<const DocumentAnalysis> previous = nullptr,
                                                         const LogBase& base = {});

// Analyses text that is not a document (a selection, a terminal).
rules::LogReport analyze_text_report(std::string_view text, const Settings& settings, const std::atomic<bool>& cancelled);

// The hover for a position, or null when nothing is there.
nlohmann::json hover_at(const DocumentAnalysis& analysis, const nlohmann::json& position, bool markdown);

// The client's open document for a URI, null when it is not open: an edit of
// a script the client holds is made on its text and names its version.
using OpenDocuments = std::function<DocumentSnapshot(const std::string& uri)>;

// CodeAction[] (or Command[] for clients without literal support) for a
// range, honouring context.only; resolvable properties are left out and
// put back by resolve_code_action. An incident whose traceback names a
// script on this machine also gets quick fixes that edit that script.
nlohmann::json code_actions(const DocumentAnalysis& analysis, const nlohmann::json& params,
                            const ClientCapabilities& client, const OpenDocuments& open = {});
// Fills what code_actions left out; null when the action's data no longer
// matches the analysis (the document changed).
nlohmann::json resolve_code_action(const DocumentAnalysis& analysis, const nlohmann::json& action);

// The Markdown explanation of every incident and finding in a report.
std::string report_markdown(const rules::LogReport& report);

}  // namespace oomlens::lsp
