// Readies the analyzer before the first log arrives.
#pragma once

#include <string_view>

namespace oomlens::analyzer {

// Runs the analyzer over a small built-in log that holds a line of each kind
// of message the parsers read. Each parser compiles its patterns on first
// use, and each pattern builds its automaton's states as it meets text:
// without this, the first log a long-running process analyses (the first
// didOpen of a language server) pays for all of that on its own critical
// path. Safe to call from any thread, any number of times.
void warm_up();

// The built-in log warm_up() reads (for the test that it meets every family).
std::string_view warm_up_sample();

}  // namespace oomlens::analyzer
