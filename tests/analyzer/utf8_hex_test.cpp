// The shared UTF-8 and hex helpers every decoder uses (analyzer/utf8.hpp, hex.hpp).
#include <catch2/catch.hpp>

#include <string>
#include <string_view>

#include "analyzer/hex.hpp"
#include "analyzer/utf8.hpp"

using namespace oomlens::analyzer;

namespace {
int sequence(std::string_view bytes) {
  return utf8_sequence(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}
}  // namespace

TEST_CASE("utf8_sequence follows the Unicode table 3-7") {
  CHECK(sequence("a") == 1);
  CHECK(sequence("\xC3\xA9") == 2);          // é
  CHECK(sequence("\xE2\x96\x88") == 3);      // █
  CHECK(sequence("\xF0\x9F\x94\xA5") == 4);  // an emoji
  CHECK(sequence("\xC0\xAF") == 0);          // overlong
  CHECK(sequence("\xE0\x80\xAF") == 0);      // overlong
  CHECK(sequence("\xED\xA0\x80") == 0);      // a surrogate
  CHECK(sequence("\xF4\x90\x80\x80") == 0);  // above U+10FFFF
  CHECK(sequence("\x80") == 0);              // a continuation byte first
  CHECK(sequence("\xE2\x96") == -1);         // cut short: cannot tell yet
  CHECK(sequence("\xE2\x41") == 0);
}

TEST_CASE("append_utf8 and write_utf8 encode, replacing what UTF-8 cannot hold") {
  std::string out;
  append_utf8(out, 'a');
  append_utf8(out, 0xE9);
  append_utf8(out, 0x2588);
  append_utf8(out, 0x1F525);
  CHECK(out == "a\xC3\xA9\xE2\x96\x88\xF0\x9F\x94\xA5");
  out.clear();
  append_utf8(out, 0xD800);
  append_utf8(out, 0x110000);
  CHECK(out == "\xEF\xBF\xBD\xEF\xBF\xBD");
  char buffer[4];
  CHECK(write_utf8(buffer, 0x2588) - buffer == 3);
}

TEST_CASE("hex digits and numbers") {
  CHECK(hex_digit('0') == 0);
  CHECK(hex_digit('9') == 9);
  CHECK(hex_digit('a') == 10);
  CHECK(hex_digit('F') == 15);
  CHECK(hex_digit('g') == -1);
  CHECK(hex_digit('@') == -1);
  CHECK(hex_digit(0xC6) == -1);  // 'F' | 0x80: not a digit
  CHECK(parse_hex("20") == 0x20u);
  CHECK(parse_hex("10FFFF") == 0x10FFFFu);
  CHECK(parse_hex("ffffffff") == 0xFFFFFFFFu);
  CHECK_FALSE(parse_hex(""));
  CHECK_FALSE(parse_hex("2g"));
  CHECK_FALSE(parse_hex("123456789"));
}
