// Where lines start near a place in a file, found with a few small reads:
// how a long log is cut into pieces that begin and end at line starts.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace oomlens::report {

// How far from the place a line start is looked for; a log whose lines are
// longer is read in one pass.
inline constexpr std::size_t kLineSearch = 1 << 20;

// The first line start at or after `at` (at least 1) within kLineSearch
// bytes, if any: the byte after the first '\n' at or after `at - 1`.
std::optional<std::uint64_t> line_start_after(int fd, std::uint64_t at);

// The last line start at or before `at`, looking back at most kLineSearch
// bytes; `at` itself when none is that near (and the file's start when it
// is within them). A read that fails also gives `at`.
std::uint64_t line_start_before(int fd, std::uint64_t at);

}  // namespace oomlens::report
