// The log rules' entry point: an analysis's incidents and findings as
// Diagnoses (rule.hpp lists the rules, rules/log/ holds one per file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::rules {

struct LogReport {
  std::vector<Diagnosis> incidents;  // each with its analyzer::Incident as subject
  std::vector<Diagnosis> findings;   // each with its analyzer::LogFinding as subject
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  bool capped = false;
  std::uint64_t ooms_not_analysed = 0;  // analyzer::Analysis::ooms_not_analysed
};

// Choices a user can make about the fixes proposed (LSP settings).
struct RuleOptions {
  // The allocator option proposed against fragmentation.
  std::string fragmentation_option = "expandable_segments:True";
};

// Runs every log rule over an analysis.
LogReport diagnose_log(analyzer::Analysis analysis, const RuleOptions& options = {});

// What a report whose log held more OOM messages than the analyzer keeps
// must say, wherever it is shown (text, SARIF, the editor): its incidents
// are not all there is. Empty when every message was analysed.
std::string not_analysed_note(const LogReport& report);

// The named figures of a message (requested_bytes, total_bytes, ...): those
// the log gives, in a fixed order.
std::vector<Evidence> memory_evidence(const analyzer::MemoryNumbers& numbers);

}  // namespace oomlens::rules
