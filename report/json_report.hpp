// The JSON contract of a diagnosed log (docs/json-contract.md), shared by the
// command line (--format json) and the language server (oomlens.diagnoseText,
// diagnostics' data), so both speak exactly the same shape.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/diagnosis_json.hpp"
#include "rules/diagnose_log.hpp"

namespace oomlens::report {

// One file of a job read as one log.
struct InputFile {
  std::string path;
  std::uint64_t bytes = 0;
  std::uint64_t lines = 0;
  bool capped = false;
  std::optional<int> rank;  // the rank its path names
  std::uint64_t ooms_not_analysed = 0;
};

struct FileReport {
  FileReport() = default;
  FileReport(std::string path_, rules::LogReport report_, std::vector<InputFile> inputs_ = {})
      : path(std::move(path_)), report(std::move(report_)), inputs(std::move(inputs_)) {}

  std::string path;  // as the user named it; "-" for standard input; a job's: the directory its files share
  rules::LogReport report;
  // A job's files, indexed by OomEvent::file and LogFinding::file; empty for
  // a single input, which is `path`.
  std::vector<InputFile> inputs;

  const std::string& path_of(std::uint32_t file) const { return file < inputs.size() ? inputs[file].path : path; }
};

// What a caller adds to the contract beyond its fixed keys.
struct ReportJsonOptions {
  // Each incident's memory breakdown (rules/breakdown.hpp) as `breakdown`:
  // the parts the terminal bar and the hover draw, for clients that draw it
  // themselves. Off for `diagnose --format json`, whose output is fixed by its
  // goldens; on for the language server's oomlens.diagnoseText.
  bool breakdown = false;
};

nlohmann::json report_json(const std::vector<FileReport>& files, const ReportJsonOptions& options = {});
nlohmann::json incident_json(const FileReport& file, const rules::Diagnosis& incident,
                             const ReportJsonOptions& options = {});
nlohmann::json finding_json(const FileReport& file, const rules::Diagnosis& finding);
// The memory breakdown of a message's figures: {"total_bytes", "total_is_device",
// "parts": [{"kind", "label", "bytes"}]}; null when the figures are too few to draw.
nlohmann::json breakdown_json(const analyzer::MemoryNumbers& numbers);

}  // namespace oomlens::report
