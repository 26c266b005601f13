// parse_size/format_size against PyTorch's format_size rules: whole bytes up
// to 1024, else two decimals of the largest binary unit up to GiB.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "analyzer/size.hpp"

using oomlens::analyzer::format_size;
using oomlens::analyzer::kPlaceholderSize;
using oomlens::analyzer::parse_size;

namespace {
constexpr std::uint64_t kKiB = 1024, kMiB = kKiB * 1024, kGiB = kMiB * 1024;
}

TEST_CASE("format_size switches unit only above each power of 1024", "[size]") {
  CHECK(format_size(0) == "0 bytes");
  CHECK(format_size(512) == "512 bytes");
  CHECK(format_size(1024) == "1024 bytes");
  CHECK(format_size(1025) == "1.00 KiB");
  CHECK(format_size(kMiB) == "1024.00 KiB");
  CHECK(format_size(kMiB + 1) == "1.00 MiB");
  CHECK(format_size(kGiB) == "1024.00 MiB");
  CHECK(format_size(kGiB + 1) == "1.00 GiB");
  CHECK(format_size(79 * kGiB + 158 * kMiB) == "79.15 GiB");
  CHECK(format_size(UINT64_MAX) == "17179869184.00 GiB");
}

TEST_CASE("parse_size reads every framework's spelling in binary units", "[size]") {
  CHECK(parse_size("512 bytes") == std::uint64_t{512});
  CHECK(parse_size("1024 bytes") == std::uint64_t{1024});
  CHECK(parse_size("1024.00 KiB") == kMiB);
  CHECK(parse_size("2.00 MiB") == 2 * kMiB);
  CHECK(parse_size("1.50GiB") == std::uint64_t{1610612736});    // TSL/XLA: no space
  CHECK(parse_size("9.07 GB") == std::uint64_t{9738838344});    // MPS: GB means GiB
  CHECK(parse_size("384.00 KB") == 384 * kKiB);
  CHECK(parse_size("176.00MiB") == 176 * kMiB);
  CHECK(parse_size("100B") == std::uint64_t{100});
  CHECK(parse_size("  7.93 GiB") == std::uint64_t{8514772664});  // rounded to the nearest byte
}

TEST_CASE("parse_size treats SIZE_MAX prints as placeholders and saturates", "[size]") {
  auto placeholder = parse_size("17179869184.00 GiB");
  REQUIRE(placeholder);
  CHECK(*placeholder >= kPlaceholderSize);
  CHECK(parse_size("99999999999999999999.99 GiB") == UINT64_MAX);
  CHECK(parse_size("99999999999999999999999999999999999999 bytes") == UINT64_MAX);
}

TEST_CASE("parse_size rejects text that is not a size", "[size]") {
  CHECK_FALSE(parse_size(""));
  CHECK_FALSE(parse_size("GiB"));
  CHECK_FALSE(parse_size("abc"));
  CHECK_FALSE(parse_size("-1 GiB"));
  CHECK_FALSE(parse_size("1.5 parsecs"));
  CHECK_FALSE(parse_size("1.2.3 GiB"));
  CHECK_FALSE(parse_size("."));
}

TEST_CASE("format_size round-trips through parse_size within print rounding", "[size]") {
  for (std::uint64_t bytes : {std::uint64_t{1}, std::uint64_t{1023}, std::uint64_t{1536}, 3 * kMiB + 12345,
                              20 * kMiB, 79 * kGiB + 123456789, 1000 * kGiB}) {
    auto back = parse_size(format_size(bytes));
    REQUIRE(back);
    // Two decimals of the printed unit: at most half a hundredth of it off.
    std::uint64_t unit = bytes <= 1024 ? 1 : bytes <= kMiB ? kKiB : bytes <= kGiB ? kMiB : kGiB;
    std::uint64_t error = *back > bytes ? *back - bytes : bytes - *back;
    CHECK(error <= unit / 200 + 1);
  }
}
