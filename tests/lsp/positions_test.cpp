#include <catch2/catch.hpp>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "lsp/positions.hpp"
#include "tests/lsp/lsp_test_support.hpp"

using namespace oomlens::lsp;

namespace {

constexpr PositionEncoding kAllEncodings[] = {PositionEncoding::utf8, PositionEncoding::utf16, PositionEncoding::utf32};

// Line 0: emoji at the start, CRLF. Line 1: "ö" and an emoji in the middle,
// bare CR. Line 2: CJK and an emoji at the end, LF. Line 3: invalid bytes.
//  byte:  0    4 5 6  7  8 9  11   15 16 17 20 23   27 28  29  30  31
const std::string kMixed = "😀ab\r\nxö😀y\r漢字😀\n\xff\xe2\x82z";

Position pos(std::uint32_t line, std::uint32_t character) { return {line, character}; }

}  // namespace

TEST_CASE("position encodings convert to and from their LSP names") {
  for (auto encoding : kAllEncodings) CHECK(parse_position_encoding(to_string(encoding)) == encoding);
  CHECK(to_string(PositionEncoding::utf8) == "utf-8");
  CHECK(to_string(PositionEncoding::utf16) == "utf-16");
  CHECK(to_string(PositionEncoding::utf32) == "utf-32");
  CHECK(!parse_position_encoding("utf8"));
  CHECK(!parse_position_encoding("UTF-16"));
  CHECK(!parse_position_encoding(""));
}

TEST_CASE("code_units counts per encoding: ö, CJK and emoji") {
  CHECK(code_units("abc", PositionEncoding::utf16) == 3);
  CHECK(code_units("ö", PositionEncoding::utf8) == 2);
  CHECK(code_units("ö", PositionEncoding::utf16) == 1);
  CHECK(code_units("漢", PositionEncoding::utf8) == 3);
  CHECK(code_units("漢", PositionEncoding::utf16) == 1);
  CHECK(code_units("😀", PositionEncoding::utf8) == 4);
  CHECK(code_units("😀", PositionEncoding::utf16) == 2);
  CHECK(code_units("😀", PositionEncoding::utf32) == 1);
  CHECK(code_units("", PositionEncoding::utf32) == 0);
}

TEST_CASE("code_units counts each invalid UTF-8 byte as one unit in every encoding") {
  for (auto encoding : kAllEncodings) {
    INFO(to_string(encoding));
    CHECK(code_units("\xff", encoding) == 1);
    CHECK(code_units("\xe2\x82" "a", encoding) == 3);      // truncated 3-byte sequence
    CHECK(code_units("\xf0\x9f\x98", encoding) == 3);      // truncated emoji
    CHECK(code_units("\xc0\xaf", encoding) == 2);          // overlong
    CHECK(code_units("\xed\xa0\x80", encoding) == 3);      // encoded surrogate
    CHECK(code_units("\xf4\x90\x80\x80", encoding) == 4);  // above U+10FFFF
    CHECK(code_units("\x80\x80", encoding) == 2);          // lone continuation bytes
  }
  CHECK(code_units("\xf4\x8f\xbf\xbf", PositionEncoding::utf16) == 2);  // U+10FFFF is valid
  CHECK(code_units("\xef\xbf\xbf", PositionEncoding::utf16) == 1);      // U+FFFF is valid
}

TEST_CASE("LineIndex ends lines at \\n, \\r\\n and bare \\r") {
  CHECK(LineIndex("").line_count() == 1);
  CHECK(LineIndex("abc").line_count() == 1);
  CHECK(LineIndex("a\n").line_count() == 2);
  CHECK(LineIndex("\r").line_count() == 2);
  CHECK(LineIndex("\r\n").line_count() == 2);
  CHECK(LineIndex("\n\r").line_count() == 3);
  CHECK(LineIndex("\r\r\n").line_count() == 3);
  CHECK(LineIndex("a\r\rb").line_count() == 3);

  LineIndex index(kMixed);
  REQUIRE(index.line_count() == 4);
  CHECK(index.line_start(0) == 0);
  CHECK(index.line_start(1) == 8);
  CHECK(index.line_start(2) == 17);
  CHECK(index.line_start(3) == 28);
  CHECK(index.line_end(0) == 6);
  CHECK(index.line_end(1) == 16);
  CHECK(index.line_end(2) == 27);
  CHECK(index.line_end(3) == 32);
}

