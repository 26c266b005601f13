#include "report/diagnosis_json.hpp"

namespace oomlens::report {

using nlohmann::json;

namespace {

json edits_json(const std::vector<rules::TextEdit>& edits) {
  json list = json::array();
  for (const auto& e : edits) list.push_back({{"begin", e.begin}, {"end", e.end}, {"replacement", e.replacement}});
  return list;
}

}  // namespace

json diagnosis_json(const rules::Diagnosis& d, const std::string& file, DiagnosisContract contract) {
  json j = {{"file", file},
            {"line", d.location.line},
            {"name", d.name},
            {"severity", rules::to_string(d.severity)},
            {"message", d.message}};
  if (contract == DiagnosisContract::log) {
    j["rule"] = d.code;
    j["explanation"] = d.explanation;
  } else {
    j["code"] = d.code;
    j["column"] = d.location.source ? d.location.source->start.column : 0;
    // Places in other files of the script's project (a related place of
    // its own file would have no path).
    json related = json::array();
    for (const auto& r : d.related)
      if (!r.path.empty())
        related.push_back({{"file", r.path}, {"line", r.line}, {"column", r.column}, {"message", r.message}});
    if (!related.empty()) j["related"] = std::move(related);
  }
  return j;
}

json fixes_json(const std::vector<rules::Fix>& fixes) {
  json list = json::array();
  for (const auto& f : fixes) {
    json j = {{"title", f.title}, {"kind", rules::to_string(f.kind)}, {"safety", rules::to_string(f.safety)}};
    if (f.kind == rules::FixKind::env) j["env"] = {{"name", f.env_name}, {"value", f.env_value}};
    if (!f.command.empty()) j["command"] = f.command;
    if (!f.detail.empty()) j["detail"] = f.detail;
    if (!f.edits.empty()) j["edits"] = edits_json(f.edits);
    list.push_back(std::move(j));
  }
  return list;
}

bool fix_applies(const rules::Diagnosis& d, bool unsafe) {
  const rules::Fix* fix = d.automatic_fix();
  return fix && (fix->safety == rules::FixSafety::safe || (unsafe && fix->safety == rules::FixSafety::unsafe));
}

json automatic_fix_json(const rules::Diagnosis& d, bool unsafe) {
  const rules::Fix* fix = d.automatic_fix();
  if (!fix) return nullptr;
  return {{"safety", rules::to_string(fix->safety)},
          {"title", fix->title},
          {"applicable", fix_applies(d, unsafe)},
          {"edits", edits_json(fix->edits)}};
}

}  // namespace oomlens::report
