// Helpers the parsers share: joining wrapped lines, size captures.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "analyzer/line.hpp"

namespace oomlens::analyzer::parse {

// A size as printed by PyTorch/TSL/MPS, for use inside RE2 patterns: captures
// the number and unit, e.g. "2.00 GiB", "512 bytes", "9.07 GB", "1.50GiB".
inline constexpr const char* kSizePattern = R"(([0-9]+(?:\.[0-9]+)?\s*(?:bytes|[KMGTP]i?B|B)))";

// The message that starts on region.lines[at], joined with the lines after it
// while `complete(text)` is false (terminals and log wrappers cut long
// messages). Only lines of the same rank that do not start a new record
// (blank, "Traceback", a frame, an exception chain) are joined, at most
// `max_lines` in all. Lines are concatenated without a separator: a hard wrap
// splits words, so patterns allow optional whitespace between tokens.
// `last` receives the index of the last line used.
std::string joined_message(const Region& region, std::size_t at, std::size_t max_lines,
                           const std::function<bool(std::string_view)>& complete, std::size_t* last);

// The text before `needle` on the line that looks like a Python exception type
// ("torch.OutOfMemoryError", "RuntimeError"); empty when there is none.
std::string exception_before(std::string_view line, std::size_t needle_pos);

// Caps a message kept for output (hostile logs can have megabyte lines).
std::string capped(std::string_view text, std::size_t max_bytes = 4096);

}  // namespace oomlens::analyzer::parse
