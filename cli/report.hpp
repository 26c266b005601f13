// A diagnosed input, and the three ways the terminal front end writes them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/json_report.hpp"
#include "report/log_file.hpp"
#include "rules/diagnosis.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::cli {

using report::FileReport;
using report::InputFile;

// Reading a log: shared with the language server (report/log_file.hpp).
using report::read_log;
using report::ReadResult;

struct TextStyle {
  bool color = false;
  std::size_t bar_width = 50;
};
void render_text(std::ostream& out, const std::vector<FileReport>& files, const TextStyle& style);

// SARIF 2.1.0 for CI and code-scanning tools.
nlohmann::json report_sarif(const std::vector<FileReport>& files);

// A linted script or configuration file: its diagnostics in source order,
// a syntax error as code E999 (with no fix).
struct LintedFile {
  std::string path;
  std::vector<rules::SourceDiagnostic> diagnostics;
  // A notebook's: the cell of each diagnostic (index in the notebook's cells,
  // from 0), whose positions are then in that cell. Empty for other files.
  std::vector<std::size_t> cells;
};
// SARIF 2.1.0 of `oomlens lint`, fixes included as byte-offset replacements.
nlohmann::json lint_sarif(const std::vector<LintedFile>& files);

}  // namespace oomlens::cli
