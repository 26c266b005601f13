#include "lsp/capabilities.hpp"

#include <algorithm>

namespace oomlens::lsp {
namespace {

using nlohmann::json;

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

}  // namespace

ClientCapabilities read_client_capabilities(const json& params) {
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

Settings read_settings(const json& section, std::vector<std::string>& problems) {
  Settings s;
  if (!section.is_object()) return s;
  if (auto it = section.find("allocatorOption"); it != section.end()) {
    if (it->is_string() && !it->get<std::string>().empty() && it->get<std::string>().find(':') != std::string::npos)
      s.rules.fragmentation_option = it->get<std::string>();
    else
      problems.push_back("oomlens.allocatorOption must be an allocator option such as \"expandable_segments:True\"");
  }
  if (auto it = section.find("progressThresholdBytes"); it != section.end()) {
    if (it->is_number_unsigned()) s.progress_threshold_bytes = it->get<std::size_t>();
    else problems.push_back("oomlens.progressThresholdBytes must be a non-negative integer");
  }
  return s;
}

}  // namespace oomlens::lsp
