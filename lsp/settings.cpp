// Settings from initializationOptions, workspace/configuration and
// didChangeConfiguration; a change re-analyses the open documents.
#include <fmt/format.h>

#include "lsp/server.hpp"

namespace oomlens::lsp {

using nlohmann::json;

void Server::apply_settings(const json& section) {
  std::vector<std::string> problems;
  settings_ = read_settings(section, problems);
  for (const auto& problem : problems) notify("window/logMessage", MessageParams{2, "oomlens: " + problem});
}

void Server::request_configuration() {
  send_request("workspace/configuration", ConfigurationParams{"oomlens"}, [this](const Response& r) {
    if (r.error || !r.result.is_array() || r.result.empty()) return;
    apply_settings(r.result[0]);
    refresh_all();
  });
}

void Server::did_change_configuration(DidChangeConfigurationParams params) {
  if (client_.configuration) {
    request_configuration();
    return;
  }
  if (params.settings) {
    apply_settings(*params.settings);
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