TEST_CASE("position_of counts code units of the encoding") {
  LineIndex index(kMixed);
  const auto u8 = PositionEncoding::utf8, u16 = PositionEncoding::utf16, u32 = PositionEncoding::utf32;
  // After an emoji at a line start.
  CHECK(index.position_of(4, u8) == pos(0, 4));
  CHECK(index.position_of(4, u16) == pos(0, 2));
  CHECK(index.position_of(4, u32) == pos(0, 1));
  // An emoji in the middle of a line, after "ö".
  CHECK(index.position_of(11, u8) == pos(1, 3));
  CHECK(index.position_of(11, u16) == pos(1, 2));
  CHECK(index.position_of(11, u32) == pos(1, 2));
  CHECK(index.position_of(15, u8) == pos(1, 7));
  CHECK(index.position_of(15, u16) == pos(1, 4));
  CHECK(index.position_of(15, u32) == pos(1, 3));
  // An emoji at a line end, and the line end after it.
  CHECK(index.position_of(23, u16) == pos(2, 2));
  CHECK(index.position_of(27, u8) == pos(2, 10));
  CHECK(index.position_of(27, u16) == pos(2, 4));
  CHECK(index.position_of(27, u32) == pos(2, 3));
  // Line starts.
  for (auto encoding : kAllEncodings) {
    CHECK(index.position_of(0, encoding) == pos(0, 0));
    CHECK(index.position_of(8, encoding) == pos(1, 0));
    CHECK(index.position_of(17, encoding) == pos(2, 0));
    CHECK(index.position_of(28, encoding) == pos(3, 0));
  }
  // Invalid bytes: one unit each.
  for (auto encoding : kAllEncodings) {
    CHECK(index.position_of(30, encoding) == pos(3, 2));
    CHECK(index.position_of(31, encoding) == pos(3, 3));
    CHECK(index.position_of(32, encoding) == pos(3, 4));
  }
}

TEST_CASE("position_of clamps offsets in terminators, inside characters and past the end") {
  LineIndex index(kMixed);
  // Between the \r and \n of a CRLF: the end of the line.
  CHECK(index.position_of(7, PositionEncoding::utf16) == pos(0, 4));
  CHECK(index.position_of(6, PositionEncoding::utf16) == pos(0, 4));
  // Inside an emoji: its start.
  for (std::size_t inside : {12, 13, 14}) {
    CHECK(index.position_of(inside, PositionEncoding::utf8) == pos(1, 3));
    CHECK(index.position_of(inside, PositionEncoding::utf16) == pos(1, 2));
  }
  CHECK(index.position_of(10, PositionEncoding::utf16) == pos(1, 1));  // inside ö
  CHECK(index.position_of(1, PositionEncoding::utf16) == pos(0, 0));   // inside the first emoji
  // Past the end of the text.
  CHECK(index.position_of(1000, PositionEncoding::utf16) == pos(3, 4));
  CHECK(LineIndex("").position_of(5, PositionEncoding::utf16) == pos(0, 0));
  CHECK(LineIndex("a\n").position_of(2, PositionEncoding::utf16) == pos(1, 0));
}

TEST_CASE("offset_of converts positions back to byte offsets") {
  LineIndex index(kMixed);
  const auto u8 = PositionEncoding::utf8, u16 = PositionEncoding::utf16, u32 = PositionEncoding::utf32;
  CHECK(index.offset_of(pos(0, 2), u16) == 4u);
  CHECK(index.offset_of(pos(0, 1), u32) == 4u);
  CHECK(index.offset_of(pos(0, 4), u8) == 4u);
  CHECK(index.offset_of(pos(1, 2), u16) == 11u);
  CHECK(index.offset_of(pos(1, 4), u16) == 15u);
  CHECK(index.offset_of(pos(1, 3), u32) == 15u);
  CHECK(index.offset_of(pos(2, 2), u32) == 23u);
  CHECK(index.offset_of(pos(2, 4), u16) == 27u);
  CHECK(index.offset_of(pos(3, 1), u8) == 29u);  // between two invalid bytes
  CHECK(index.offset_of(pos(3, 2), u16) == 30u);
}

