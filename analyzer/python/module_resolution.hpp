// Which files of a project an import statement runs: Python's module search
// over paths relative to the project root ("pkg/mod.py"), with no file
// system behind it — the caller answers whether a path is a file of the
// project. Imports that name no project file (torch, os) resolve to nothing.
//
// Absolute names are looked up in the importing script's own directory (when
// it is no package: Python puts a script's directory first on sys.path), then
// at the root, then under `src/` (the src layout). Relative names (`.mod`,
// `..pkg.mod`) go from the importing file's package.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/python/script.hpp"

namespace oomlens::analyzer::python {

// Whether a path relative to the project root ("pkg/__init__.py") is a file
// of the project.
using ProjectFileExists = std::function<bool(std::string_view)>;

// The file of a module as written in `importer`: "pkg.mod" -> "pkg/mod.py" or
// "pkg/mod/__init__.py", ".mod" beside the importer; nothing when no
// project file is that module.
std::optional<std::string> module_file(std::string_view module, std::string_view importer,
                                       const ProjectFileExists& exists);

// The project files an import statement of `importer` runs, in the order
// Python runs them: each package's __init__.py on the way down, then the
// module; for `from m import n`, also n when it is a submodule of m.
std::vector<std::string> files_loaded(const Import& import, std::string_view importer,
                                      const ProjectFileExists& exists);

// A function of another project file that a qualified name stands for
// ("pkg.memory.free" -> {"pkg/memory.py", "free"}), or a method of one of
// its classes ("pkg.memory.Manager.flush" -> {"pkg/memory.py",
// "Manager.flush"}); nothing when the name is a module's, or no project
// module holds it.
struct ProjectFunction {
  std::string file;
  std::string name;
  friend bool operator==(const ProjectFunction&, const ProjectFunction&) = default;
};
std::optional<ProjectFunction> project_function(std::string_view qualified, std::string_view importer,
                                                const ProjectFileExists& exists);

}  // namespace oomlens::analyzer::python
