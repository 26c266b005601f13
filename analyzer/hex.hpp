// Hexadecimal digits, shared by the decoders of escapes (\xNN, \uNNNN in
// Python and pickle strings and JSON, %NN in file URIs).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace oomlens::analyzer {

// The value of one hex digit (either case), or -1.
constexpr int hex_digit(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  unsigned char lower = c | 0x20;  // 'A'-'F' -> 'a'-'f'; nothing else lands there
  if (lower >= 'a' && lower <= 'f') return lower - 'a' + 10;
  return -1;
}

// The value of `digits` (at most 8), every one a hex digit; nothing otherwise.
constexpr std::optional<std::uint32_t> parse_hex(std::string_view digits) {
  if (digits.empty() || digits.size() > 8) return std::nullopt;
  std::uint32_t value = 0;
  for (char c : digits) {
    int d = hex_digit(static_cast<unsigned char>(c));
    if (d < 0) return std::nullopt;
    value = value * 16 + static_cast<std::uint32_t>(d);
  }
  return value;
}

}  // namespace oomlens::analyzer