TEST_CASE("offset_of clamps past a line end or the last line, and refuses the middle of a character") {
  LineIndex index(kMixed);
  for (auto encoding : kAllEncodings) {
    CHECK(index.offset_of(pos(0, 99), encoding) == 6u);   // before the CRLF
    CHECK(index.offset_of(pos(1, 99), encoding) == 16u);  // before the bare CR
    CHECK(index.offset_of(pos(3, 99), encoding) == 32u);
    CHECK(index.offset_of(pos(4, 0), encoding) == 32u);
    CHECK(index.offset_of(pos(99, 7), encoding) == 32u);
  }
  CHECK(!index.offset_of(pos(0, 1), PositionEncoding::utf16));  // between surrogate halves
  CHECK(!index.offset_of(pos(1, 3), PositionEncoding::utf16));
  CHECK(!index.offset_of(pos(2, 3), PositionEncoding::utf16));
  CHECK(!index.offset_of(pos(0, 1), PositionEncoding::utf8));   // inside an emoji
  CHECK(!index.offset_of(pos(1, 2), PositionEncoding::utf8));   // inside ö
  CHECK(!index.offset_of(pos(2, 1), PositionEncoding::utf8));   // inside 漢
  CHECK(index.offset_of(pos(0, 1), PositionEncoding::utf32) == 4u);
}

TEST_CASE("range_of and offsets_of convert whole ranges") {
  LineIndex index(kMixed);
  Range emoji_to_cjk = index.range_of({11, 20}, PositionEncoding::utf16);
  CHECK(emoji_to_cjk == Range{pos(1, 2), pos(2, 1)});
  CHECK(index.offsets_of(emoji_to_cjk, PositionEncoding::utf16) == ByteRange{11, 20});
  CHECK(index.range_of({11, 20}, PositionEncoding::utf8) == Range{pos(1, 3), pos(2, 3)});
  CHECK(!index.offsets_of(Range{pos(2, 0), pos(1, 0)}, PositionEncoding::utf16));  // inverted
  CHECK(!index.offsets_of(Range{pos(0, 1), pos(1, 0)}, PositionEncoding::utf16));  // splits an emoji
  CHECK(index.offsets_of(Range{pos(0, 0), pos(50, 0)}, PositionEncoding::utf16) == ByteRange{0, 32});
}

TEST_CASE("newline lines are counted as grep counts them, not as LSP lines") {
  // A progress bar redrawn with bare \r, then the error on the next '\n' line.
  std::string log = "epoch 1\r 10%\r 50%\r100%\nCUDA out of memory\nTraceback\r\n  File x\n";
  LineIndex index(log);
  CHECK(index.line_count() == 8);
  std::size_t cuda = log.find("CUDA");
  CHECK(index.newline_line_start(2) == cuda);
  CHECK(index.newline_line_of(cuda) == 2u);
  CHECK(index.position_of(cuda, PositionEncoding::utf16) == pos(4, 0));
  CHECK(index.newline_line_start(1) == 0);
  CHECK(index.newline_line_start(0) == 0);
  CHECK(index.newline_line_start(3) == log.find("Traceback"));
  CHECK(index.newline_line_start(4) == log.find("  File"));
  CHECK(index.newline_line_start(5) == log.size());  // the empty line after the last '\n'
  CHECK(index.newline_line_start(99) == log.size());
  CHECK(index.newline_line_of(log.find("50%")) == 1u);
  CHECK(index.newline_line_of(log.find("File")) == 4u);
  CHECK(index.newline_line_of(1000000) == 5u);

  LineIndex mixed(kMixed);  // '\n' at 7 and 27
  CHECK(mixed.newline_line_start(2) == 8);
  CHECK(mixed.newline_line_start(3) == 28);
  CHECK(mixed.newline_line_of(17) == 2u);  // LSP line 2 is inside grep line 2

  // Without bare \r the two numberings agree.
  LineIndex plain("a\nb\r\nc");
  for (std::uint64_t line = 1; line <= 3; ++line) CHECK(plain.newline_line_start(line) == plain.line_start(line - 1));
}

