// Code actions from the fixes each diagnostic carries in its data: no second
// analysis of the log (ruff's way). Fixes are offered in their command form
// (the shell setting, the verification command), and, when the traceback
// names a script on this machine, as edits of that script.
#include <fmt/format.h>

#include "analyzer/alloc_conf.hpp"
#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "lsp/source_features.hpp"
#include "lsp/document_analysis.hpp"

namespace oomlens::lsp {
namespace {

using nlohmann::json;

struct ActionSpec {
  std::string title;
  std::string kind;
  bool preferred = false;
  json command;
};

json command(std::string title, const char* name, json arguments) {
  return {{"title", std::move(title)}, {"command", name}, {"arguments", std::move(arguments)}};
}

std::string script_name(const analyzer::Incident& inc) {
  if (!inc.entry) return "your script";
  const std::string& f = inc.entry->file;
  auto slash = f.find_last_of("/\\");
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

std::vector<ActionSpec> incident_actions(const rules::IncidentDiagnosis& item) {
  const auto& d = item.diagnosis;
  std::vector<ActionSpec> specs;
  std::string script = script_name(item.incident);
  std::string script_path = item.incident.entry ? item.incident.entry->file : "";
  for (const auto& f : d.fixes) {
    if (f.kind == rules::FixKind::env) {
      std::string title = fmt::format("Set {}={} for {}", f.env_name, f.env_value, script);
      specs.push_back({title, "quickfix", f.safety == rules::FixSafety::safe,
                       command(title, kShowFix,
                               json::array({{{"kind", "env"}, {"name", f.env_name}, {"value", f.env_value},
                                             {"script", script_path}, {"safety", rules::to_string(f.safety)},
                                             {"detail", f.detail}}}))});
    } else if (f.kind == rules::FixKind::command) {
      std::string title = fmt::format("Run: {}", f.command);
      specs.push_back({title, "quickfix", false, command(title, kRunVerification, json::array({f.command}))});
    } else if (f.title.starts_with("Record a memory snapshot")) {
      std::string title = fmt::format("Record a memory snapshot in {}", script);
      specs.push_back({title, "quickfix", false,
                       command(title, kShowFix,
                               json::array({{{"kind", "snapshot"}, {"script", script_path}, {"detail", f.detail}}}))});
    }
  }
  if (!d.verify.empty()) {
    specs.push_back({"Run the verification command", "quickfix", false,
                     command("Run the verification command", kRunVerification, json::array({d.verify}))});
    specs.push_back({"Copy the verification command", "quickfix", false,
                     command("Copy the verification command", kCopyVerification, json::array({d.verify}))});
  }
  return specs;
}

std::vector<ActionSpec> finding_actions(const rules::FindingDiagnosis& item) {
  std::string title = fmt::format("Explain {} {}", item.diagnosis.code, item.diagnosis.name);
  return {{title, "quickfix", false, command(title, kExplain, json::array({item.diagnosis.code}))}};
}

// "incident:3" / "finding:0" -> its actions; empty for a stale reference.
std::vector<ActionSpec> actions_for(const DocumentAnalysis& a, const std::string& ref) {
  auto colon = ref.find(':');
  if (colon == std::string::npos) return {};
  std::size_t index = 0;
  try {
    index = std::stoul(ref.substr(colon + 1));
  } catch (...) {
    return {};
  }
  std::string what = ref.substr(0, colon);
  if (what == "incident" && index < a.report.incidents.size()) return incident_actions(a.report.incidents[index]);
  if (what == "finding" && index < a.report.findings.size()) return finding_actions(a.report.findings[index]);
  return {};
}

// The incident an "incident:N" reference names; null for anything else
// (a reference sent back by the client is not trusted to be well formed).
const rules::IncidentDiagnosis* incident_of(const DocumentAnalysis& a, const std::string& ref) {
  if (!ref.starts_with("incident:") || ref.size() == 9 || ref.size() > 18) return nullptr;
  std::size_t index = 0;
  for (char c : std::string_view(ref).substr(9)) {
    if (c < '0' || c > '9') return nullptr;
    index = index * 10 + static_cast<std::size_t>(c - '0');
  }
  return index < a.report.incidents.size() ? &a.report.incidents[index] : nullptr;
}

// Quick fixes that edit the script the incident's traceback starts in: the
// allocator setting and the snapshot recording, computed on the client's
// open version of the script or on the file. Appended after the command
// actions, whose indices resolve relies on. Nothing when the script is not a
// file here or needs no change.
void script_edit_actions(const DocumentAnalysis& a, const rules::IncidentDiagnosis& item, const json* diagnostic,
                         const ClientCapabilities& client, const OpenDocuments& open, json& actions) {
  const auto& inc = item.incident;
  if (!inc.entry || !inc.entry->file.starts_with('/')) return;
  const std::string& path = inc.entry->file;
  auto uri = file_uri_from_path(path);
  if (!uri) return;
  Settings settings;
  settings.rules = a.options;
  DocumentSnapshot held = open ? open(*uri) : nullptr;
  std::string error;
  // One analysis of the script for all the fixes.
  auto script = held ? analyze_for_fixes(held, client, settings)
                     : analyze_file_for_fixes(*uri, path, client, settings, error);
  if (!script) return;  // not readable here (a log from another machine): no edits to offer
  for (const auto& f : item.diagnosis.fixes) {
    json fix;
    if (f.kind == rules::FixKind::env && analyzer::is_alloc_conf_variable(f.env_name)) {
      fix = {{"kind", "env"}, {"name", f.env_name}, {"value", f.env_value}};
    } else if (f.title.starts_with("Record a memory snapshot")) {
      fix = {{"kind", "snapshot"}};
      if (inc.location && inc.location->file == path && inc.location->line > 0) fix["line"] = inc.location->line;
    } else {
      continue;
    }
    json result = script_fix(*script, fix, client, held != nullptr);
    if (result["edit"].is_null()) continue;
    json action = {{"title", fmt::format("{}: {}", script_name(inc), result["title"].get<std::string>())},
                   {"kind", "quickfix"},
                   {"edit", std::move(result["edit"])}};
    if (diagnostic) action["diagnostics"] = json::array({*diagnostic});
    actions.push_back(std::move(action));
  }
}

}  // namespace

json code_actions(const DocumentAnalysis& a, const json& params, const ClientCapabilities& client,
                  const OpenDocuments& open) {
  json only = requested_kinds(params);
  json actions = json::array();
  for (const auto& ref : refs_in_request(a, params)) {
    auto specs = actions_for(a, ref);
    const json* diagnostic = diagnostic_for(a, ref);
    for (std::size_t k = 0; k < specs.size(); ++k) {
      auto& spec = specs[k];
      if (!kind_allowed(spec.kind, only)) continue;
      if (!client.code_action_literals) {
        actions.push_back(std::move(spec.command));
        continue;
      }
      json action = {{"title", spec.title}, {"kind", spec.kind}, {"command", std::move(spec.command)}};
      if (diagnostic) action["diagnostics"] = json::array({*diagnostic});
      if (spec.preferred) action["isPreferred"] = true;
      action["data"] = {{"uri", a.doc->uri}, {"version", a.doc->version}, {"ref", ref}, {"index", k}};
      // Clients that resolve lazily get the command on codeAction/resolve.
      if (client.resolve_command) action.erase("command");
      actions.push_back(std::move(action));
    }
    if (client.code_action_literals && kind_allowed("quickfix", only))
      if (const auto* item = incident_of(a, ref)) script_edit_actions(a, *item, diagnostic, client, open, actions);
  }
  const std::string explain_kind = "source.oomlens.explain";
  if (client.code_action_literals && kind_allowed(explain_kind, only) &&
      (!a.report.incidents.empty() || !a.report.findings.empty()) &&
      (only.is_array() && !only.empty())) {
    // Source actions only when asked for: they are document-wide, not tied to
    // a cursor, and would clutter every quick-fix menu.
    actions.push_back({{"title", "Explain every out-of-memory failure in this log"},
                       {"kind", explain_kind},
                       {"command", command("Explain every out-of-memory failure in this log", kExplainDocument,
                                           json::array({a.doc->uri}))}});
  }
  return actions;
}

json resolve_code_action(const DocumentAnalysis& a, const json& action) {
  if (!action.is_object() || !action.contains("data") || !action["data"].is_object()) return nullptr;
  const json& data = action["data"];
  if (data.value("version", json()) != json(a.doc->version) || !data.contains("ref") || !data["ref"].is_string() ||
      !data.contains("index") || !data["index"].is_number_unsigned())
    return nullptr;
  auto specs = actions_for(a, data["ref"].get<std::string>());
  std::size_t k = data["index"].get<std::size_t>();
  if (k >= specs.size()) return nullptr;
  json resolved = action;
  // Resolve fills what was left out and changes nothing already set.
  if (!resolved.contains("command")) resolved["command"] = specs[k].command;
  return resolved;
}

}  // namespace oomlens::lsp
