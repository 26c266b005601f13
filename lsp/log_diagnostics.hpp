// A log's report as LSP diagnostics on the analysed document, and which of
// its lines an incident covers (hovers). A log that is one file of a job
// (lsp/job_analysis.hpp) shares its report with the job's other files: only
// the events and findings read from this document (their `file` is its
// index) give ranges here; the other files' lines become related locations.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "lsp/document_analysis.hpp"
#include "lsp/protocol.hpp"

namespace oomlens::lsp {

// What the diagnostics of one file of a job know of the job's other files.
struct OtherFiles {
  std::vector<std::string> labels;  // how messages name each input, by index
  // Where '\n' lines [first, last] of input `file` are; nothing when unknown.
  std::function<std::optional<Location>(std::uint32_t file, std::uint64_t first, std::uint64_t last)> locate;
};

// The Diagnostics of analysis.report on its document (input analysis.file):
// the incidents, then the findings, each once. An incident whose message
// is in another file but that has an echo or a collateral failure here gets
// its diagnostic on that line, naming the rank that failed first and where.
std::vector<Diagnostic> log_diagnostics(const DocumentAnalysis& analysis, const OtherFiles* others = nullptr);

// Whether '\n' line `line` of the document is one of those the incident's
// diagnostic there stands for (its messages, or the line it is anchored on).
bool incident_covers(const DocumentAnalysis& analysis, const analyzer::Incident& incident, std::uint64_t line);

}  // namespace oomlens::lsp
