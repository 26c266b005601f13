// Settings from initializationOptions, workspace/configuration and
// didChangeConfiguration; a change re-analyses the open documents.
#include <fmt/format.h>

#include "lsp/server.hpp"

namespace oomlens::lsp {

using nlohmann::json;

void Server::apply_settings(const json& section) {
  std::vector<std::string> problems;
  settings_ = read_settings(section, problems);
  for (const auto& problem : problems) notify("window/logMessage", {{"type", 2}, {"message", "oomlens: " + problem}});
}

void Server::request_configuration() {
  send_request("workspace/configuration", {{"items", json::array({{{"section", "oomlens"}}})}}, [this](const Response& r) {
    if (r.error || !r.result.is_array() || r.result.empty()) return;
    apply_settings(r.result[0]);
    refresh_all();
  });
}

void Server::did_change_configuration(json& params) {
  if (client_.configuration) {
    request_configuration();
    return;
  }
  if (params.is_object() && params.contains("settings") && params["settings"].is_object()) {
    const json& s = params["settings"];
    apply_settings(s.contains("oomlens") ? s["oomlens"] : s);
    refresh_all();
  }
}

void Server::refresh_all() {
  // Fixes depend on the settings: analyse again, then let pull clients know.
  for (const auto& doc : documents_.all()) schedule_analysis(doc);
  if (client_.pull_diagnostics && client_.diagnostic_refresh)
    send_request("workspace/diagnostic/refresh", nullptr, nullptr);
}

}  // namespace oomlens::lsp
