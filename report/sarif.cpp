#include "report/sarif.hpp"

#include "rules/rule.hpp"

namespace oomlens::report {
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

json location_json(const SarifResult& item) {
  const auto& where = item.diagnosis->location;
  json location = physical(item.uri, where.line);
  if (item.cell) {
    // A notebook's positions are in a cell, not in the file's JSON text:
    // the cell goes in properties, with no region and no byte-offset fix
    // that would land in the wrong bytes.
    location["physicalLocation"].erase("region");
    location["properties"] = {{"cellIndex", *item.cell},
                              {"cellLine", where.line},
                              {"cellColumn", where.source ? where.source->start.column : 0}};
  } else if (where.source) {
    auto& region = location["physicalLocation"]["region"];
    region["startColumn"] = where.source->start.column;
    region["byteOffset"] = where.source->range.begin;
    region["byteLength"] = where.source->range.end - where.source->range.begin;
  }
  return location;
}

json result_json(const SarifResult& item) {
  const rules::Diagnosis& d = *item.diagnosis;
  json r = {{"ruleId", d.code},
            {"level", sarif_level(d.severity)},
            {"message", {{"text", d.message}}},
            {"locations", json::array({location_json(item)})}};
  if (int i = index_of(d.code); i >= 0) r["ruleIndex"] = i;
  if (d.frame) {
    json rel = physical(d.frame->file, d.frame->line);
    rel["id"] = 1;
    rel["message"] = {{"text", "where the failing allocation was made in your code"}};
    r["relatedLocations"] = json::array({rel});
  }
  if (const auto* inc = std::get_if<analyzer::Incident>(&d.subject))
    r["properties"] = {{"class", analyzer::to_string(inc->verdict.cls)}, {"verify", d.verify}};
  const rules::Fix* fix = d.automatic_fix();
  if (fix && !item.cell) {
    json replacements = json::array();
    for (const auto& e : fix->edits)
      replacements.push_back({{"deletedRegion", {{"byteOffset", e.begin}, {"byteLength", e.end - e.begin}}},
                              {"insertedContent", {{"text", e.replacement}}}});
    r["fixes"] = json::array({{{"description", {{"text", fix->title}}},
                               {"artifactChanges", json::array({{{"artifactLocation", {{"uri", item.uri}}},
                                                                 {"replacements", replacements}}})}}});
    r["properties"] = {{"fixSafety", rules::to_string(fix->safety)}};
  }
  return r;
}

}  // namespace

json sarif_json(const std::vector<SarifResult>& results, bool code_point_columns) {
  json list = json::array();
  for (const auto& item : results) list.push_back(result_json(item));
  json run = {{"tool",
               {{"driver",
                 {{"name", "oomlens"},
                  {"version", OOMLENS_VERSION},
                  {"informationUri", "https://github.com/oomlens/oomlens"},
                  {"rules", rules_json()}}}}},
              {"results", std::move(list)}};
  if (code_point_columns) run["columnKind"] = "unicodeCodePoints";
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", json::array({std::move(run)})}};
}

json logs_sarif(const std::vector<FileReport>& files) {
  std::vector<SarifResult> results;
  for (const auto& file : files)
    for (const auto* list : {&file.report.incidents, &file.report.findings})
      for (const auto& d : *list) {
        const std::string& path = file.path_of(d.location.file);
        results.push_back({&d, path == "-" ? "stdin" : path, std::nullopt});
      }
  return sarif_json(results, false);
}

}  // namespace oomlens::report
