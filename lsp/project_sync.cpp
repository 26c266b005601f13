// Scripts of a workspace folder import each other: a change to one is a
// change to the open scripts that import it (and pull clients are told).
#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::reanalyse_importers_of(const std::string& uri) {
  auto changed = projects_ ? projects_->member_of(uri) : std::nullopt;
  if (!changed || !changed->relative.ends_with(".py")) return;
  bool any = false;
  for (const auto& doc : documents_.all()) {
    if (doc->uri == uri || doc->kind != DocumentKind::python) continue;
    auto member = projects_->member_of(doc->uri);
    if (!member || member->project != changed->project || !member->project->imports(member->relative, changed->relative))
      continue;
    schedule_analysis(doc);
    any = true;
  }
  if (any && client_.pull_diagnostics && client_.diagnostic_refresh)
    send_request("workspace/diagnostic/refresh", nullptr, nullptr);
}

}  // namespace oomlens::lsp
