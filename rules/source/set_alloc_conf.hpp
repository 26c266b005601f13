// The fix "Set the allocator configuration": make the script set
// PYTORCH_CUDA_ALLOC_CONF (or merge an option into the value it already
// sets) where PyTorch still reads it — before the first `import torch`,
// after the module docstring, `from __future__` imports, shebang and
// encoding lines. Also the move OOM302 (set too late) offers as its fix.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/python/script.hpp"
#include "rules/source/alloc_conf_assignments.hpp"
#include "rules/source/source_rules.hpp"

namespace oomlens::rules {

// `option` is one `key:value` ("expandable_segments:True"). When the script
// already sets one of the allocator variables to a constant string, the
// option is merged into that value (replacing that key's value, keeping the
// rest) — and the assignment is moved above `import torch` when it came too
// late to take effect. Otherwise `import os` (if not imported before that
// point) and `os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "<option>")`
// are inserted before the first `import torch`; setdefault lets a value set
// in the shell win. Nothing when the script does not import torch, does not
// parse, sets the variable from a computed value (a merge could not be
// exact), or already sets the option in time (applying it twice changes
// nothing the second time). Unsafe: it changes how the allocator behaves.
std::optional<Fix> set_alloc_conf_action(const analyzer::python::Script& script, std::string_view option,
                                                  std::string_view variable = "PYTORCH_CUDA_ALLOC_CONF");

namespace source {

// The edits moving a one-line assignment above the module's first `import
// torch` (with a copy of the import that binds its `os` name when that import
// comes later), its value replaced by `new_value` when given. Nothing when no
// exact move exists (the statement spans lines or shares its line, torch is
// not imported at module level, the value is not a constant string).
std::optional<std::vector<TextEdit>> move_before_torch_import(const analyzer::python::Script& script,
                                                              const AllocConfAssignment& assignment,
                                                              std::optional<std::string> new_value = std::nullopt);

}  // namespace source
}  // namespace oomlens::rules
