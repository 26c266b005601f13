// VS Code launch.json: JSON with comments and trailing commas (JSONC), read
// with analyzer/jsonc.hpp (every string keeps its source-byte map).
#include "analyzer/config/env_assignments.hpp"
#include "analyzer/jsonc.hpp"

namespace oomlens::analyzer::config {

using jsonc::JValue;

LaunchFile parse_launch_json(std::string_view text) {
  LaunchFile out;
  auto root = jsonc::parse(text);
  if (!root || root->kind != JValue::Kind::object) return out;
  const JValue* configs = root->member("configurations");
  if (!configs || configs->kind != JValue::Kind::array) return out;
  out.valid = true;
  for (const JValue& c : configs->items) {
    if (c.kind != JValue::Kind::object) continue;
    LaunchConfiguration lc;
    lc.begin = c.begin;
    lc.end = c.end;
    if (!c.members.empty()) lc.first_member = c.members.front().key.begin;
    if (const JValue* t = c.member("type"); t && t->kind == JValue::Kind::string) lc.type = t->text.value;
    if (const JValue* n = c.member("name"); n && n->kind == JValue::Kind::string) lc.name = n->text.value;
    auto entries = [](const JValue& env, bool windows_only, std::vector<EnvAssignment>& into) {
      for (const auto& [k, v] : env.members) {  // key, value
        if (v.kind != JValue::Kind::string) continue;
        EnvAssignment a;
        a.name = k.text.value;
        a.value = v.text;
        // VS Code substitutes ${env:X}, ${workspaceFolder} and the like.
        a.constant = a.value.value.find("${") == std::string::npos;
        a.name_begin = k.begin;
        a.statement_begin = k.begin;
        a.form = AssignmentForm::json;
        a.windows_only = windows_only;
        into.push_back(std::move(a));
      }
    };
    if (const JValue* env = c.member("env"); env && env->kind == JValue::Kind::object) {
      lc.env = std::pair{env->begin, env->end};
      if (!env->members.empty()) lc.env_first_member = env->members.front().key.begin;
      entries(*env, false, lc.env_entries);
    }
    if (const JValue* windows = c.member("windows"); windows && windows->kind == JValue::Kind::object)
      if (const JValue* env = windows->member("env"); env && env->kind == JValue::Kind::object)
        entries(*env, true, lc.windows_env_entries);
    out.configurations.push_back(std::move(lc));
  }
  return out;
}

std::vector<EnvAssignment> launch_json_assignments(std::string_view text) {
  std::vector<EnvAssignment> out;
  for (auto& c : parse_launch_json(text).configurations) {
    for (auto& a : c.env_entries) out.push_back(std::move(a));
    for (auto& a : c.windows_env_entries) out.push_back(std::move(a));
  }
  return out;
}

}  // namespace oomlens::analyzer::config
