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

// The rule catalogue as SARIF reportingDescriptors; results point into it.
json rules_json() {
  json out = json::array();
  for (const auto& r : rules::all_rules())
    out.push_back({{"id", r.code},
                   {"name", r.name},
                   {"shortDescription", {{"text", r.summary}}},
                   {"helpUri", rules::rule_doc_url(r.code)}});
  return out;
}

int index_of(const std::string& code) {
  const auto& all = rules::all_rules();
  for (std::size_t i = 0; i < all.size(); ++i)
    if (all[i].code == code) return static_cast<int>(i);
  return -1;
}

json sarif_log(json results, const json& run_properties = json::object()) {
  json run = {{"tool",
               {{"driver",
                 {{"name", "oomlens"},
                  {"version", OOMLENS_VERSION},
                  {"informationUri", "https://github.com/oomlens/oomlens"},
                  {"rules", rules_json()}}}}},
              {"results", std::move(results)}};
  run.update(run_properties);
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(run)})}};
}

}  // namespace

json report_sarif(const std::vector<FileReport>& files) {
  json results = json::array();
  for (const auto& file : files) {
    for (const auto& item : file.report.incidents) {
      const auto& inc = item.incident;
      json r = {{"ruleId", item.diagnosis.code},
                {"ruleIndex", index_of(item.diagnosis.code)},
                {"level", sarif_level(item.diagnosis.severity)},
                {"message", {{"text", item.diagnosis.message}}},
                {"locations", json::array({physical(uri_of(file.path_of(inc.primary.file)), inc.primary.line)})},
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
                         {"locations", json::array({physical(uri_of(file.path_of(item.finding.file)), item.finding.line)})}});
  }
  return sarif_log(std::move(results));
}

json lint_sarif(const std::vector<LintedFile>& files) {
  json results = json::array();
  for (const auto& file : files)
    for (std::size_t k = 0; k < file.diagnostics.size(); ++k) {
      const auto& d = file.diagnostics[k];
      json location = {{"physicalLocation",
                        {{"artifactLocation", {{"uri", file.path}}},
                         {"region",
                          {{"startLine", d.start.line},
                           {"startColumn", d.start.column},
                           {"byteOffset", d.range.begin},
                           {"byteLength", d.range.end - d.range.begin}}}}}};
      if (!file.cells.empty()) {
        // A notebook's positions are in a cell, not in the file's JSON text:
        // SARIF has no cells, so the cell goes in properties, with no region
        // and no byte-offset fix that would land in the wrong bytes.
        location["physicalLocation"].erase("region");
        location["properties"] = {
            {"cellIndex", file.cells[k]}, {"cellLine", d.start.line}, {"cellColumn", d.start.column}};
      }
      json r = {{"ruleId", d.diagnosis.code},
                {"level", sarif_level(d.diagnosis.severity)},
                {"message", {{"text", d.diagnosis.message}}},
                {"locations", json::array({location})}};
      if (int i = index_of(d.diagnosis.code); i >= 0) r["ruleIndex"] = i;
      if (d.fix_safety && !d.edits.empty() && file.cells.empty()) {
        json replacements = json::array();
        for (const auto& e : d.edits)
          replacements.push_back({{"deletedRegion", {{"byteOffset", e.begin}, {"byteLength", e.end - e.begin}}},
                                  {"insertedContent", {{"text", e.replacement}}}});
        std::string title = d.diagnosis.fixes.empty() ? "Fix" : d.diagnosis.fixes.front().title;
        r["fixes"] = json::array({{{"description", {{"text", title}}},
                                   {"artifactChanges", json::array({{{"artifactLocation", {{"uri", file.path}}},
                                                                     {"replacements", replacements}}})}}});
        r["properties"] = {{"fixSafety", rules::to_string(*d.fix_safety)}};
      }
      results.push_back(std::move(r));
    }
  // Columns count code points, as the text output does.
  return sarif_log(std::move(results), {{"columnKind", "unicodeCodePoints"}});
}

}  // namespace oomlens::cli
