// SARIF 2.1.0 output, for CI systems and code-scanning dashboards.
#include "cli/report.hpp"
#include "rules/rule.hpp"

namespace oomlens::cli {
namespace {

using nlohmann::json;

const char* sarif_level(rules::Severity s) {
  switch (s) {
    case rules::Severity::error: return "error";
    case rules::Severity::warning: return "warning";
    default: return "note";
  }
}

json physical(const std::string& uri, std::uint64_t line) {
  return {{"physicalLocation", {{"artifactLocation", {{"uri", uri}}}, {"region", {{"startLine", line}}}}}};
}

std::string uri_of(const std::string& path) { return path == "-" ? "stdin" : path; }

}  // namespace

json report_sarif(const std::vector<FileReport>& files) {
  json rules_json = json::array();
  std::vector<std::string> codes;
  for (const auto& r : rules::all_rules()) {
    codes.emplace_back(r.code);
    rules_json.push_back({{"id", r.code},
                          {"name", r.name},
                          {"shortDescription", {{"text", r.summary}}},
                          {"helpUri", rules::rule_doc_url(r.code)}});
  }
  auto index_of = [&](const std::string& code) {
    for (std::size_t i = 0; i < codes.size(); ++i)
      if (codes[i] == code) return static_cast<int>(i);
    return -1;
  };
  json results = json::array();
  for (const auto& file : files) {
    for (const auto& item : file.report.incidents) {
      const auto& inc = item.incident;
      json r = {{"ruleId", item.diagnosis.code},
                {"ruleIndex", index_of(item.diagnosis.code)},
                {"level", sarif_level(item.diagnosis.severity)},
                {"message", {{"text", item.diagnosis.message}}},
                {"locations", json::array({physical(uri_of(file.path), inc.primary.line)})},
                {"properties", {{"class", analyzer::to_string(inc.verdict.cls)}, {"verify", item.diagnosis.verify}}}};
      if (inc.location) {
        json rel = physical(inc.location->file, inc.location->line);
        rel["id"] = 1;
        rel["message"] = {{"text", "where the failing allocation was made in your code"}};
        r["relatedLocations"] = json::array({rel});
      }
      results.push_back(std::move(r));
    }
    for (const auto& item : file.report.findings)
      results.push_back({{"ruleId", item.diagnosis.code},
                         {"ruleIndex", index_of(item.diagnosis.code)},
                         {"level", sarif_level(item.diagnosis.severity)},
                         {"message", {{"text", item.diagnosis.message}}},
                         {"locations", json::array({physical(uri_of(file.path), item.finding.line)})}});
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({{{"tool",
                                  {{"driver",
                                    {{"name", "oomlens"},
                                     {"version", OOMLENS_VERSION},
                                     {"informationUri", "https://github.com/oomlens/oomlens"},
                                     {"rules", rules_json}}}}},
                                 {"results", results}}})}};
}

}  // namespace oomlens::cli
