// Which source files are the user's own code and which belong to Python, an
// installed package or a framework. Shared by the log analyzer (a traceback's
// user line) and the snapshot reader (a stack's user frames).
#pragma once

#include <string_view>

namespace oomlens::analyzer {

// True for files of the Python runtime and of installed packages and
// frameworks (site-packages, the standard library, torch/jax/tensorflow
// sources), false for the user's own code.
bool is_library_file(std::string_view file);

}  // namespace oomlens::analyzer
