// The editor's workspace folders as projects (rules/source/project.hpp): a
// script's imports resolve to the Python files of its folder, read as the
// editor holds them when they are open, else from disk.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rules/source/project.hpp"

namespace oomlens::lsp {

// A document of a workspace folder: the folder's project and the
// document's path in it ("pkg/__init__.py").
struct ProjectMember {
  std::shared_ptr<rules::source::Project> project;
  std::string relative;
};

class WorkspaceProjects {
 public:
  explicit WorkspaceProjects(const std::vector<std::string>& folders);
  ~WorkspaceProjects();
  WorkspaceProjects(const WorkspaceProjects&) = delete;
  WorkspaceProjects& operator=(const WorkspaceProjects&) = delete;

  // The innermost folder holding the document; nothing outside every folder.
  std::optional<ProjectMember> member_of(const std::string& uri) const;
  // The editor's text of an open file (opened or changed): it stands for the
  // file on disk, and what the project knew of the file is forgotten.
  void set_text(const std::string& uri, std::string text);
  // Closed: the file on disk counts again.
  void drop_text(const std::string& uri);
  // A file changed on disk (the client's file watcher says so): what the
  // project knew of it is forgotten, of every file when it was created or
  // deleted (an import may now resolve elsewhere). Nothing for a file
  // outside every folder, not a Python file, or open (the editor's text
  // stands for it).
  std::optional<ProjectMember> changed_on_disk(const std::string& uri, bool created_or_deleted);

 private:
  struct Folder;
  std::vector<std::unique_ptr<Folder>> folders_;
  const Folder* folder_of(const std::string& uri, std::string& relative) const;
};

}  // namespace oomlens::lsp
