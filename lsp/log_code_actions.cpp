// Code actions from the fixes each diagnostic carries in its data: no second
// analysis of the log (ruff's way). Fixes are offered in their command form
// (the shell setting, the verification command), and, when the traceback
// names a script on this machine, as edits of that script.
#include <fmt/format.h>

#include "analyzer/alloc_conf.hpp"
#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "lsp/log_features.hpp"
#include "lsp/source_features.hpp"

namespace oomlens::lsp {
namespace {

struct ActionSpec {
  std::string title;
  std::string kind;
  bool preferred = false;
  Command command;
};

Command command(std::string title, const char* name, CommandArgument argument) {
  return {std::move(title), name, {std::move(argument)}};
}

std::string script_name(const analyzer::Incident& inc) {
  if (!inc.entry) return "your script";
  const std::string& f = inc.entry->file;
  auto slash = f.find_last_of("/\\");
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

std::vector<ActionSpec> incident_actions(const rules::Diagnosis& d) {
  std::vector<ActionSpec> specs;
  std::string script = script_name(d.incident());
  std::string script_path = d.incident().entry ? d.incident().entry->file : "";
  for (const auto& f : d.fixes) {
    if (f.kind == rules::FixKind::env) {
      std::string title = fmt::format("Set {}={} for {}", f.env_name, f.env_value, script);
      specs.push_back({title, "quickfix", f.safety == rules::FixSafety::safe,
                       command(title, kShowFix,
                               FixRequest{.kind = "env",
                                          .name = f.env_name,
                                          .value = f.env_value,
                                          .script = script_path,
                                          .safety = std::string(rules::to_string(f.safety)),
                                          .detail = f.detail})});
    } else if (f.kind == rules::FixKind::command) {
      std::string title = fmt::format("Run: {}", f.command);
      specs.push_back({title, "quickfix", false, command(title, kRunVerification, f.command)});
    } else if (f.title.starts_with("Record a memory snapshot")) {
      std::string title = fmt::format("Record a memory snapshot in {}", script);
      specs.push_back({title, "quickfix", false,
                       command(title, kShowFix,
                               FixRequest{.kind = "snapshot", .script = script_path, .detail = f.detail})});
    }
  }
  if (!d.verify.empty()) {
    specs.push_back({"Run the verification command", "quickfix", false,
                     command("Run the verification command", kRunVerification, d.verify)});
    specs.push_back({"Copy the verification command", "quickfix", false,
                     command("Copy the verification command", kCopyVerification, d.verify)});
  }
  return specs;
}

std::vector<ActionSpec> finding_actions(const rules::Diagnosis& d) {
  std::string title = fmt::format("Explain {} {}", d.code, d.name);
  return {{title, "quickfix", false, command(title, kExplain, d.code)}};
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
const rules::Diagnosis* incident_of(const DocumentAnalysis& a, const std::string& ref) {
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
void script_edit_actions(const DocumentAnalysis& a, const rules::Diagnosis& item, const std::vector<Diagnostic>& echo,
                         const ClientCapabilities& client, const OpenDocuments& open,
                         std::vector<CodeActionItem>& actions) {
  const auto& inc = item.incident();
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
  for (const auto& f : item.fixes) {
    FixRequest fix;
    if (f.kind == rules::FixKind::env && analyzer::is_alloc_conf_variable(f.env_name)) {
      fix = {.kind = "env", .name = f.env_name, .value = f.env_value};
    } else if (f.title.starts_with("Record a memory snapshot")) {
      fix = {.kind = "snapshot"};
      if (item.frame && item.frame->file == path && item.frame->line > 0)
        fix.line = static_cast<std::uint32_t>(item.frame->line);
    } else {
      continue;
    }
    ScriptFix result = script_fix(*script, fix, client, held != nullptr);
    if (!result.edit) continue;
    CodeAction action;
    action.title = fmt::format("{}: {}", script_name(inc), result.title.value_or(""));
    action.kind = "quickfix";
    action.edit = std::move(result.edit);
    action.diagnostics = echo;
    actions.push_back(std::move(action));
  }
}

}  // namespace

std::vector<CodeActionItem> log_code_actions(const DocumentAnalysis& a, const CodeActionParams& params,
                                             const ActionContext& context) {
  const ClientCapabilities& client = context.client;
  const Kinds& only = params.only;
  std::vector<CodeActionItem> actions;
  for (const auto& ref : refs_in_request(a, params)) {
    auto specs = actions_for(a, ref);
    const std::vector<Diagnostic> echo = about(diagnostic_for(a, ref));
    for (std::size_t k = 0; k < specs.size(); ++k) {
      auto& spec = specs[k];
      if (!kind_allowed(spec.kind, only)) continue;
      if (!client.code_action_literals) {
        actions.push_back(std::move(spec.command));
        continue;
      }
      CodeAction action;
      action.title = spec.title;
      action.kind = spec.kind;
      action.diagnostics = echo;
      action.preferred = spec.preferred;
      action.data = CodeActionData{a.doc->uri, a.doc->version, ref, k};
      // Clients that resolve lazily get the command on codeAction/resolve.
      if (!client.resolve_command) action.command = std::move(spec.command);
      actions.push_back(std::move(action));
    }
    if (client.code_action_literals && kind_allowed("quickfix", only))
      if (const auto* item = incident_of(a, ref))
        script_edit_actions(a, *item, echo, client, context.open, actions);
  }
  const std::string explain_kind = "source.oomlens.explain";
  if (client.code_action_literals && kind_allowed(explain_kind, only) &&
      (!a.report.incidents.empty() || !a.report.findings.empty()) &&
      (only && !only->empty())) {
    // Source actions only when asked for: they are document-wide, not tied to
    // a cursor, and would clutter every quick-fix menu.
    CodeAction action;
    action.title = "Explain every out-of-memory failure in this log";
    action.kind = explain_kind;
    action.command = command(action.title, kExplainDocument, a.doc->uri);
    actions.push_back(std::move(action));
  }
  return actions;
}

std::optional<ResolvedParts> resolve_log_code_action(const DocumentAnalysis& a, const CodeActionResolveParams& action) {
  if (action.version != a.doc->version || !action.ref || !action.index) return std::nullopt;
  auto specs = actions_for(a, *action.ref);
  if (*action.index >= specs.size()) return std::nullopt;
  return ResolvedParts{std::move(specs[*action.index].command), std::nullopt};
}

}  // namespace oomlens::lsp
