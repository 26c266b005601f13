// Turning raw terminal bytes into lines the parsers can read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomlens::analyzer {

// Removes ANSI escape sequences (CSI colour codes, OSC titles, two-byte
// escapes). A colour code can sit inside a number ("\x1b[1;36m2.00\x1b[0m GiB"),
// so this runs before any parsing.
std::string strip_ansi(std::string_view text);

// What a launcher or logger put in front of the program's own text.
struct LinePrefix {
  std::optional<int> rank;
  std::optional<std::int64_t> time_ms;
  std::size_t length = 0;  // bytes of prefix to drop
};

// Recognises, repeatedly and in any order, leading timestamps
// ("2026-03-01 12:00:00,123", "[2026-03-01T12:00:00.123Z]") and rank prefixes
// ("[rank3]:", "[default3]:", srun's "3: ", mpirun's "[1,3]<stderr>:").
LinePrefix read_prefix(std::string_view text);

// Width of text in a terminal, counting code points (UTF-8 continuation bytes
// do not add a column; invalid bytes count one each). Capped at UINT32_MAX.
std::uint32_t display_columns(std::string_view text);

// Milliseconds since the Unix epoch for a civil UTC date and time.
std::int64_t epoch_ms(int year, int month, int day, int hour, int minute, int second, int millis);

}  // namespace oomlens::analyzer
