// What one file of a project tells the others, read once from its parsed
// script and kept (rules/source/project.hpp): the imports its module-level
// code runs before it first uses CUDA (and that use), the functions it
// defines that flush the allocator's cache, and the project files it imports.
// Self-contained: nothing here depends on another file's facts, so an edit
// of one file replaces that file's facts and no other.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "analyzer/python/module_resolution.hpp"
#include "analyzer/python/script.hpp"

namespace oomlens::rules::source {

struct SourcePlace {
  std::uint32_t line = 0;
  std::uint32_t column = 1;
};

struct ModuleFacts {
  // Module-level code in execution order up to its first CUDA use: each
  // import that runs project files (the files, in order), then that use.
  struct Step {
    std::vector<std::string> loads;
    bool cuda = false;  // the module's own first CUDA use
    SourcePlace where;
    std::string what;   // the use's text, shortened
  };
  std::vector<Step> steps;

  // A module-level function (or a method of a module-level class, by
  // "Class.method") that flushes the cache, directly or through functions
  // of this file: the first flush it reaches.
  struct Flush {
    SourcePlace where;
    std::string flush;     // "torch.cuda.empty_cache"
    std::string function;  // the def holding the flush call
    bool periodic = false;
  };
  std::unordered_map<std::string, Flush> flushes;
  // A module-level function (or method, as above) that uses CUDA, directly
  // or through functions of this file: the first use it reaches.
  struct CudaCall {
    SourcePlace where;
    std::string what;  // the use's text, shortened
  };
  std::unordered_map<std::string, CudaCall> cuda_calls;
  // The functions of other project files each module-level function calls
  // (directly or through functions of this file), to follow flushes and CUDA
  // uses on.
  std::unordered_map<std::string, std::vector<analyzer::python::ProjectFunction>> calls_out;
  // Names its module-level imports bind to functions of other project files
  // (`from .memory import free` in a package's __init__.py).
  std::unordered_map<std::string, analyzer::python::ProjectFunction> reexports;
  // Every project file its imports (anywhere in it) run, in source order.
  std::vector<std::string> dependencies;
};

// What a call names in another file: a function, or a method of an instance.
const std::optional<std::string>& callee_name(const analyzer::python::Call& call);

// The facts of the script at `path` (relative to the project root).
ModuleFacts module_facts(const analyzer::python::Script& script, std::string_view path,
                         const analyzer::python::ProjectFileExists& exists);

}  // namespace oomlens::rules::source
