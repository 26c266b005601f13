// A diagnosed input, and the three ways the terminal front end writes them.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "report/json_report.hpp"
#include "rules/diagnosis.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::cli {

using report::FileReport;
using report::InputFile;

// One input read through the analyzer, its events not yet grouped.
struct ReadResult {
  std::optional<analyzer::ParsedLog> log;
  bool binary = false;  // skipped: a NUL byte in the first 8 KiB (only when asked to skip)
  std::string error;    // when neither: the reason ("No such file or directory", "is a directory")
};

// Reads and parses one input ("-" = standard input) with bounded memory,
// streaming it through the analyzer with read(2). With `skip_binary`, a file
// with a NUL byte in its first 8 KiB is left unread, as ripgrep leaves it.
ReadResult read_log(const std::string& path, bool skip_binary);

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
};
// SARIF 2.1.0 of `oomlens lint`, fixes included as byte-offset replacements.
nlohmann::json lint_sarif(const std::vector<LintedFile>& files);

}  // namespace oomlens::cli
