#include "lsp/workspace_projects.hpp"

#include <filesystem>
#include <map>
#include <mutex>

#include "lsp/local_files.hpp"
#include "report/files.hpp"

namespace oomlens::lsp {
namespace {

// The open texts of one folder, by path relative to it: shared by the
// protocol thread (edits) and the analyses (reads).
struct OpenTexts {
  mutable std::mutex mutex;
  std::map<std::string, std::string, std::less<>> texts;
};

class FolderFiles final : public rules::source::ProjectFiles {
 public:
  FolderFiles(std::string root, std::shared_ptr<OpenTexts> open) : root_(std::move(root)), open_(std::move(open)) {}

  bool exists(std::string_view relative) const override {
    {
      std::lock_guard lock(open_->mutex);
      if (open_->texts.find(relative) != open_->texts.end()) return true;
    }
    std::error_code ec;
    return std::filesystem::is_regular_file(path(std::string(relative)), ec);
  }

  std::optional<std::string> read(const std::string& relative) const override {
    {
      std::lock_guard lock(open_->mutex);
      if (auto it = open_->texts.find(relative); it != open_->texts.end()) return it->second;
    }
    report::FileError error;
    return report::read_file(path(relative), error);
  }

  std::string path(const std::string& relative) const override { return root_ + "/" + relative; }

 private:
  std::string root_;
  std::shared_ptr<OpenTexts> open_;
};

}  // namespace

struct WorkspaceProjects::Folder {
  std::string root;
  std::shared_ptr<OpenTexts> open = std::make_shared<OpenTexts>();
  std::shared_ptr<rules::source::Project> project;
};

WorkspaceProjects::WorkspaceProjects(const std::vector<std::string>& folders) {
  for (const auto& f : folders) {
    std::string root = f;
    while (root.size() > 1 && root.back() == '/') root.pop_back();
    auto folder = std::make_unique<Folder>();
    folder->root = root;
    folder->project = std::make_shared<rules::source::Project>(std::make_unique<FolderFiles>(root, folder->open));
    folders_.push_back(std::move(folder));
  }
}

WorkspaceProjects::~WorkspaceProjects() = default;

const WorkspaceProjects::Folder* WorkspaceProjects::folder_of(const std::string& uri, std::string& relative) const {
  auto path = path_from_file_uri(uri);
  if (!path) return nullptr;
  const Folder* best = nullptr;
  for (const auto& f : folders_) {
    std::string prefix = f->root == "/" ? "/" : f->root + "/";
    if (path->starts_with(prefix) && path->size() > prefix.size() && (!best || f->root.size() > best->root.size())) {
      best = f.get();
      relative = path->substr(prefix.size());
    }
  }
  return best;
}

std::optional<ProjectMember> WorkspaceProjects::member_of(const std::string& uri) const {
  std::string relative;
  const Folder* folder = folder_of(uri, relative);
  if (!folder) return std::nullopt;
  return ProjectMember{folder->project, std::move(relative)};
}

void WorkspaceProjects::set_text(const std::string& uri, std::string text) {
  std::string relative;
  const Folder* folder = folder_of(uri, relative);
  if (!folder || !relative.ends_with(".py")) return;
  {
    std::lock_guard lock(folder->open->mutex);
    folder->open->texts.insert_or_assign(relative, std::move(text));
  }
  folder->project->forget(relative);
}

void WorkspaceProjects::drop_text(const std::string& uri) {
  std::string relative;
  const Folder* folder = folder_of(uri, relative);
  if (!folder || !relative.ends_with(".py")) return;
  {
    std::lock_guard lock(folder->open->mutex);
    folder->open->texts.erase(relative);
  }
  folder->project->forget(relative);
}

std::optional<ProjectMember> WorkspaceProjects::changed_on_disk(const std::string& uri, bool created_or_deleted) {
  std::string relative;
  const Folder* folder = folder_of(uri, relative);
  if (!folder || !relative.ends_with(".py")) return std::nullopt;
  {
    std::lock_guard lock(folder->open->mutex);
    if (folder->open->texts.count(relative)) return std::nullopt;
  }
  if (created_or_deleted) folder->project->forget_all();
  else folder->project->forget(relative);
  return ProjectMember{folder->project, std::move(relative)};
}

}  // namespace oomlens::lsp
