#include "lsp/action_support.hpp"

#include "rules/rule.hpp"

namespace oomlens::lsp {

using nlohmann::json;

json range_json(const Range& r) {
  return {{"start", {{"line", r.start.line}, {"character", r.start.character}}},
          {"end", {{"line", r.end.line}, {"character", r.end.character}}}};
}

int lsp_severity(rules::Severity s) {
  switch (s) {
    case rules::Severity::error: return 1;
    case rules::Severity::warning: return 2;
    case rules::Severity::information: return 3;
    case rules::Severity::hint: return 4;
  }
  return 1;
}

json diagnostic_json(const DocumentAnalysis& a, const rules::Diagnosis& d, ByteRange bytes, const std::string& ref) {
  return {{"range", range_json(a.doc->lines().range_of(bytes, a.encoding))},
          {"severity", lsp_severity(d.severity)},
          {"code", d.code},
          {"codeDescription", {{"href", rules::rule_doc_url(d.code)}}},
          {"source", "oomlens"},
          {"message", d.message},
          {"data", {{"oomlens", ref}, {"version", a.doc->version}}}};
}

bool kind_allowed(const std::string& kind, const json& only) {
  if (!only.is_array() || only.empty()) return true;
  for (const auto& o : only) {
    if (!o.is_string()) continue;
    const std::string& prefix = o.get_ref<const std::string&>();
    if (kind == prefix || kind.starts_with(prefix + ".")) return true;
  }
  return false;
}

bool explicitly_asked(const std::string& kind, const json& only) {
  return only.is_array() && !only.empty() && kind_allowed(kind, only);
}

json requested_kinds(const json& params) {
  return params.contains("context") && params["context"].is_object() ? params["context"].value("only", json()) : json();
}

std::vector<std::string> refs_in_request(const DocumentAnalysis& a, const json& params) {
  std::vector<std::string> refs;
  const json* diags = nullptr;
  if (params.contains("context") && params["context"].is_object() && params["context"].contains("diagnostics"))
    diags = &params["context"]["diagnostics"];
  if (diags && diags->is_array())
    for (const auto& d : *diags) {
      if (!d.is_object() || !d.contains("data") || !d["data"].is_object()) continue;
      const json& data = d["data"];
      if (data.value("version", json()) == json(a.doc->version) && data.contains("oomlens") && data["oomlens"].is_string())
        refs.push_back(data["oomlens"].get<std::string>());
    }
  if (!refs.empty() || !params.contains("range") || !params["range"].is_object()) return refs;
  const json& r = params["range"];
  try {
    std::uint32_t first = r.at("start").at("line").get<std::uint32_t>();
    std::uint32_t last = r.at("end").at("line").get<std::uint32_t>();
    for (const auto& d : a.diagnostics) {
      std::uint32_t start = d["range"]["start"]["line"].get<std::uint32_t>();
      std::uint32_t end = d["range"]["end"]["line"].get<std::uint32_t>();
      if (start <= last && end >= first) refs.push_back(d["data"]["oomlens"].get<std::string>());
    }
  } catch (const json::exception&) {
  }
  return refs;
}

const json* diagnostic_for(const DocumentAnalysis& a, const std::string& ref) {
  for (const auto& d : a.diagnostics)
    if (d["data"]["oomlens"].get_ref<const std::string&>() == ref) return &d;  // no json made of `ref`
  return nullptr;
}

}  // namespace oomlens::lsp
