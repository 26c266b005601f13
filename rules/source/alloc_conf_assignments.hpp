// Where a script sets the allocator configuration, and where it first makes
// CUDA read it: the facts OOM302 (set too late) and the fix that sets it
// (set_alloc_conf.hpp) share.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/source/project_context.hpp"

namespace oomlens::rules::source {

// One assignment of PYTORCH_CUDA_ALLOC_CONF, PYTORCH_ALLOC_CONF or
// PYTORCH_HIP_ALLOC_CONF in the script's environment, whatever the import
// (`os.environ`, `from os import environ`, `import os as o`).
struct AllocConfAssignment {
  enum class Form {
    subscript,       // os.environ["X"] = v
    setdefault,      // os.environ.setdefault("X", v): keeps a value set outside
    putenv,          // os.putenv("X", v)
    update,          // os.environ.update({"X": v}) / update(X=v)
    merge_operator,  // os.environ |= {"X": v}
  };
  Form form = Form::subscript;
  std::string variable;
  analyzer::python::Node statement;  // the expression_statement holding it
  analyzer::python::Node value;      // the value expression
  std::optional<analyzer::python::StringLiteral> literal;  // the value, when it is a constant string
  bool only_entry = true;  // update / |=: the dict sets nothing else
};

// In source order.
std::vector<AllocConfAssignment> alloc_conf_assignments(const analyzer::python::Script& script);

// The string literal an expression is (parentheses looked through); nothing
// for bytes, f-strings with fields, or anything else.
std::optional<analyzer::python::StringLiteral> string_value(const analyzer::python::Script& script,
                                                            analyzer::python::Node expression);

// The first use of torch that initialises CUDA (and with it the caching
// allocator, which reads its settings then and never again): `x.cuda()`,
// `.to("cuda")`, a factory with `device="cuda..."`, `torch.cuda.set_device`,
// `torch.cuda.mem_get_info`, ... A device given by a name counts when that
// name is assigned a value mentioning "cuda" in this file. Not counted: calls
// that do not initialise (`torch.cuda.is_available()`, `device_count()`).
struct CudaUse {
  analyzer::python::Node call;
  std::string description;  // "model.cuda()", "torch.cuda.set_device(...)"
};
std::vector<CudaUse> cuda_uses(const analyzer::python::Script& script);

// Index into script.execution_order() of the step that runs `node`; nothing
// when it never runs from module level (a function nobody calls).
std::optional<std::size_t> step_of(const std::vector<analyzer::python::Step>& steps, analyzer::python::Node node);

// Whether an assignment comes too late to have any effect, in the module's
// execution order: after the first CUDA use (the allocator has read its
// settings), or, for the `backend` option, after `import torch` (PyTorch
// reads `backend` once, when its CUDA library loads at `import torch`; the
// other options when the allocator is first used).
//
// `uses` are the script's cuda_uses() (computed once per script by callers
// that judge several assignments). In a project, an import of a project
// module that starts CUDA when it runs (`project`) is a CUDA use at the import,
// and so is a call of another project file's function that uses CUDA.
struct Lateness {
  enum class Why { in_time, after_cuda_use, backend_after_import };
  Why why = Why::in_time;
  analyzer::python::Node cause;  // the CUDA use or the import
  std::string what;              // its text, shortened
  // The cause is an import, or a call of another project file's function:
  // where CUDA starts in the project.
  std::optional<ImportedCudaStart> imported;
};
Lateness lateness(const analyzer::python::Script& script, const std::vector<analyzer::python::Step>& steps,
                  const std::vector<CudaUse>& uses, const AllocConfAssignment& assignment,
                  const ProjectContext& project = no_project());

}  // namespace oomlens::rules::source
