// JSON with comments and trailing commas (JSONC), read into a tree that keeps
// every value's byte range and every string's value-byte -> source-byte map:
// what editing a file in place needs (launch.json, notebooks) and what a JSON
// library does not give. Nesting deeper than 256 levels is refused; malformed
// text gives nothing, never an exception.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

#include "analyzer/python/strings.hpp"

namespace oomlens::analyzer::jsonc {

struct JMember;

struct JValue {
  enum class Kind { object, array, string, other } kind = Kind::other;
  std::size_t begin = 0, end = 0;
  python::StringLiteral text;    // kind string
  std::vector<JMember> members;  // kind object (vector allows the incomplete type)
  std::vector<JValue> items;     // kind array

  const JValue* member(std::string_view key) const;
};

struct JMember {
  JValue key, value;
};

// The whole text as one value; nothing when it is not JSONC.
std::optional<JValue> parse(std::string_view text);

}  // namespace oomlens::analyzer::jsonc