TEST_CASE("LineIndex on texts made only of line ends") {
  LineIndex index("\r\n\r\r\n\n");
  REQUIRE(index.line_count() == 5);
  CHECK(index.line_start(1) == 2);
  CHECK(index.line_start(2) == 3);
  CHECK(index.line_start(3) == 5);
  CHECK(index.line_start(4) == 6);
  for (std::size_t line = 0; line < 5; ++line) CHECK(index.line_end(line) == (line < 4 ? index.line_start(line) : 6));
  CHECK(index.position_of(4, PositionEncoding::utf16) == pos(2, 0));  // inside the second CRLF
  CHECK(index.newline_line_of(3) == 2u);
}

namespace {

// An independent model of the text: built from fragments whose sizes are
// known, so it does not share the decoder under test.
struct Fragment {
  std::string bytes;
  std::vector<std::size_t> utf16_units;  // per character; sizes of characters are in char_bytes
  std::vector<std::size_t> char_bytes;
};

const std::vector<Fragment> kFragments = {
    {"a", {1}, {1}},
    {"ö", {1}, {2}},
    {"漢", {1}, {3}},
    {"😀", {2}, {4}},
    {"\xff", {1}, {1}},
    {"\xe2\x82", {1, 1}, {1, 1}},
    {"\xed\xa0\x80", {1, 1, 1}, {1, 1, 1}},
    {"\xf0\x9f\x98", {1, 1, 1}, {1, 1, 1}},
    {"\r", {}, {}},
    {"\n", {}, {}},
    {"\r\n", {}, {}},
};

struct Model {
  std::string text;
  // Expected position of every byte offset 0..size, per encoding.
  std::map<PositionEncoding, std::vector<Position>> positions;
  std::vector<bool> boundary;  // offsets a position can map back to
};

Model build_model(const std::vector<std::size_t>& picks) {
  Model model;
  struct Char {
    std::size_t bytes, utf16;
    bool line_end;
  };
  std::vector<Char> chars;
  for (std::size_t pick : picks) {
    const Fragment& f = kFragments[pick];
    model.text += f.bytes;
    if (f.char_bytes.empty()) {
      for (char c : f.bytes) chars.push_back({1, 0, c == '\r' || c == '\n'});
    }
    for (std::size_t k = 0; k < f.char_bytes.size(); ++k) chars.push_back({f.char_bytes[k], f.utf16_units[k], false});
  }
  std::uint32_t line = 0, u8 = 0, u16 = 0, u32 = 0;
  std::size_t offset = 0;
  auto record = [&](std::size_t bytes, bool is_boundary) {
    for (std::size_t b = 0; b < bytes; ++b) {
      model.positions[PositionEncoding::utf8].push_back({line, u8});
      model.positions[PositionEncoding::utf16].push_back({line, u16});
      model.positions[PositionEncoding::utf32].push_back({line, u32});
      model.boundary.push_back(is_boundary && b == 0);
    }
  };
  for (std::size_t k = 0; k < chars.size(); ++k) {
    const Char& c = chars[k];
    if (c.line_end) {
      bool crlf = model.text[offset] == '\r' && k + 1 < chars.size() && model.text[offset + 1] == '\n';
      record(crlf ? 2 : 1, true);  // the '\n' of a CRLF maps to the line end too, but is no boundary
      offset += crlf ? 2 : 1;
      k += crlf ? 1 : 0;
      ++line;
      u8 = u16 = u32 = 0;
      continue;
    }
    record(c.bytes, true);
    offset += c.bytes;
    u8 += static_cast<std::uint32_t>(c.bytes);
    u16 += static_cast<std::uint32_t>(c.utf16);
    u32 += 1;
  }
  record(1, true);  // the end of the text
  return model;
}

}  // namespace

