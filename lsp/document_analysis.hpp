// One analysed version of one document: what the features of its kind
// (lsp/document_features.hpp) found in it, for its diagnostics, hovers and
// code actions. Built off the protocol thread, immutable afterwards.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "analyzer/python/script.hpp"
#include "analyzer/log/segmented_log.hpp"
#include "lsp/capabilities.hpp"
#include "lsp/documents.hpp"
#include "lsp/protocol.hpp"
#include "rules/diagnose_log.hpp"
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
  std::vector<rules::Diagnosis> source_diagnostics;
  rules::RuleOptions options;           // the settings it was made with (fix values)
  // The document-wide actions (set allocator config, record snapshot), made
  // on the first request that asks for them and kept: later requests on the
  // same version answer from here (source_code_actions.cpp).
  mutable std::once_flag source_actions_once;
  mutable std::optional<rules::Fix> set_alloc_conf_action;
  mutable std::optional<rules::Fix> record_snapshot_action;
  std::vector<Diagnostic> diagnostics;
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

}  // namespace oomlens::lsp
