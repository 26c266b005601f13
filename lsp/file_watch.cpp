// Files changed on disk while closed (a checkout, another editor): the
// server watches nothing itself, so it asks the client to
// (workspace/didChangeWatchedFiles, registered dynamically after
// initialized when the client can), and re-analyses the open scripts that
// import a file it is told changed.
#include "lsp/server.hpp"

namespace oomlens::lsp {

namespace {

// What the server reads from disk: the Python files of a workspace folder
// (its imports). Settings come over the protocol, and configuration files
// are read only as open documents, so no other file is watched.
constexpr const char* kWatchedFilesId = "oomlens.watchedFiles";
constexpr const char* kPythonFiles = "**/*.py";

}  // namespace

void Server::register_file_watchers() {
  if (!client_.watch_files || workspace_folders_.empty()) return;
  send_request("client/registerCapability", WatchedFilesRegistration{kWatchedFilesId, {{kPythonFiles}}},
               [this](const Response& r) {
                 if (r.error) notify("window/logMessage", MessageParams{2, "oomlens: the client did not watch "
                                                                              "the workspace's Python files; a file "
                                                                              "changed on disk counts after an edit"});
               });
}

void Server::did_change_watched_files(const DidChangeWatchedFilesParams& params) {
  if (!projects_) return;
  std::vector<ProjectChange> changes;
  for (const auto& event : params.changes) {
    // An open document's text stands for the file, whatever the disk says.
    if (documents_.get(event.uri)) continue;
    bool created_or_deleted = event.type != FileEvent::Type::changed;
    if (auto member = projects_->changed_on_disk(event.uri, created_or_deleted))
      changes.push_back({std::move(*member), event.type == FileEvent::Type::created});
  }
  // A created file is imported by no script yet, as far as their facts say:
  // every open script of its folder is analysed again (an import of it may
  // resolve now). A deleted one is still an import of those that had it.
  reanalyse_importers(changes);
}

}  // namespace oomlens::lsp
