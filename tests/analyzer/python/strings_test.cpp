#include <catch2/catch.hpp>

#include <string>

#include "analyzer/python/script.hpp"
#include "tests/analyzer/python/helpers.hpp"

using namespace oomlens::analyzer::python;
using oomlens::analyzer::python::testing::find;

namespace {

// The literal assigned on the script's only line `x = <literal>`.
std::optional<StringLiteral> literal_of(const Script& s) {
  Node assignment = find(s, "x = ", "assignment");
  return s.string_literal(assignment.field("right"));
}

}  // namespace

TEST_CASE("python strings: plain literals map byte for byte") {
  Script s = parse_script("x = \"expandable_segments:True,max_split_size_mb:128\"\n");
  auto lit = literal_of(s);
  REQUIRE(lit);
  CHECK(lit->value == "expandable_segments:True,max_split_size_mb:128");
  CHECK(lit->range == ByteRange{4, 52});
  CHECK_FALSE(lit->is_bytes);
  // "max_split_size_mb:128" starts at value offset 25.
  ByteRange option = lit->source_range(25, lit->value.size());
  CHECK(s.text(option) == "max_split_size_mb:128");
  CHECK(s.point(option.begin).column == 31);
}

TEST_CASE("python strings: prefixes, quotes and triple quotes") {
  for (const char* source : {"x = 'a:b'\n", "x = \"a:b\"\n", "x = '''a:b'''\n", "x = \"\"\"a:b\"\"\"\n",
                             "x = r'a:b'\n", "x = U'a:b'\n", "x = f'a:b'\n", "x = Rb'a:b'\n"}) {
    Script s = parse_script(source);
    auto lit = literal_of(s);
    REQUIRE(lit);
    CHECK(lit->value == "a:b");
    CHECK(s.text(lit->source_range(0, 3)) == "a:b");
  }
  CHECK(literal_of(parse_script("x = b'a'\n"))->is_bytes);
  CHECK(literal_of(parse_script("x = ''\n"))->value.empty());
  CHECK(literal_of(parse_script("x = ''\n"))->source_range(0, 0) == ByteRange{5, 5});
}

TEST_CASE("python strings: escapes decode and map to the whole escape") {
  Script s = parse_script("x = 'a\\tb\\x41\\u00e9\\101\\q\\\\c\\N{BULLET}'\n");
  auto lit = literal_of(s);
  REQUIRE(lit);
  CHECK(lit->value == "a\tbA\xC3\xA9" "A\\q\\c\\N{BULLET}");
  // value: a \t b A é(2 bytes) A \ q \ c ...
  CHECK(s.text(lit->source_range(1, 2)) == "\\t");
  CHECK(s.text(lit->source_range(3, 4)) == "\\x41");
  CHECK(s.text(lit->source_range(4, 6)) == "\\u00e9");
  CHECK(s.text(lit->source_range(5, 6)) == "\\u00e9");  // half a character snaps to the escape
  CHECK(s.text(lit->source_range(6, 7)) == "\\101");
  CHECK(s.text(lit->source_range(7, 9)) == "\\q");
  CHECK(s.text(lit->source_range(2, 4)) == "b\\x41");
  // Raw strings keep backslashes.
  CHECK(literal_of(parse_script("x = r'a\\tb'\n"))->value == "a\\tb");
  // A line continuation inside a string adds nothing.
  CHECK(literal_of(parse_script("x = 'a\\\nb'\n"))->value == "ab");
  // Bytes: \x is a byte, \u is not an escape.
  CHECK(literal_of(parse_script("x = b'\\xff\\u0041'\n"))->value == "\xff\\u0041");
}

TEST_CASE("python strings: implicit concatenation keeps every part's position") {
  Script s = parse_script(
      "x = (\"expandable_segments:True,\"\n"
      "     'max_split_size_mb:128')\n");
  Node paren = find(s, "x = ", "assignment").field("right");
  REQUIRE(paren.is("parenthesized_expression"));
  auto lit = s.string_literal(paren.named_children().front());
  REQUIRE(lit);
  CHECK(lit->value == "expandable_segments:True,max_split_size_mb:128");
  ByteRange second = lit->source_range(25, lit->value.size());
  CHECK(s.text(second) == "max_split_size_mb:128");
  CHECK(s.point(second.begin).line == 2);
  CHECK(s.point(second.begin).column == 7);
  // A range across the two parts spans the quotes between them.
  CHECK(s.text(lit->source_range(20, 30)) == "True,\"\n     'max_s");
}

TEST_CASE("python strings: non-constant and broken literals give nothing") {
  CHECK_FALSE(literal_of(parse_script("x = f'{a}:b'\n")));
  CHECK_FALSE(literal_of(parse_script("x = 'a' f'{b}'\n")));
  CHECK_FALSE(literal_of(parse_script("x = name\n")));
  CHECK_FALSE(literal_of(parse_script("x = 'bad \\x4'\n")));
  Script fs = parse_script("x = f'{{literal}}'\n");
  REQUIRE(literal_of(fs));
  CHECK(literal_of(fs)->value == "{literal}");
}

TEST_CASE("python strings: non-ASCII values") {
  Script s = parse_script("x = 'café:1,ß:2'\n");
  auto lit = literal_of(s);
  REQUIRE(lit);
  CHECK(lit->value == "café:1,ß:2");
  std::size_t at = lit->value.find("ß");
  ByteRange r = lit->source_range(at, lit->value.size());
  CHECK(s.text(r) == "ß:2");
  CHECK(s.point(r.begin).column == 13);
  CHECK(s.point(r.begin).byte_column == 14);
}
