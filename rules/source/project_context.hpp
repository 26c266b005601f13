// What the other files of a project tell the source rules about one script:
// where a project module it imports starts CUDA, and which functions of other
// project files flush the allocator's cache. A script linted alone has no
// project (no_project()): every question answers nothing, and the rules see
// the one file only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "analyzer/python/script.hpp"

namespace oomlens::rules::source {

// A place in another file of the project.
struct ProjectPlace {
  std::string name;  // the file relative to the project root, as messages name it: "pkg/__init__.py"
  std::string path;  // where the front end finds it (related places): as printed, or absolute
  std::uint32_t line = 0;    // 1-based
  std::uint32_t column = 1;  // 1-based, code points
};

// The first CUDA use that running an import statement brings about, in a
// project module it loads (directly or through that module's own imports),
// or that calling a function of another project file brings about.
struct ImportedCudaStart {
  ProjectPlace where;
  std::string what;  // "torch.cuda.set_device(0)"
};

// A function of another project file that flushes the cache when called
// (directly, or through further functions of the project).
struct ImportedFlush {
  ProjectPlace where;       // the flush call
  std::string flush;        // "torch.cuda.empty_cache"
  std::string function;     // the function holding the flush: "free_memory"
  bool periodic = false;    // the flush sits under a step-counter guard in its function
};

class ProjectContext {
 public:
  virtual ~ProjectContext() = default;
  // The first CUDA start that running this import statement brings about;
  // nothing when it loads no project module that starts CUDA.
  virtual std::optional<ImportedCudaStart> cuda_start(const analyzer::python::Import& import) const = 0;
  // The first CUDA use a call to a function of another project file brings
  // about (in that function, or in the project functions it calls); nothing
  // for any other call.
  virtual std::optional<ImportedCudaStart> cuda_start_through(const analyzer::python::Call& call) const = 0;
  // What a call to a function of another project file flushes; nothing for
  // any other call.
  virtual std::optional<ImportedFlush> flush_through(const analyzer::python::Call& call) const = 0;
};

// A script linted on its own.
const ProjectContext& no_project();

}  // namespace oomlens::rules::source