TEST_CASE("position_of and offset_of agree with an independent model on random mixed texts") {
  std::mt19937 random(2024);
  for (int round = 0; round < 300; ++round) {
    std::vector<std::size_t> picks(random() % 30);
    for (auto& pick : picks) pick = random() % kFragments.size();
    Model model = build_model(picks);
    LineIndex index(model.text);
    INFO("round " << round);
    for (auto encoding : kAllEncodings) {
      INFO(to_string(encoding));
      const auto& expected = model.positions[encoding];
      for (std::size_t offset = 0; offset <= model.text.size(); ++offset) {
        INFO("offset " << offset);
        Position position = index.position_of(offset, encoding);
        REQUIRE(position == expected[offset]);
        // Round trip: a boundary maps back to itself.
        if (model.boundary[offset]) REQUIRE(index.offset_of(position, encoding) == offset);
      }
    }
  }
}

TEST_CASE("every position round-trips through offset_of and position_of") {
  LineIndex index(kMixed);
  for (auto encoding : kAllEncodings) {
    INFO(to_string(encoding));
    for (std::uint32_t line = 0; line < 4; ++line) {
      for (std::uint32_t character = 0; character < 12; ++character) {
        auto offset = index.offset_of(pos(line, character), encoding);
        if (!offset) continue;  // inside a character
        Position back = index.position_of(*offset, encoding);
        std::size_t line_units = index.position_of(index.line_end(line), encoding).character;
        INFO(line << ":" << character);
        CHECK(back == pos(line, std::min<std::uint32_t>(character, static_cast<std::uint32_t>(line_units))));
      }
    }
  }
}

TEST_CASE("LineIndex indexes a large log with progress bars in one pass") {
  std::string chunk = "step 1\r 10%|#    |\r 50%|###  |\r100%|#####|\nloss 0.5 ö😀\r\n";
  std::string log;
  log.reserve(chunk.size() * 200000);
  for (int i = 0; i < 200000; ++i) log += chunk;  // ~13 MB
  LineIndex index(log);
  CHECK(index.line_count() == 200000 * 5 + 1);
  // Two '\n' lines per chunk: the progress bar line and the loss line.
  CHECK(index.newline_line_start(2 * 200000 - 1) == (200000 - 1) * chunk.size());
  CHECK(index.newline_line_start(2 * 200000) == log.rfind("loss"));
  CHECK(index.newline_line_of(log.size() - 1) == 2 * 200000u);
  std::size_t last_loss = log.rfind("loss");
  CHECK(index.position_of(last_loss, PositionEncoding::utf16) == pos(200000 * 5 - 1, 0));
  CHECK(index.position_of(log.size() - 2, PositionEncoding::utf16) == pos(200000 * 5 - 1, 12));
  CHECK(index.offset_of(pos(200000 * 5 - 1, 10), PositionEncoding::utf16) == log.size() - 6);
}

TEST_CASE("line starts updated in place after a replacement equal those of the new text") {
  std::mt19937 rng(17);
  const char alphabet[] = {'a', 'b', '\n', '\r', 'x'};
  auto random_text = [&](std::size_t n) {
    std::string t(n, 'a');
    for (auto& c : t) c = alphabet[rng() % 5];
    return t;
  };
  for (int round = 0; round < 5000; ++round) {
    std::string text = random_text(rng() % 30);
    LineStarts starts = LineIndex(text).take_starts();
    for (int edit = 0; edit < 4; ++edit) {
      std::size_t offset = rng() % (text.size() + 1);
      std::size_t removed = rng() % (text.size() - offset + 1);
      std::string inserted = random_text(rng() % 6);
      text.replace(offset, removed, inserted);
      starts.replace(text, offset, removed, inserted.size());
      LineStarts want = LineIndex(text).take_starts();
      std::string shown;
      for (char c : text) shown += c == '\n' ? std::string("\\n") : c == '\r' ? std::string("\\r") : std::string(1, c);
      INFO("round " << round << " edit " << edit << " text " << shown);
      REQUIRE(starts.newline == want.newline);
      REQUIRE(starts.redrawn.size() == want.redrawn.size());
      for (std::size_t k = 0; k < want.redrawn.size(); ++k) {
        CHECK(starts.redrawn[k].newline_line == want.redrawn[k].newline_line);
        CHECK(starts.redrawn[k].before == want.redrawn[k].before);
        CHECK(starts.redrawn[k].count == want.redrawn[k].count);
      }
    }
  }
}
