// The one result type every front end renders (see DESIGN.md, "Data flow").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"

namespace oomlens::rules {

enum class Severity { error, warning, information, hint };
enum class FixKind { env, edit, command, advice };
// In ruff's sense: safe keeps behaviour, unsafe may change it, display-only is
// advice a person has to carry out.
enum class FixSafety { safe, unsafe, display_only };

// A byte-range edit on a source file: replace [begin, end) with replacement.
struct TextEdit {
  std::size_t begin = 0;
  std::size_t end = 0;
  std::string replacement;
  friend bool operator==(const TextEdit&, const TextEdit&) = default;
};

struct Fix {
  std::string title;
  FixKind kind = FixKind::advice;
  FixSafety safety = FixSafety::display_only;
  std::string env_name;   // kind env
  std::string env_value;  // kind env: the full value to set (merged with what the log showed)
  std::string command;    // kind command
  std::string detail;     // why, caveats
};

struct Diagnosis {
  std::string code;         // stable rule code, e.g. "OOM101"
  std::string name;         // the pattern's name, e.g. "allocator-fragmentation"
  Severity severity = Severity::error;
  std::string message;      // one line carrying the key numbers
  std::string explanation;  // a short Markdown explanation
  std::vector<Fix> fixes;
  std::string verify;       // a command to run next
};

struct IncidentDiagnosis {
  analyzer::Incident incident;
  Diagnosis diagnosis;
};

struct FindingDiagnosis {
  analyzer::LogFinding finding;
  Diagnosis diagnosis;
};

struct LogReport {
  std::vector<IncidentDiagnosis> incidents;
  std::vector<FindingDiagnosis> findings;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  bool capped = false;
};

const char* to_string(Severity s);
const char* to_string(FixKind k);
const char* to_string(FixSafety s);

// Choices a user can make about the fixes proposed (LSP settings).
struct RuleOptions {
  // The allocator option proposed against fragmentation.
  std::string fragmentation_option = "expandable_segments:True";
};

// Runs every log rule over an analysis.
LogReport diagnose_log(analyzer::Analysis analysis, const RuleOptions& options = {});

}  // namespace oomlens::rules
