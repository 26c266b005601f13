// The directories named to `oomlens lint`, each a project: its Python files
// import each other (rules/source/project.hpp), read from the directory.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "rules/source/project.hpp"

namespace oomlens::cli {

struct LintProject {
  std::string root;  // the directory as named
  std::unique_ptr<rules::source::Project> project;
  // The index among the files to lint of each of its files, by path relative to the root.
  std::unordered_map<std::string, std::size_t> file_index;
};

// A file found under a named directory: the directory's project and the
// file's path relative to it.
struct ProjectMember {
  std::size_t project = 0;
  std::string relative;
};

// One project per directory (`roots`), over the files found under it
// (`members[i]` for the i-th file to lint, nothing for files named alone).
std::vector<LintProject> lint_projects(const std::vector<std::string>& roots,
                                       const std::vector<std::optional<ProjectMember>>& members);

}  // namespace oomlens::cli
