// Scripts of a workspace folder import each other: a change to one is a
// change to the open scripts that import it (and pull clients are told).
#include <algorithm>

#include "lsp/server.hpp"

namespace oomlens::lsp {

void Server::reanalyse_importers_of(const std::string& uri) {
  auto changed = projects_ ? projects_->member_of(uri) : std::nullopt;
  if (!changed || !changed->relative.ends_with(".py")) return;
  reanalyse_importers({ProjectChange{std::move(*changed), false}}, uri);
}

void Server::reanalyse_importers(const std::vector<ProjectChange>& changes, const std::string& except_uri) {
  if (!projects_ || changes.empty()) return;
  auto affected = [&](const ProjectMember& member) {
    return std::any_of(changes.begin(), changes.end(), [&](const ProjectChange& c) {
      if (c.file.project != member.project) return false;
      return c.whole_project || member.project->imports(member.relative, c.file.relative);
    });
  };
  bool any = false;
  for (const auto& doc : documents_.all()) {
    if (doc->uri == except_uri || doc->kind != DocumentKind::python) continue;
    auto member = projects_->member_of(doc->uri);
    if (!member || !affected(*member)) continue;
    schedule_analysis(doc);
    any = true;
  }
  if (any && client_.pull_diagnostics && client_.diagnostic_refresh)
    send_request("workspace/diagnostic/refresh", nullptr, nullptr);
}

}  // namespace oomlens::lsp
