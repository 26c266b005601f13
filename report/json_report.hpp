// The JSON contract of a diagnosed log (docs/json-contract.md), shared by the
// command line (--format json) and the language server (oomlens.diagnoseText,
// diagnostics' data), so both speak exactly the same shape.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "rules/diagnosis.hpp"

namespace oomlens::report {

struct FileReport {
  std::string path;  // as the user named it; "-" for standard input
  rules::LogReport report;
};

nlohmann::json report_json(const std::vector<FileReport>& files);
nlohmann::json incident_json(const std::string& path, const rules::IncidentDiagnosis& item);
nlohmann::json finding_json(const std::string& path, const rules::FindingDiagnosis& item);
nlohmann::json fixes_json(const std::vector<rules::Fix>& fixes);

}  // namespace oomlens::report
