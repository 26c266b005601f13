// Settings from initializationOptions, workspace/configuration and
// didChangeConfiguration; a change re-analyses the open documents.
#include <fmt/format.h>

#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::apply_settings(const SettingsSection& section) {
  settings_ = section.settings;
  for (const auto& problem : section.problems) notify("window/logMessage", MessageParams{2, "oomlens: " + problem});
}

void Server::request_configuration() {
  send_request("workspace/configuration", ConfigurationParams{"oomlens"}, [this](const Response& r) {
    if (r.error) return;
    ConfigurationResult answer;
    read(r.result, answer);
    if (!answer.settings) return;
    apply_settings(*answer.settings);
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
