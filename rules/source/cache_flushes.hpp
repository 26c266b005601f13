// The calls that flush a device's caching allocator (`torch.cuda.empty_cache()`
// and the MPS / XPU ones), and the step-counter guards that make a flush
// periodic: what OOM301 matches in a script, and what a project remembers of
// each file's functions.
#pragma once

#include <string_view>
#include <utility>
#include <vector>

#include "analyzer/python/script.hpp"

namespace oomlens::rules::source {

// Every flush call of the script with the name it resolves to, in source
// order. Re-exports (torch.cuda.memory.empty_cache) count as the function.
std::vector<std::pair<analyzer::python::Call, std::string_view>> cache_flushes(const analyzer::python::Script& script);

// Whether the node sits under an `if` whose condition is a step-counter test
// (`step % N == 0`), up to `stop` (or the enclosing def's body).
bool periodic_guard(const analyzer::python::Script& script, analyzer::python::Node node,
                    analyzer::python::Node stop = {});

}  // namespace oomlens::rules::source
