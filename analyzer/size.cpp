#include "analyzer/size.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fmt/format.h>

namespace oomlens::analyzer {
namespace {

// Power of 1024 for a unit label; every framework we read divides by 1024
// (PyTorch KiB/MiB/GiB, MPS KB/MB/GB, TSL KiB/MiB/GiB without a space).
std::optional<int> unit_power(std::string_view unit) {
  std::string u;
  for (char c : unit) u.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  if (u == "b" || u == "bytes" || u == "byte") return 0;
  if (u == "kib" || u == "kb" || u == "k") return 1;
  if (u == "mib" || u == "mb" || u == "m") return 2;
  if (u == "gib" || u == "gb" || u == "g") return 3;
  if (u == "tib" || u == "tb" || u == "t") return 4;
  if (u == "pib" || u == "pb" || u == "p") return 5;
  return std::nullopt;
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  std::size_t start = i;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
  if (i == start) return std::nullopt;
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data() + start, text.data() + i, value);
  if (ec != std::errc() || ptr != text.data() + i || !std::isfinite(value) || value < 0) return std::nullopt;
  while (i < text.size() && text[i] == ' ') ++i;
  std::size_t unit_start = i;
  while (i < text.size() && std::isalpha(static_cast<unsigned char>(text[i]))) ++i;
  std::string_view unit = text.substr(unit_start, i - unit_start);
  if (unit.empty()) unit = "bytes";
  auto power = unit_power(unit);
  if (!power) return std::nullopt;
  double bytes = value * std::pow(1024.0, *power);
  // Beyond 2^64 a printed size is a placeholder (SIZE_MAX); saturate.
  if (bytes >= 18446744073709549568.0) return UINT64_MAX;
  return static_cast<std::uint64_t>(std::llround(bytes));
}

std::string format_size(std::uint64_t bytes) {
  constexpr double kKiB = 1024.0, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
  auto b = static_cast<double>(bytes);
  if (bytes <= 1024) return fmt::format("{} bytes", bytes);
  if (b <= kMiB) return fmt::format("{:.2f} KiB", b / kKiB);
  if (b <= kGiB) return fmt::format("{:.2f} MiB", b / kMiB);
  return fmt::format("{:.2f} GiB", b / kGiB);
}

}  // namespace oomlens::analyzer
