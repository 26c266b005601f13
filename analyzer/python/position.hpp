// The byte and line/column positions the source rules report, apart from the
// syntax tree so that a diagnosis can hold them without tree-sitter.
#pragma once

#include <cstdint>

namespace oomlens::analyzer::python {

// Half-open range of bytes in the UTF-8 source.
struct ByteRange {
  std::uint32_t begin = 0;
  std::uint32_t end = 0;

  std::uint32_t size() const { return end - begin; }
  bool contains(std::uint32_t byte) const { return begin <= byte && byte < end; }
  bool contains(ByteRange other) const { return begin <= other.begin && other.end <= end; }
  friend bool operator==(ByteRange, ByteRange) = default;
};

// A position as a linter prints it. `column` counts Unicode code points (what
// ruff and Python's own messages print); `byte_column` counts UTF-8 bytes. The
// LSP adapter derives UTF-16 positions from the byte offset, not from these.
struct Point {
  std::uint32_t line = 0;         // 1-based
  std::uint32_t column = 0;       // 1-based, code points
  std::uint32_t byte_column = 0;  // 1-based, bytes
  friend bool operator==(Point, Point) = default;
};

}  // namespace oomlens::analyzer::python
