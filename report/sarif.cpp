#include "report/sarif.hpp"

#include <fmt/format.h>

#include "rules/diagnose_log.hpp"
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

// Square brackets in a message that carries embedded links are escaped
// (SARIF 2.1.0, 3.11.6), so that only the links read as links.
std::string escape_brackets(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '[' || c == ']') out += '\\';
    out += c;
  }
  return out;
}

// The message with the words that name a related place in another file
// ("utils/memory.py at line 9") made a link to it, `[...](id)`.
struct MessageLinks {
  std::string text;
  bool linked = false;
  void link(const rules::RelatedPlace& place, int id) {
    // The message names the file by its path in the project, a tail of
    // the path as printed: try the whole path first, then shorter tails.
    std::string at_line = fmt::format(" at line {}", place.line);
    for (std::size_t from = 0; from < place.path.size();) {
      std::string named = escape_brackets(place.path.substr(from)) + at_line;
      if (auto found = text.find(named); found != std::string::npos) {
        text.replace(found, named.size(), fmt::format("[{}]({})", named, id));
        linked = true;
        return;
      }
      auto slash = place.path.find('/', from);
      if (slash == std::string::npos) return;
      from = slash + 1;
    }
  }
};

json result_json(const SarifResult& item) {
  const rules::Diagnosis& d = *item.diagnosis;
  json r = {{"ruleId", d.code},
            {"level", sarif_level(d.severity)},
            {"message", {{"text", d.message}}},
            {"locations", json::array({location_json(item)})}};
  if (int i = index_of(d.code); i >= 0) r["ruleIndex"] = i;
  json related = json::array();
  if (d.frame) {
    json rel = physical(d.frame->file, d.frame->line);
    rel["id"] = 1;
    rel["message"] = {{"text", "where the failing allocation was made in your code"}};
    related.push_back(std::move(rel));
  }
  // Places in other files of a script's project (the helper that flushes,
  // the module that starts CUDA), named as the result's own file is.
  MessageLinks message{escape_brackets(d.message)};
  for (const auto& place : d.related) {
    if (place.path.empty()) continue;
    int id = static_cast<int>(related.size()) + 1;
    json rel = physical(place.path, place.line);
    if (place.column > 0) rel["physicalLocation"]["region"]["startColumn"] = place.column;
    rel["id"] = id;
    rel["message"] = {{"text", place.message}};
    related.push_back(std::move(rel));
    message.link(place, id);
  }
  if (message.linked) r["message"]["text"] = std::move(message.text);
  if (!related.empty()) r["relatedLocations"] = std::move(related);
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

// A log read from standard input ("-") has no path; SARIF names it "stdin".
std::string log_uri(const std::string& path) { return path == "-" ? "stdin" : path; }

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
        results.push_back({&d, log_uri(file.path_of(d.location.file)), std::nullopt});
      }
  json out = sarif_json(results, false);
  // A log with more OOM messages than the analyzer keeps: the results are
  // not all there is, which SARIF says as a notification of the run.
  json notes = json::array();
  for (const auto& file : files)
    if (std::string note = rules::not_analysed_note(file.report); !note.empty())
      notes.push_back({{"level", "warning"},
                       {"message", {{"text", note}}},
                       {"locations",
                        json::array({{{"physicalLocation",
                                       {{"artifactLocation", {{"uri", log_uri(file.path)}}}}}}})}});
  if (!notes.empty())
    out["runs"][0]["invocations"] =
        json::array({{{"executionSuccessful", true}, {"toolExecutionNotifications", std::move(notes)}}});
  return out;
}

}  // namespace oomlens::report
