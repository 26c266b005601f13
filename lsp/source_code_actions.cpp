// Code actions on scripts and configuration files: exact text edits on the
// version of the document the analysis was made from (the client rejects
// them if the document changed since: no lost text), and oomlens.fixScript.
#include <fmt/format.h>

#include "analyzer/alloc_conf.hpp"
#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "lsp/source_features.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/record_snapshot.hpp"
#include "rules/source/set_alloc_conf.hpp"
#include "rules/source/verification.hpp"

namespace oomlens::lsp {
namespace {

constexpr const char* kFixAllKind = "source.fixAll.oomlens";
constexpr const char* kSetAllocConfKind = "source.oomlens.setAllocatorConf";
constexpr const char* kRecordSnapshotKind = "source.oomlens.recordSnapshot";
constexpr const char* kVerifyKind = "source.oomlens.verify";

Range range_of(const DocumentAnalysis& a, std::size_t begin, std::size_t end) {
  return a.doc->lines().range_of(ByteRange{begin, end}, a.encoding);
}

std::vector<TextEdit> text_edits(const DocumentAnalysis& a, const std::vector<rules::TextEdit>& edits) {
  std::vector<TextEdit> out;
  for (const auto& e : edits) out.push_back({range_of(a, e.begin, e.end), e.replacement});
  return out;
}

// Versioned documentChanges when the client takes them: it then refuses the
// edit if the document moved on. A script read from disk has no version.
WorkspaceEdit workspace_edit(const DocumentAnalysis& a, const std::vector<rules::TextEdit>& edits,
                             const ClientCapabilities& client, bool versioned = true) {
  WorkspaceEdit out;
  out.document_changes = client.document_changes;
  out.documents.push_back({a.doc->uri, versioned ? std::optional(a.doc->version) : std::nullopt, text_edits(a, edits)});
  return out;
}

// One offered action: its title and kind, and how to make its edits again
// at resolve time ("source:3", "fixAll", "setAllocatorConf", "recordSnapshot").
struct Offer {
  std::string title;
  std::string kind;
  std::string ref;
  bool preferred = false;
  std::vector<rules::TextEdit> edits;
  const Diagnostic* diagnostic = nullptr;
};

std::optional<std::size_t> source_index(const DocumentAnalysis& a, const std::string& ref) {
  if (!ref.starts_with("source:")) return std::nullopt;
  try {
    std::size_t i = std::stoul(ref.substr(7));
    if (i < a.source_diagnostics.size()) return i;
  } catch (...) {
  }
  return std::nullopt;
}

bool editable(const DocumentAnalysis& a) { return a.config_kind || (a.script && !a.script->has_errors()); }

std::optional<rules::Fix> set_alloc_conf(const DocumentAnalysis& a, std::string_view option,
                                                  std::string_view variable = "PYTORCH_CUDA_ALLOC_CONF") {
  if (a.config_kind) return rules::set_alloc_conf_in_config(*a.config_kind, a.doc->text, option);
  return rules::set_alloc_conf_action(*a.script, option, variable);
}

std::optional<Offer> offer_for(const DocumentAnalysis& a, const std::string& ref) {
  if (!editable(a)) return std::nullopt;
  if (auto i = source_index(a, ref)) {
    const rules::Fix* fix = a.source_diagnostics[*i].automatic_fix();
    if (!fix) return std::nullopt;
    std::string title = fix->title;
    if (fix->safety == rules::FixSafety::unsafe) title += " (unsafe: may change behaviour)";
    return Offer{title, "quickfix", ref, fix->safety == rules::FixSafety::safe, fix->edits};
  }
  if (ref == "fixAll") {
    auto edits = rules::fix_edits(a.source_diagnostics);
    if (edits.empty()) return std::nullopt;
    return Offer{"Fix all safely fixable oomlens problems", kFixAllKind, ref, false, std::move(edits)};
  }
  if (ref == "setAllocatorConf" || ref == "recordSnapshot") {
    // Several requests per version are common (menu, lightbulb, resolve): made once.
    std::call_once(a.source_actions_once, [&a] {
      a.set_alloc_conf_action = set_alloc_conf(a, a.options.fragmentation_option);
      if (a.script) a.record_snapshot_action = rules::record_snapshot_action(*a.script);
    });
    const auto& action = ref == "setAllocatorConf" ? a.set_alloc_conf_action : a.record_snapshot_action;
    if (!action) return std::nullopt;
    return Offer{action->title, ref == "setAllocatorConf" ? kSetAllocConfKind : kRecordSnapshotKind, ref, false,
                 action->edits};
  }
  return std::nullopt;
}

CodeAction action_of(const DocumentAnalysis& a, Offer& offer, const ClientCapabilities& client) {
  CodeAction action;
  action.title = offer.title;
  action.kind = offer.kind;
  action.diagnostics = about(offer.diagnostic);
  action.preferred = offer.preferred;
  action.data = CodeActionData{a.doc->uri, a.doc->version, offer.ref, std::nullopt};
  // Clients that resolve lazily get the edit on codeAction/resolve.
  if (!client.resolve_edit) action.edit = workspace_edit(a, offer.edits, client);
  return action;
}

// The run-in-terminal action: `oomlens verify` runs the script without the
// allocator setting and with it, and compares. Only for a file on disk.
void add_verify_actions(const DocumentAnalysis& a, std::vector<CodeActionItem>& out) {
  auto path = path_from_file_uri(a.doc->uri);
  if (!path) return;
  std::string name = path->substr(path->find_last_of('/') + 1);
  std::string line =
      rules::verification_command(*a.script, *path, "PYTORCH_CUDA_ALLOC_CONF", a.options.fragmentation_option);
  std::string title =
      fmt::format("Verify: A/B-test {} with PYTORCH_CUDA_ALLOC_CONF={}", name, a.options.fragmentation_option);
  CodeAction action;
  action.title = title;
  action.kind = kVerifyKind;
  action.command = Command{title, kRunVerification, {line}};
  out.push_back(std::move(action));
}

}  // namespace

std::vector<CodeActionItem> source_code_actions(const DocumentAnalysis& a, const CodeActionParams& params,
                                                const ClientCapabilities& client) {
  const Kinds& only = params.only;
  std::vector<CodeActionItem> actions;
  auto add = [&](std::optional<Offer> offer) {
    if (!offer || !kind_allowed(offer->kind, only)) return;
    if (!client.code_action_literals) return;  // edits cannot travel as a Command
    actions.push_back(action_of(a, *offer, client));
  };
  for (const auto& ref : refs_in_request(a, params)) {
    auto offer = offer_for(a, ref);
    if (offer) offer->diagnostic = diagnostic_for(a, ref);
    add(std::move(offer));
  }
  // Document-wide actions only when asked for by kind (the editor's "Source
  // Action…" menu, fix-all on save): computing them on every cursor move
  // would be wasted work and clutter the quick-fix menu.
  for (auto [kind, ref] : {std::pair{kFixAllKind, "fixAll"}, std::pair{kSetAllocConfKind, "setAllocatorConf"},
                           std::pair{kRecordSnapshotKind, "recordSnapshot"}})
    if (explicitly_asked(kind, only)) add(offer_for(a, ref));
  if (explicitly_asked(kVerifyKind, only) && client.code_action_literals && a.script)
    add_verify_actions(a, actions);
  return actions;
}

std::string verify_command_for(const DocumentAnalysis& a, const std::optional<std::string>& conf) {
  if (a.script) {
    auto path = path_from_file_uri(a.doc->uri);
    if (!path) return {};
    return rules::verification_command(*a.script, *path, "PYTORCH_CUDA_ALLOC_CONF",
                                       conf.value_or(a.options.fragmentation_option));
  }
  for (const auto& i : a.report.incidents)
    if (!i.verify.empty()) return i.verify;
  return {};
}

std::optional<ResolvedParts> resolve_source_code_action(const DocumentAnalysis& a, const CodeActionResolveParams& action,
                                                        const ClientCapabilities& client) {
  if (action.version != a.doc->version || !action.ref) return std::nullopt;
  auto offer = offer_for(a, *action.ref);
  if (!offer) return std::nullopt;
  return ResolvedParts{std::nullopt, workspace_edit(a, offer->edits, client)};
}

ScriptFix script_fix(const DocumentAnalysis& a, const FixRequest& fix, const ClientCapabilities& client, bool versioned) {
  const std::string& kind = fix.kind;
  auto nothing = [](std::string message) { return ScriptFix{.message = std::move(message)}; };
  if (!a.script && !a.config_kind) return nothing("not a Python script");
  if (a.config_kind && kind != "env" && kind != "fixAll")
    return nothing("only the allocator setting can be applied to a shell script, .env or launch.json");
  if (a.script && a.script->has_errors())
    return nothing(fmt::format("the script does not parse ({}, line {}): fix it first",
                               a.script->syntax_errors().front().message, a.script->syntax_errors().front().start.line));
  std::optional<rules::Fix> action;
  if (kind == "env") {
    std::string name = fix.name.value_or("PYTORCH_CUDA_ALLOC_CONF");
    std::string value = fix.value.value_or(a.options.fragmentation_option);
    if (!analyzer::is_alloc_conf_variable(name))
      return nothing(fmt::format("{} is not read by the allocator: set it in the environment that starts the script", name));
    action = set_alloc_conf(a, value, name);
    if (!action) return nothing(fmt::format("{} already holds {} (or the script does not import torch)", name, value));
    ScriptFix out{.title = action->title,
                  .safety = std::string(rules::to_string(action->safety)),
                  .edit = workspace_edit(a, action->edits, client, versioned)};
    if (auto path = path_from_file_uri(a.doc->uri); path && a.script) {
      out.verify = rules::verification_command(*a.script, *path, name, value);
    }
    return out;
  } else if (kind == "snapshot") {
    std::optional<std::uint32_t> line;
    if (fix.line && *fix.line > 0) line = fix.line;
    action = rules::record_snapshot_action(*a.script, line);
    if (!action) return nothing("no training loop to record found, or the script records a snapshot already");
  } else if (kind == "empty_cache" || kind == "fixAll") {
    std::vector<rules::Diagnosis> chosen;
    for (const auto& d : a.source_diagnostics)
      if (kind == "fixAll" || d.code == "OOM301") chosen.push_back(d);
    auto edits = rules::fix_edits(chosen);
    if (edits.empty()) return nothing(kind == "fixAll" ? "nothing to fix safely" : "no torch.cuda.empty_cache() call in a loop to remove");
    action = rules::edit_fix(kind == "fixAll" ? "Fix all safely fixable oomlens problems"
                                                  : "Remove torch.cuda.empty_cache() from loops",
                                 rules::FixSafety::safe, std::move(edits));
  } else {
    throw ParamsError(fmt::format("oomlens.fixScript: unknown fix kind '{}'", kind));
  }
  return ScriptFix{.title = action->title,
                   .safety = std::string(rules::to_string(action->safety)),
                   .edit = workspace_edit(a, action->edits, client, versioned)};
}

}  // namespace oomlens::lsp
