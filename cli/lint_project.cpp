#include "cli/lint_project.hpp"

#include <filesystem>
#include <unordered_set>

#include "report/files.hpp"

namespace oomlens::cli {
namespace {

// A project's Python files as the directory walk found them: imports resolve
// to those only (a hidden directory or __pycache__ holds none).
class DirectoryFiles final : public rules::source::ProjectFiles {
 public:
  DirectoryFiles(std::string root, std::unordered_set<std::string> python) : root_(std::move(root)), python_(std::move(python)) {}

  bool exists(std::string_view relative) const override { return python_.count(std::string(relative)) > 0; }

  std::optional<std::string> read(const std::string& relative) const override {
    report::FileError error;
    return report::read_file(path(relative), error);
  }

  // As the walk names it: the directory as given, then the path below it.
  std::string path(const std::string& relative) const override {
    return (std::filesystem::path(root_) / relative).string();
  }

 private:
  std::string root_;
  std::unordered_set<std::string> python_;
};

}  // namespace

std::vector<LintProject> lint_projects(const std::vector<std::string>& roots,
                                       const std::vector<std::optional<ProjectMember>>& members) {
  std::vector<std::unordered_set<std::string>> python(roots.size());
  std::vector<LintProject> projects(roots.size());
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!members[i]) continue;
    const auto& m = *members[i];
    projects[m.project].file_index.emplace(m.relative, i);
    if (m.relative.ends_with(".py")) python[m.project].insert(m.relative);
  }
  for (std::size_t p = 0; p < roots.size(); ++p) {
    projects[p].root = roots[p];
    projects[p].project =
        std::make_unique<rules::source::Project>(std::make_unique<DirectoryFiles>(roots[p], std::move(python[p])));
  }
  return projects;
}

}  // namespace oomlens::cli
