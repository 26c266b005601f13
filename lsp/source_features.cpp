#include "lsp/source_features.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "analyzer/alloc_conf.hpp"
#include "lsp/markdown.hpp"
#include "lsp/params.hpp"
#include "rules/rule.hpp"
#include "rules/source/lint.hpp"
#include "rules/source/record_snapshot.hpp"
#include "lsp/action_support.hpp"
#include "lsp/local_files.hpp"
#include "report/files.hpp"
#include "rules/source/set_alloc_conf.hpp"
#include "rules/source/verification.hpp"

namespace oomlens::lsp {
namespace {

using nlohmann::json;

constexpr const char* kFixAllKind = "source.fixAll.oomlens";
constexpr const char* kSetAllocConfKind = "source.oomlens.setAllocatorConf";
constexpr const char* kRecordSnapshotKind = "source.oomlens.recordSnapshot";
constexpr const char* kVerifyKind = "source.oomlens.verify";

Range range_of(const DocumentAnalysis& a, std::size_t begin, std::size_t end) {
  return a.doc->lines().range_of(ByteRange{begin, end}, a.encoding);
}

json source_diagnostic(const DocumentAnalysis& a, const rules::SourceDiagnostic& d, std::size_t index) {
  json out = diagnostic_json(a, d.diagnosis, ByteRange{d.range.begin, d.range.end}, fmt::format("source:{}", index));
  if (d.fix_safety) out["data"]["fix"] = rules::to_string(*d.fix_safety);
  return out;
}

// A script that does not parse gets one diagnostic saying so, and no edits
// anywhere (a wrong tree would give wrong edits). Other Python tools report
// the syntax error itself; this says what it costs here.
json syntax_error_diagnostic(const DocumentAnalysis& a) {
  const auto& e = a.script->syntax_errors().front();
  return {{"range", range_json(range_of(a, e.range.begin, std::max(e.range.begin, e.range.end)))},
          {"severity", 3},
          {"code", "E999"},
          {"source", "oomlens"},
          {"message", fmt::format("SyntaxError: {} (oomlens offers no fixes until the script parses)", e.message)},
          {"data", {{"oomlens", "syntax"}, {"version", a.doc->version}}}};
}

json text_edits(const DocumentAnalysis& a, const std::vector<rules::TextEdit>& edits) {
  json out = json::array();
  for (const auto& e : edits)
    out.push_back({{"range", range_json(range_of(a, e.begin, e.end))}, {"newText", e.replacement}});
  return out;
}

// Versioned documentChanges when the client takes them: it then refuses the
// edit if the document moved on. A script read from disk has no version.
json workspace_edit(const DocumentAnalysis& a, const std::vector<rules::TextEdit>& edits,
                    const ClientCapabilities& client, bool versioned = true) {
  if (client.document_changes)
    return {{"documentChanges",
             json::array({{{"textDocument", {{"uri", a.doc->uri}, {"version", versioned ? json(a.doc->version) : json()}}},
                           {"edits", text_edits(a, edits)}}})}};
  return {{"changes", {{a.doc->uri, text_edits(a, edits)}}}};
}

// One offered action: its title and kind, and how to make its edits again
// at resolve time ("source:3", "fixAll", "setAllocatorConf", "recordSnapshot").
struct Offer {
  std::string title;
  std::string kind;
  std::string ref;
  bool preferred = false;
  std::vector<rules::TextEdit> edits;
  const json* diagnostic = nullptr;
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

std::optional<rules::ScriptAction> set_alloc_conf(const DocumentAnalysis& a, std::string_view option,
                                                  std::string_view variable = "PYTORCH_CUDA_ALLOC_CONF") {
  if (a.config_kind) return rules::set_alloc_conf_in_config(*a.config_kind, a.doc->text, option);
  return rules::set_alloc_conf_action(*a.script, option, variable);
}

std::optional<Offer> offer_for(const DocumentAnalysis& a, const std::string& ref) {
  if (!editable(a)) return std::nullopt;
  if (auto i = source_index(a, ref)) {
    const auto& d = a.source_diagnostics[*i];
    if (!d.fix_safety || d.edits.empty() || d.diagnosis.fixes.empty()) return std::nullopt;
    std::string title = d.diagnosis.fixes.front().title;
    if (*d.fix_safety == rules::FixSafety::unsafe) title += " (unsafe: may change behaviour)";
    return Offer{title, "quickfix", ref, *d.fix_safety == rules::FixSafety::safe, d.edits};
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

json action_json(const DocumentAnalysis& a, Offer& offer, const ClientCapabilities& client) {
  json action = {{"title", offer.title}, {"kind", offer.kind}};
  if (offer.diagnostic) action["diagnostics"] = json::array({*offer.diagnostic});
  if (offer.preferred) action["isPreferred"] = true;
  action["data"] = {{"uri", a.doc->uri}, {"version", a.doc->version}, {"ref", offer.ref}};
  // Clients that resolve lazily get the edit on codeAction/resolve.
  if (!client.resolve_edit) action["edit"] = workspace_edit(a, offer.edits, client);
  return action;
}

std::string hover_markdown(const rules::SourceDiagnostic& d) {
  std::string text = fmt::format("**{} {}** — {}\n\n{}\n", d.diagnosis.code, d.diagnosis.name, d.diagnosis.message,
                                 d.diagnosis.explanation);
  for (const auto& f : d.diagnosis.fixes)
    text += fmt::format("\n- fix [{}]: {}{}", rules::to_string(f.safety), f.title,
                        f.detail.empty() ? std::string() : " — " + f.detail);
  text += fmt::format("\n\n[{}]({})\n", d.diagnosis.code, rules::rule_doc_url(d.diagnosis.code));
  return text;
}

// Run-in-terminal actions: the script with the allocator setting, and
// without it (the baseline to compare with). Only for a file on disk.
json verify_actions(const DocumentAnalysis& a) {
  json out = json::array();
  auto path = path_from_file_uri(a.doc->uri);
  if (!path) return out;
  std::string name = path->substr(path->find_last_of('/') + 1);
  auto v = rules::verification_commands(*a.script, *path, "PYTORCH_CUDA_ALLOC_CONF", a.options.fragmentation_option);
  for (auto [title, line] : {std::pair{fmt::format("Verify: run {} with PYTORCH_CUDA_ALLOC_CONF={}", name,
                                                   a.options.fragmentation_option),
                                       v.with_setting},
                             std::pair{fmt::format("Verify: run {} without it (baseline)", name), v.without_setting}})
    out.push_back({{"title", title},
                   {"kind", kVerifyKind},
                   {"command", {{"title", title}, {"command", kRunVerification}, {"arguments", json::array({line})}}}});
  return out;
}

}  // namespace

void analyze_source(DocumentAnalysis& a, const DocumentAnalysis* previous, const std::atomic<bool>& cancelled) {
  if (a.doc->text.size() > kMaxSourceBytes) {
    // A generated module of this size is no training script; parsing it on
    // every keystroke would only stall the editor. `oomlens lint` reads it.
    a.diagnostics.push_back({{"range", range_json(Range{})},
                             {"severity", 3},
                             {"source", "oomlens"},
                             {"message", fmt::format("oomlens does not check files over {} MiB in the editor; run "
                                                     "`oomlens lint` on it", kMaxSourceBytes >> 20)},
                             {"data", {{"oomlens", "too-large"}, {"version", a.doc->version}}}});
    return;
  }
  if (a.doc->kind == DocumentKind::config) {
    a.config_kind = rules::config_file_kind(a.doc->uri);
    if (!a.config_kind) a.config_kind = a.doc->language_id == "dotenv" ? rules::ConfigFileKind::dotenv : rules::ConfigFileKind::shell;
    a.source_diagnostics = rules::lint_config_file(*a.config_kind, a.doc->text);
    for (std::size_t i = 0; i < a.source_diagnostics.size(); ++i)
      a.diagnostics.push_back(source_diagnostic(a, a.source_diagnostics[i], i));
    return;
  }
  const analyzer::python::Script* before = previous && previous->script ? previous->script.get() : nullptr;
  a.script = std::make_shared<const analyzer::python::Script>(analyzer::python::parse_script(a.doc->text, before));
  if (cancelled.load(std::memory_order_relaxed)) {  // typed over already: the rules would be wasted
    a.cancelled = true;
    return;
  }
  a.source_diagnostics = rules::lint_script(*a.script);
  if (a.script->has_errors()) a.diagnostics.push_back(syntax_error_diagnostic(a));
  for (std::size_t i = 0; i < a.source_diagnostics.size(); ++i)
    a.diagnostics.push_back(source_diagnostic(a, a.source_diagnostics[i], i));
}

namespace {

// The last few analyses made for fixes: a log's quick fixes are asked for on
// every cursor move over its OOM line, and each would otherwise read and
// parse the script again. Keyed by what they were made from; a script edited
// on disk or in the editor has another key.
class FixAnalysisCache {
 public:
  std::shared_ptr<const DocumentAnalysis> find(const std::string& key) {
    std::lock_guard lock(mutex_);
    for (const auto& [k, a] : entries_)
      if (k == key) return a;
    return nullptr;
  }
  void add(std::string key, std::shared_ptr<const DocumentAnalysis> analysis) {
    std::lock_guard lock(mutex_);
    if (entries_.size() >= kSize) entries_.erase(entries_.begin());
    entries_.emplace_back(std::move(key), std::move(analysis));
  }

 private:
  static constexpr std::size_t kSize = 4;
  std::mutex mutex_;
  std::vector<std::pair<std::string, std::shared_ptr<const DocumentAnalysis>>> entries_;
};

FixAnalysisCache& fix_cache() {
  static FixAnalysisCache cache;
  return cache;
}

std::string settings_key(const Settings& settings, PositionEncoding encoding) {
  return fmt::format("{}|{}", settings.rules.fragmentation_option, static_cast<int>(encoding));
}

}  // namespace

std::shared_ptr<const DocumentAnalysis> analyze_file_for_fixes(const std::string& uri, const std::string& path,
                                                               const ClientCapabilities& client,
                                                               const Settings& settings, std::string& error) {
  std::error_code ec;
  auto size = std::filesystem::file_size(path, ec);
  auto mtime = ec ? std::filesystem::file_time_type{} : std::filesystem::last_write_time(path, ec);
  std::string key = ec ? std::string()
                       : fmt::format("file|{}|{}|{}|{}", uri, size, mtime.time_since_epoch().count(),
                                     settings_key(settings, client.encoding));
  if (!key.empty())
    if (auto cached = fix_cache().find(key)) return cached;
  report::FileError read_error;
  auto text = report::read_file(path, read_error);
  if (!text) {
    error = read_error.reason;
    return nullptr;
  }
  // Kind from the name (.sh, .env, launch.json); anything else is taken for a script.
  bool config = classify_document(uri, "") == DocumentKind::config;
  std::atomic<bool> never{false};
  auto a = analyze_document(std::make_shared<const Document>(uri, config ? "" : "python", 0, std::move(*text)), settings,
                            client.encoding, never, {});
  if (!key.empty()) fix_cache().add(std::move(key), a);
  return a;
}

std::shared_ptr<const DocumentAnalysis> analyze_for_fixes(const DocumentSnapshot& doc, const ClientCapabilities& client,
                                                          const Settings& settings) {
  // A snapshot is immutable: its address and version name its text.
  std::string key = fmt::format("open|{}|{}|{}|{}", doc->uri, doc->version, static_cast<const void*>(doc.get()),
                                settings_key(settings, client.encoding));
  if (auto cached = fix_cache().find(key)) return cached;
  std::atomic<bool> never{false};
  auto a = analyze_document(doc, settings, client.encoding, never, {});
  fix_cache().add(std::move(key), a);
  return a;
}

json source_hover(const DocumentAnalysis& a, const json& position, bool markdown) {
  if (!position.is_object() || !position.contains("line") || !position.contains("character") ||
      !position["line"].is_number_unsigned() || !position["character"].is_number_unsigned())
    return nullptr;
  auto offset = a.doc->lines().offset_of(
      Position{position["line"].get<std::uint32_t>(), position["character"].get<std::uint32_t>()}, a.encoding);
  if (!offset) return nullptr;
  std::string text;
  for (const auto& d : a.source_diagnostics)
    if (*offset >= d.range.begin && *offset <= d.range.end) text += (text.empty() ? "" : "\n---\n") + hover_markdown(d);
  if (text.empty()) return nullptr;
  if (!markdown) text = markdown_to_plaintext(text);
  return {{"contents", {{"kind", markdown ? "markdown" : "plaintext"}, {"value", text}}}};
}

json source_code_actions(const DocumentAnalysis& a, const json& params, const ClientCapabilities& client) {
  json only = requested_kinds(params);
  json actions = json::array();
  auto add = [&](std::optional<Offer> offer) {
    if (!offer || !kind_allowed(offer->kind, only)) return;
    if (!client.code_action_literals) return;  // edits cannot travel as a Command
    actions.push_back(action_json(a, *offer, client));
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
    for (auto& action : verify_actions(a)) actions.push_back(std::move(action));
  return actions;
}

json resolve_source_code_action(const DocumentAnalysis& a, const json& action, const ClientCapabilities& client) {
  if (!action.is_object() || !action.contains("data") || !action["data"].is_object()) return nullptr;
  const json& data = action["data"];
  if (data.value("version", json()) != json(a.doc->version) || !data.contains("ref") || !data["ref"].is_string())
    return nullptr;
  auto offer = offer_for(a, data["ref"].get<std::string>());
  if (!offer) return nullptr;
  json resolved = action;
  if (!resolved.contains("edit")) resolved["edit"] = workspace_edit(a, offer->edits, client);
  return resolved;
}

json script_fix(const DocumentAnalysis& a, const json& fix, const ClientCapabilities& client, bool versioned) {
  if (!fix.is_object() || !fix.contains("kind") || !fix["kind"].is_string())
    throw ParamsError("oomlens.fixScript expects {\"uri\", \"fix\": {\"kind\": \"env\"|\"snapshot\"|\"empty_cache\"|\"fixAll\", ...}}");
  const std::string kind = fix["kind"].get<std::string>();
  auto nothing = [](std::string message) { return json{{"title", nullptr}, {"edit", nullptr}, {"message", message}}; };
  if (!a.script && !a.config_kind) return nothing("not a Python script");
  if (a.config_kind && kind != "env" && kind != "fixAll")
    return nothing("only the allocator setting can be applied to a shell script, .env or launch.json");
  if (a.script && a.script->has_errors())
    return nothing(fmt::format("the script does not parse ({}, line {}): fix it first",
                               a.script->syntax_errors().front().message, a.script->syntax_errors().front().start.line));
  std::optional<rules::ScriptAction> action;
  if (kind == "env") {
    std::string name = fix.value("name", "PYTORCH_CUDA_ALLOC_CONF");
    std::string value = fix.value("value", a.options.fragmentation_option);
    if (!analyzer::is_alloc_conf_variable(name))
      return nothing(fmt::format("{} is not read by the allocator: set it in the environment that starts the script", name));
    action = set_alloc_conf(a, value, name);
    if (!action) return nothing(fmt::format("{} already holds {} (or the script does not import torch)", name, value));
    json out = {{"title", action->title}, {"safety", rules::to_string(action->safety)},
                {"edit", workspace_edit(a, action->edits, client, versioned)}};
    if (auto path = path_from_file_uri(a.doc->uri); path && a.script) {
      auto v = rules::verification_commands(*a.script, *path, name, value);
      out["verify"] = {{"with", v.with_setting}, {"without", v.without_setting}};
    }
    return out;
  } else if (kind == "snapshot") {
    std::optional<std::uint32_t> line;
    if (fix.contains("line") && fix["line"].is_number_unsigned() && fix["line"].get<std::uint32_t>() > 0)
      line = fix["line"].get<std::uint32_t>();
    action = rules::record_snapshot_action(*a.script, line);
    if (!action) return nothing("no training loop to record found, or the script records a snapshot already");
  } else if (kind == "empty_cache" || kind == "fixAll") {
    std::vector<rules::SourceDiagnostic> chosen;
    for (const auto& d : a.source_diagnostics)
      if (kind == "fixAll" || d.diagnosis.code == "OOM301") chosen.push_back(d);
    auto edits = rules::fix_edits(chosen);
    if (edits.empty()) return nothing(kind == "fixAll" ? "nothing to fix safely" : "no torch.cuda.empty_cache() call in a loop to remove");
    action = rules::ScriptAction{kind == "fixAll" ? "Fix all safely fixable oomlens problems"
                                                  : "Remove torch.cuda.empty_cache() from loops",
                                 rules::FixSafety::safe, std::move(edits)};
  } else {
    throw ParamsError(fmt::format("oomlens.fixScript: unknown fix kind '{}'", kind));
  }
  return {{"title", action->title}, {"safety", rules::to_string(action->safety)},
          {"edit", workspace_edit(a, action->edits, client, versioned)}};
}

}  // namespace oomlens::lsp
