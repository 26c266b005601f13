#include "lsp/protocol.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

#include <fmt/format.h>

#include "lsp/local_files.hpp"

namespace oomlens::lsp {

using nlohmann::json;
using vt = json::value_t;

// ---- Reading ---------------------------------------------------------------------

namespace {

// A member of an object, required to have the given type.
const json& member(const json& object, const char* key, vt type) {
  if (!object.is_object()) throw ParamsError(fmt::format("expected an object with '{}'", key));
  auto it = object.find(key);
  if (it == object.end()) throw ParamsError(fmt::format("missing '{}'", key));
  bool ok = it->type() == type || (type == vt::number_integer && it->is_number_integer()) ||
            (type == vt::number_unsigned && it->is_number_unsigned());
  if (!ok) throw ParamsError(fmt::format("'{}' has the wrong type", key));
  return *it;
}

json& member_ref(json& object, const char* key, vt type) {
  return const_cast<json&>(member(static_cast<const json&>(object), key, type));
}

// A member that may be absent or of another type: nothing then.
const json* optional_member(const json& object, const char* key, vt type) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  if (it == object.end()) return nullptr;
  bool ok = it->type() == type || (type == vt::number_integer && it->is_number_integer());
  return ok ? &*it : nullptr;
}

TextDocumentIdentifier text_document(const json& params) {
  const json& doc = member(params, "textDocument", vt::object);
  return {member(doc, "uri", vt::string).get<std::string>()};
}

// Positions a client sends are read leniently where a malformed one means
// "nothing there" rather than an error.
std::optional<Position> position_of(const json& j) {
  auto line = optional_member(j, "line", vt::number_unsigned);
  auto character = optional_member(j, "character", vt::number_unsigned);
  if (!line || !character || !line->is_number_unsigned() || !character->is_number_unsigned()) return std::nullopt;
  return Position{line->get<std::uint32_t>(), character->get<std::uint32_t>()};
}

std::optional<Range> range_of(const json& j) {
  try {
    return Range{{j.at("start").at("line").get<std::uint32_t>(), j.at("start").at("character").get<std::uint32_t>()},
                 {j.at("end").at("line").get<std::uint32_t>(), j.at("end").at("character").get<std::uint32_t>()}};
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

// Reads a nested member without throwing on missing keys or wrong types.
const json* at_path(const json& j, std::initializer_list<const char*> path) {
  const json* cur = &j;
  for (const char* key : path) {
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(key);
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

bool flag(const json& j, std::initializer_list<const char*> path) {
  const json* v = at_path(j, path);
  return v && v->is_boolean() && v->get<bool>();
}

bool array_has(const json* arr, std::string_view value) {
  if (!arr || !arr->is_array()) return false;
  return std::any_of(arr->begin(), arr->end(), [&](const json& x) { return x.is_string() && x.get<std::string>() == value; });
}

ClientCapabilities client_capabilities(const json& params) {
  ClientCapabilities c;
  const json* caps = at_path(params, {"capabilities"});
  if (!caps) return c;
  // UTF-8 when the client offers it (no conversion on our side), else the
  // mandatory UTF-16.
  if (const json* encodings = at_path(*caps, {"general", "positionEncodings"}); array_has(encodings, "utf-8"))
    c.encoding = PositionEncoding::utf8;
  c.pull_diagnostics = at_path(*caps, {"textDocument", "diagnostic"}) != nullptr;
  c.diagnostic_refresh = flag(*caps, {"workspace", "diagnostics", "refreshSupport"});
  c.code_action_literals = at_path(*caps, {"textDocument", "codeAction", "codeActionLiteralSupport"}) != nullptr;
  bool data_support = flag(*caps, {"textDocument", "codeAction", "dataSupport"});
  const json* resolvable = at_path(*caps, {"textDocument", "codeAction", "resolveSupport", "properties"});
  c.resolve_edit = data_support && array_has(resolvable, "edit");
  c.resolve_command = data_support && array_has(resolvable, "command");
  c.document_changes = flag(*caps, {"workspace", "workspaceEdit", "documentChanges"});
  c.work_done_progress = flag(*caps, {"window", "workDoneProgress"});
  c.configuration = flag(*caps, {"workspace", "configuration"});
  c.inlay_hint_refresh = flag(*caps, {"workspace", "inlayHint", "refreshSupport"});
  c.watch_files = flag(*caps, {"workspace", "didChangeWatchedFiles", "dynamicRegistration"});
  c.markdown_hover = array_has(at_path(*caps, {"textDocument", "hover", "contentFormat"}), "markdown");
  return c;
}

// The settings in `section` (the "oomlens" section itself).
SettingsSection settings_of(const json& section) {
  SettingsSection out;
  if (!section.is_object()) return out;
  if (auto it = section.find("allocatorOption"); it != section.end()) {
    if (it->is_string() && !it->get<std::string>().empty() && it->get<std::string>().find(':') != std::string::npos)
      out.settings.rules.fragmentation_option = it->get<std::string>();
    else
      out.problems.emplace_back(
          "oomlens.allocatorOption must be an allocator option such as \"expandable_segments:True\"");
  }
  if (auto it = section.find("progressThresholdBytes"); it != section.end()) {
    if (it->is_number_unsigned()) out.settings.progress_threshold_bytes = it->get<std::size_t>();
    else out.problems.emplace_back("oomlens.progressThresholdBytes must be a non-negative integer");
  }
  return out;
}

// Settings sent as a whole object: its "oomlens" member when it has one.
SettingsSection settings_within(const json& value) {
  if (value.is_object() && value.contains("oomlens")) return settings_of(value["oomlens"]);
  return settings_of(value);
}

}  // namespace

void read(json& j, InitializeParams& out) {
  if (!j.is_object()) throw ParamsError("initialize expects an object");
  out.capabilities = client_capabilities(j);
  if (const json* folders = optional_member(j, "workspaceFolders", vt::array)) {
    for (const json& folder : *folders)
      if (folder.is_object() && folder.contains("uri") && folder["uri"].is_string())
        if (auto path = path_from_file_uri(folder["uri"].get<std::string>())) out.workspace_folders.push_back(*path);
  } else if (const json* root = optional_member(j, "rootUri", vt::string)) {
    if (auto path = path_from_file_uri(root->get<std::string>())) out.workspace_folders.push_back(*path);
  } else if (const json* root_path = optional_member(j, "rootPath", vt::string)) {
    out.workspace_folders.push_back(root_path->get<std::string>());
  }
  if (j.contains("initializationOptions")) out.settings = settings_within(j["initializationOptions"]);
}

void read(json&, NoParams&) {}

void read(json& j, CancelParams& out) {
  if (j.is_object() && j.contains("id")) out.id = j["id"];
}

void read(json& j, DidChangeConfigurationParams& out) {
  if (const json* s = optional_member(j, "settings", vt::object)) out.settings = settings_within(*s);
}

void read(json& j, DidChangeWatchedFilesParams& out) {
  for (const json& change : member(j, "changes", vt::array)) {
    const json& type = member(change, "type", vt::number_integer);
    int t = type.get<int>();
    if (t < 1 || t > 3) throw ParamsError(fmt::format("a file event's type is 1, 2 or 3, not {}", t));
    out.changes.push_back({member(change, "uri", vt::string).get<std::string>(), static_cast<FileEvent::Type>(t)});
  }
}

void read(json& j, DidOpenParams& out) {
  json& doc = member_ref(j, "textDocument", vt::object);
  out.uri = member(doc, "uri", vt::string).get<std::string>();
  out.language_id = member(doc, "languageId", vt::string).get<std::string>();
  out.version = member(doc, "version", vt::number_integer).get<std::int64_t>();
  out.text = std::move(member_ref(doc, "text", vt::string).get_ref<std::string&>());
}

void read(json& j, DidChangeParams& out) {
  const json& doc = member(j, "textDocument", vt::object);
  out.uri = member(doc, "uri", vt::string).get<std::string>();
  out.version = member(doc, "version", vt::number_integer).get<std::int64_t>();
  for (auto& c : member_ref(j, "contentChanges", vt::array)) {
    ContentChange change;
    change.text = std::move(member_ref(c, "text", vt::string).get_ref<std::string&>());
    if (c.contains("range")) {
      change.range = range_of(c["range"]);
      if (!change.range) throw ParamsError("a content change has a malformed range");
    }
    out.changes.push_back(std::move(change));
  }
}

void read(json& j, DidCloseParams& out) { out.text_document = text_document(j); }

namespace {

std::vector<NotebookCellItem> notebook_cells(const json& cells) {
  std::vector<NotebookCellItem> out;
  for (const auto& c : cells)
    out.push_back({member(c, "document", vt::string).get<std::string>(),
                   member(c, "kind", vt::number_integer).get<int>() == 2});
  return out;
}

// A TextDocumentItem as didOpen's params hold it.
DidOpenParams text_document_item(json& item) {
  json wrapped = {{"textDocument", std::move(item)}};
  DidOpenParams out;
  read(wrapped, out);
  return out;
}

}  // namespace

void read(json& j, NotebookOpenParams& out) {
  const json& notebook = member(j, "notebookDocument", vt::object);
  out.uri = member(notebook, "uri", vt::string).get<std::string>();
  out.cells = notebook_cells(member(notebook, "cells", vt::array));
  for (auto& item : member_ref(j, "cellTextDocuments", vt::array)) out.cell_documents.push_back(text_document_item(item));
}

void read(json& j, NotebookChangeParams& out) {
  out.uri = member(member(j, "notebookDocument", vt::object), "uri", vt::string).get<std::string>();
  json& change = member_ref(j, "change", vt::object);
  if (!change.contains("cells") || change["cells"].is_null()) return;
  json& cells = member_ref(change, "cells", vt::object);
  if (cells.contains("structure") && !cells["structure"].is_null()) {
    json& structure = member_ref(cells, "structure", vt::object);
    const json& array = member(structure, "array", vt::object);
    NotebookChangeParams::Splice splice;
    splice.start = member(array, "start", vt::number_unsigned).get<std::size_t>();
    splice.delete_count = member(array, "deleteCount", vt::number_unsigned).get<std::size_t>();
    if (array.contains("cells") && !array["cells"].is_null()) splice.cells = notebook_cells(member(array, "cells", vt::array));
    out.structure = std::move(splice);
    if (structure.contains("didOpen") && !structure["didOpen"].is_null())
      for (auto& item : member_ref(structure, "didOpen", vt::array)) out.opened.push_back(text_document_item(item));
    if (structure.contains("didClose") && !structure["didClose"].is_null())
      for (const auto& doc : member(structure, "didClose", vt::array))
        out.closed.push_back(member(doc, "uri", vt::string).get<std::string>());
  }
  if (cells.contains("data") && !cells["data"].is_null()) out.data = notebook_cells(member(cells, "data", vt::array));
  if (cells.contains("textContent") && !cells["textContent"].is_null())
    for (auto& t : member_ref(cells, "textContent", vt::array)) {
      json wrapped = {{"textDocument", member(t, "document", vt::object)},
                      {"contentChanges", std::move(member_ref(t, "changes", vt::array))}};
      DidChangeParams params;
      read(wrapped, params);
      out.text.push_back(std::move(params));
    }
}

void read(json& j, NotebookCloseParams& out) {
  out.uri = member(member(j, "notebookDocument", vt::object), "uri", vt::string).get<std::string>();
  for (const auto& doc : member(j, "cellTextDocuments", vt::array))
    out.cells.push_back(member(doc, "uri", vt::string).get<std::string>());
}

void read(json& j, DocumentDiagnosticParams& out) {
  out.text_document = text_document(j);
  if (const json* previous = optional_member(j, "previousResultId", vt::string))
    out.previous_result_id = previous->get<std::string>();
}

void read(json& j, HoverParams& out) {
  out.text_document = text_document(j);
  out.position = position_of(member(j, "position", vt::object));
}

void read(json& j, InlayHintParams& out) {
  out.text_document = text_document(j);
  if (const json* range = optional_member(j, "range", vt::object)) out.range = range_of(*range);
}

void read(json& j, CodeActionParams& out) {
  out.text_document = text_document(j);
  out.range = range_of(member(j, "range", vt::object));
  const json* context = optional_member(j, "context", vt::object);
  if (!context) return;
  if (const json* diagnostics = optional_member(*context, "diagnostics", vt::array))
    for (const auto& d : *diagnostics) {
      const json* data = optional_member(d, "data", vt::object);
      const json* ref = data ? optional_member(*data, "oomlens", vt::string) : nullptr;
      const json* version = data ? optional_member(*data, "version", vt::number_integer) : nullptr;
      if (ref && version) out.diagnostics.push_back({ref->get<std::string>(), version->get<std::int64_t>()});
    }
  if (const json* only = optional_member(*context, "only", vt::array)) {
    out.only.emplace();
    for (const auto& kind : *only) out.only->push_back(kind.is_string() ? kind.get<std::string>() : std::string());
  }
}

void read(json& j, CodeActionResolveParams& out) {
  const json* data = optional_member(j, "data", vt::object);
  const json* uri = data ? optional_member(*data, "uri", vt::string) : nullptr;
  if (!uri) throw ParamsError("codeAction/resolve expects an action this server made (with its data)");
  out.uri = uri->get<std::string>();
  if (const json* version = optional_member(*data, "version", vt::number_integer)) out.version = version->get<std::int64_t>();
  if (const json* ref = optional_member(*data, "ref", vt::string)) out.ref = ref->get<std::string>();
  if (const json* index = optional_member(*data, "index", vt::number_unsigned); index && index->is_number_unsigned())
    out.index = index->get<std::size_t>();
  out.action = std::move(j);
}

void read(json& j, ExecuteCommandParams& out) {
  out.command = member(j, "command", vt::string).get<std::string>();
  if (j.contains("arguments") && j["arguments"].is_array()) out.arguments = std::move(j["arguments"]);
}

std::optional<TextArgument> text_argument(json& arguments) {
  if (!arguments.is_array() || arguments.empty()) return std::nullopt;
  json& first = arguments[0];
  if (first.is_string()) return TextArgument{std::move(first.get_ref<std::string&>()), std::nullopt};
  if (!first.is_object() || !first.contains("text") || !first["text"].is_string()) return std::nullopt;
  TextArgument out{std::move(first["text"].get_ref<std::string&>()), std::nullopt};
  if (const json* source = optional_member(first, "source", vt::string)) out.source = source->get<std::string>();
  return out;
}

std::optional<FixScriptArgument> fix_script_argument(json& arguments) {
  if (!arguments.is_array() || arguments.empty()) return std::nullopt;
  json& first = arguments[0];
  const json* uri = optional_member(first, "uri", vt::string);
  if (!uri || !optional_member(first, "fix", vt::object)) return std::nullopt;
  return FixScriptArgument{uri->get<std::string>(), std::move(first["fix"])};
}

VerifyArgument verify_argument(const json& arguments) {
  if (!arguments.is_array() || arguments.empty() || !arguments[0].is_object())
    throw ParamsError("oomlens.verify expects [{\"uri\": ..., \"conf\"?: ...}]");
  const json& first = arguments[0];
  VerifyArgument out{member(first, "uri", vt::string).get<std::string>()};
  if (first.contains("conf")) out.conf = member(first, "conf", vt::string).get<std::string>();
  return out;
}

std::optional<std::string> snapshot_argument(const json& arguments, std::size_t index) {
  if (!arguments.is_array() || arguments.size() <= index) return std::nullopt;
  const json& first = arguments[index];
  if (first.is_string()) return first.get<std::string>();
  for (const char* key : {"path", "uri"})
    if (const json* text = optional_member(first, key, vt::string)) return text->get<std::string>();
  return std::nullopt;
}

std::optional<FixRequest> show_fix_argument(const json& arguments) {
  if (!arguments.is_array() || arguments.empty()) return std::nullopt;
  return fix_request(arguments[0]);
}

std::optional<FixRequest> fix_request(const json& j) {
  if (!j.is_object()) return std::nullopt;
  const json* kind = optional_member(j, "kind", vt::string);
  FixRequest fix{kind ? kind->get<std::string>() : std::string()};
  auto text = [&j](const char* key) -> std::optional<std::string> {
    const json* v = optional_member(j, key, vt::string);
    return v ? std::optional(v->get<std::string>()) : std::nullopt;
  };
  fix.name = text("name");
  fix.value = text("value");
  fix.script = text("script");
  fix.safety = text("safety");
  fix.detail = text("detail");
  if (const json* line = optional_member(j, "line", vt::number_unsigned); line && line->is_number_unsigned())
    fix.line = line->get<std::uint32_t>();
  return fix;
}

void read(const json& result, ConfigurationResult& out) {
  // The section itself is the answer's one item (no "oomlens" member around it).
  if (result.is_array() && !result.empty()) out.settings = settings_of(result[0]);
}

// ---- Writing ---------------------------------------------------------------------

namespace {

// The values sent most (positions, diagnostics, code actions) are built in
// place: an initializer list such as {{"range", r}} makes each value, copies
// it into a pair, tests whether the pairs make an object and copies them
// again into the map, which was most of a code action's time.
json::object_t& object_in(json& j) {
  j = json::object();
  return j.get_ref<json::object_t&>();
}

template <class A, class B>
void two_fields(json& j, const char* first, const A& a, const char* second, const B& b) {
  auto& o = object_in(j);
  o.emplace(first, a);
  o.emplace(second, b);
}

}  // namespace

void to_json(json& j, const Position& p) { two_fields(j, "line", p.line, "character", p.character); }

void to_json(json& j, const Range& r) { two_fields(j, "start", r.start, "end", r.end); }

void to_json(json& j, const Location& l) { two_fields(j, "uri", l.uri, "range", l.range); }

void to_json(json& j, const DiagnosticData& d) {
  auto& o = object_in(j);
  o.emplace("oomlens", d.ref);
  o.emplace("version", d.version);
  if (d.verdict_class) o.emplace("class", *d.verdict_class);
  if (!d.fixes.is_null()) o.emplace("fixes", d.fixes);
  if (d.verify) o.emplace("verify", *d.verify);
  if (d.script) o.emplace("script", *d.script);
  if (d.fix_safety) o.emplace("fix", *d.fix_safety);
}

void to_json(json& j, const DiagnosticRelatedInformation& r) {
  two_fields(j, "location", r.location, "message", r.message);
}

void to_json(json& j, const Diagnostic& d) {
  auto& o = object_in(j);
  o.emplace("range", d.range);
  o.emplace("severity", d.severity);
  o.emplace("source", "oomlens");
  o.emplace("message", d.message);
  o.emplace("data", d.data);
  if (d.code) o.emplace("code", *d.code);
  if (d.code_href) object_in(o["codeDescription"]).emplace("href", *d.code_href);
  if (d.related_information) o.emplace("relatedInformation", *d.related_information);
}

void to_json(json& j, const Command& c) {
  auto& o = object_in(j);
  o.emplace("title", c.title);
  o.emplace("command", c.command);
  o.emplace("arguments", c.arguments);
}

void to_json(json& j, const TextEdit& e) { j = {{"range", e.range}, {"newText", e.new_text}}; }

void to_json(json& j, const WorkspaceEdit& e) {
  if (e.document_changes) {
    json changes = json::array();
    for (const auto& d : e.documents)
      changes.push_back({{"textDocument", {{"uri", d.uri}, {"version", d.version ? json(*d.version) : json()}}},
                         {"edits", d.edits}});
    j = {{"documentChanges", std::move(changes)}};
    return;
  }
  json changes = json::object();
  for (const auto& d : e.documents) changes[d.uri] = d.edits;
  j = {{"changes", std::move(changes)}};
}

void to_json(json& j, const InitializeResult& r) {
  const ClientCapabilities& client = r.client;
  json caps = {
      {"positionEncoding", std::string(to_string(client.encoding))},
      {"textDocumentSync", {{"openClose", true}, {"change", 2}, {"save", {{"includeText", false}}}}},
      // Jupyter notebooks: the Python cells, analysed in order as one script.
      {"notebookDocumentSync",
       {{"notebookSelector",
         {{{"notebook", {{"notebookType", "jupyter-notebook"}}}, {"cells", {{{"language", "python"}}}}}}}}},
      {"hoverProvider", true},
      {"inlayHintProvider", true},
      {"executeCommandProvider",
       {{"commands", {kDiagnoseText, kExplain, kExplainDocument, kCopyVerification, kRunVerification, kVerify, kShowFix,
                      kAnalyzeSnapshot, kCompareSnapshots, kFixScript}}}},
  };
  if (client.code_action_literals) {
    caps["codeActionProvider"] = {{"codeActionKinds", {"quickfix", "source", "source.fixAll.oomlens", "source.oomlens",
                                                      "source.oomlens.explain", "source.oomlens.setAllocatorConf",
                                                      "source.oomlens.recordSnapshot", "source.oomlens.verify"}},
                                  {"resolveProvider", client.resolve_command || client.resolve_edit}};
  } else {
    caps["codeActionProvider"] = true;
  }
  if (client.pull_diagnostics)
    caps["diagnosticProvider"] = {{"identifier", "oomlens"}, {"interFileDependencies", false}, {"workspaceDiagnostics", false}};
  j = {{"capabilities", std::move(caps)}, {"serverInfo", {{"name", "oomlens"}, {"version", r.version}}}};
}

void to_json(json& j, const ConfigurationParams& p) { j = {{"items", json::array({{{"section", p.section}}})}}; }

void to_json(json& j, const WatchedFilesRegistration& r) {
  json watchers = json::array();
  for (const auto& w : r.watchers) watchers.push_back({{"globPattern", w.glob_pattern}, {"kind", w.kind}});
  j = {{"registrations",
        {{{"id", r.id},
          {"method", "workspace/didChangeWatchedFiles"},
          {"registerOptions", {{"watchers", std::move(watchers)}}}}}}};
}

void to_json(json& j, const MessageParams& m) { j = {{"type", m.type}, {"message", m.message}}; }

void to_json(json& j, const WorkDoneProgressCreateParams& p) { j = {{"token", p.token}}; }

void to_json(json& j, const ProgressParams& p) {
  json value = {{"kind", p.kind}};
  if (p.title) value["title"] = *p.title;
  if (p.percentage) value["percentage"] = *p.percentage;
  if (p.kind == "begin") value["cancellable"] = false;
  j = {{"token", p.token}, {"value", std::move(value)}};
}

void to_json(json& j, const DocumentDiagnosticReport& r) {
  j = {{"kind", r.unchanged ? "unchanged" : "full"}};
  if (r.result_id) j["resultId"] = *r.result_id;
  if (!r.unchanged) j["items"] = r.items;
}

void to_json(json& j, const PublishDiagnosticsParams& p) {
  j = {{"uri", p.uri}, {"diagnostics", p.diagnostics}};
  if (p.version) j["version"] = *p.version;
}

void to_json(json& j, const DiagnosticServerCancellationData& d) { j = {{"retriggerRequest", d.retrigger_request}}; }

void to_json(json& j, const Hover& h) {
  j = {{"contents", {{"kind", h.markdown ? "markdown" : "plaintext"}, {"value", h.value}}}};
}

void to_json(json& j, const InlayHint& h) {
  j = {{"position", h.position},
       {"label", h.label},
       {"paddingLeft", true},
       {"tooltip", h.markdown_tooltip ? json{{"kind", "markdown"}, {"value", h.tooltip}} : json(h.tooltip)}};
}

void to_json(json& j, const CodeActionData& d) {
  auto& o = object_in(j);
  o.emplace("uri", d.uri);
  o.emplace("version", d.version);
  o.emplace("ref", d.ref);
  if (d.index) o.emplace("index", *d.index);
}

void to_json(json& j, const CodeAction& a) {
  auto& o = object_in(j);
  o.emplace("title", a.title);
  o.emplace("kind", a.kind);
  if (!a.diagnostics.empty()) o.emplace("diagnostics", a.diagnostics);
  if (a.preferred) o.emplace("isPreferred", true);
  if (a.edit) o.emplace("edit", *a.edit);
  if (a.command) o.emplace("command", *a.command);
  if (a.data) o.emplace("data", *a.data);
}

void to_json(json& j, const CodeActionItem& item) {
  std::visit([&j](const auto& value) { to_json(j, value); }, item);
}

void to_json(json& j, const ScriptFix& f) {
  j = {{"title", f.title ? json(*f.title) : json()}, {"edit", f.edit ? json(*f.edit) : json()}};
  if (f.safety) j["safety"] = *f.safety;
  if (f.message) j["message"] = *f.message;
  if (f.verify) j["verify"] = *f.verify;
}

void to_json(json& j, const FixRequest& f) {
  auto& o = object_in(j);
  o.emplace("kind", f.kind);
  for (auto [key, value] : {std::pair{"name", &f.name}, std::pair{"value", &f.value}, std::pair{"script", &f.script},
                            std::pair{"safety", &f.safety}, std::pair{"detail", &f.detail}})
    if (*value) o.emplace(key, **value);
  if (f.line) o.emplace("line", *f.line);
}

void to_json(json& j, const CommandResult& r) {
  j = json::object();
  if (r.report) j["json"] = *r.report;
  for (auto [key, value] : {std::pair{"markdown", &r.markdown}, std::pair{"html", &r.html},
                            std::pair{"command", &r.command}, std::pair{"message", &r.message}})
    if (*value) j[key] = **value;
}

void to_json(json& j, const CommandAnswer& a) {
  std::visit([&j](const auto& answer) { to_json(j, answer); }, a.value);
}

void to_json(json& j, const CommandArgument& argument) {
  std::visit([&j](const auto& value) { j = value; }, argument);
}

json resolved_action(json action, const ResolvedParts& parts) {
  if (parts.command && !action.contains("command")) action["command"] = *parts.command;
  if (parts.edit && !action.contains("edit")) action["edit"] = *parts.edit;
  return action;
}

}  // namespace oomlens::lsp
