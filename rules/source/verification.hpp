// The verification command for a script and an allocator setting: the exact
// command lines that re-run it with the setting and without it (the A/B
// comparison `oomlens verify` makes), for the editor to run in a terminal.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/python/script.hpp"

namespace oomlens::rules {

struct Verification {
  std::string with_setting;     // PYTORCH_CUDA_ALLOC_CONF='expandable_segments:True' python train.py
  std::string without_setting;  // env -u PYTORCH_CUDA_ALLOC_CONF python train.py
};

// `script_path` as the user would type it (quoted for a POSIX shell when
// needed); a script that initialises torch.distributed is started with
// torchrun (one process per GPU of this machine).
Verification verification_commands(const analyzer::python::Script& script, std::string_view script_path,
                                   std::string_view variable, std::string_view option);

// A word for a POSIX shell: as is when it needs no quoting, else in single
// quotes ('\'' for a quote inside).
std::string shell_quote(std::string_view word);

}  // namespace oomlens::rules
