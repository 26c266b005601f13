// SARIF 2.1.0, for CI systems and code-scanning dashboards: one renderer for
// the diagnoses of logs (`diagnose --format sarif`) and of scripts and
// configuration files (`lint --format sarif`).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "report/json_report.hpp"
#include "rules/diagnosis.hpp"

namespace oomlens::report {

// One diagnosis to report, and where: the artifact's URI and, for a
// notebook, the cell its positions are in (SARIF has no cells).
struct SarifResult {
  const rules::Diagnosis* diagnosis = nullptr;
  std::string uri;
  std::optional<std::size_t> cell;
};

// The SARIF log of one run over `results`. `code_point_columns`: columns
// count code points, as lint's text output does (`columnKind`).
nlohmann::json sarif_json(const std::vector<SarifResult>& results, bool code_point_columns);

// The SARIF of diagnosed logs: each file's incidents, then its findings.
nlohmann::json logs_sarif(const std::vector<FileReport>& files);

}  // namespace oomlens::report
