// Python tracebacks: the frames above an error line, and which one is the
// user's own code.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/library_files.hpp"
#include "analyzer/log/event.hpp"
#include "analyzer/log/line.hpp"

namespace oomlens::analyzer {

// The frames of the traceback that ends just above region.lines[at], printed
// by the same rank; outermost first, as Python prints them. Empty when the
// error line is not preceded by a traceback. `reached_start`, when given, is
// set when the walk reached the region's first line still inside the
// traceback (or still passing other ranks' lines): more lines above would
// tell more.
std::vector<Frame> traceback_before(const Region& region, std::size_t at, bool* reached_start = nullptr);

// The innermost frame in the user's own code, where the failure happened from
// the user's point of view.
std::optional<Frame> user_frame(const std::vector<Frame>& frames);

// The outermost frame in the user's own code: the script that was started
// (what to re-run to verify a fix).
std::optional<Frame> entry_frame(const std::vector<Frame>& frames);

}  // namespace oomlens::analyzer
