// The value of a Python string literal, and where each of its characters sits
// in the source: a diagnostic on one option of an allocator-configuration
// string ("...,max_split_size_mb:-1") must cover exactly those characters,
// even after escapes or implicit concatenation.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/python/node.hpp"

namespace oomlens::analyzer::python {

class StringLiteral {
 public:
  // One run of the value and the source bytes it came from. A plain run maps
  // byte for byte; an escape maps its decoded bytes to the whole escape.
  struct Piece {
    std::size_t value_begin = 0;
    std::size_t value_size = 0;
    ByteRange source;
    bool verbatim = true;  // value bytes equal the source bytes one to one
  };

  std::string value;        // decoded, UTF-8 (raw bytes for b"" literals)
  ByteRange range;          // the whole literal, prefixes and quotes included
  bool is_bytes = false;
  std::vector<Piece> pieces;

  // The source bytes that produced value[begin, end). An empty range maps to
  // the position where that offset sits.
  ByteRange source_range(std::size_t begin, std::size_t end) const;
};

// Decodes a `string` or `concatenated_string` node of `source`. Nothing for
// other nodes, f-strings with replacement fields (not constant), and
// literals broken by syntax errors. Escapes decode as CPython does, except
// \N{...}, which is kept as written.
std::optional<StringLiteral> decode_string_literal(Node node, std::string_view source);

}  // namespace oomlens::analyzer::python
