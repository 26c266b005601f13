// Byte sizes as GPU frameworks print them, and back.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomlens::analyzer {

// Parses a printed size such as "2.00 GiB", "512 bytes", "9.07 GB" (MPS),
// "1.50GiB" (TensorFlow/XLA), "176.00MiB", "100B" into bytes. Units are binary
// (powers of 1024) whatever their label, as every framework computes them that
// way. Returns nothing for text that is not a size.
std::optional<std::uint64_t> parse_size(std::string_view text);

// Formats bytes the way PyTorch's allocator does ("2.00 GiB", "512 bytes"), so
// our messages carry numbers the user can find in their log.
std::string format_size(std::uint64_t bytes);

// Sizes at or above this are placeholders, not real limits: PyTorch prints
// SIZE_MAX as "17179869184.00 GiB" when no memory fraction is set.
inline constexpr std::uint64_t kPlaceholderSize = std::uint64_t{1} << 60;

}  // namespace oomlens::analyzer
