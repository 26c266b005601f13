// The verification command for a script and an allocator setting: the
// `oomlens verify` A/B run (with the setting and without it), for the editor
// to run in a terminal.
#pragma once

#include <string>
#include <string_view>

#include "analyzer/python/script.hpp"

namespace oomlens::rules {

// `script_path` as the user would type it (quoted for a POSIX shell when
// needed); a script that initialises torch.distributed is started with
// torchrun (one process per GPU of this machine).
std::string verification_command(const analyzer::python::Script& script, std::string_view script_path,
                                 std::string_view variable, std::string_view option);

}  // namespace oomlens::rules
