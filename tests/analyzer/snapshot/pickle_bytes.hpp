// Test helpers: pickle bytes written opcode by opcode (so each test shows the
// exact program the reader runs), and the snapshot fixtures from disk.
#pragma once

#include <cstdint>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "analyzer/snapshot/pickle_opcodes.hpp"

namespace oomlens::analyzer::snapshot::testing {

class PickleBytes {
 public:
  PickleBytes& op(Op code) {
    bytes_ += static_cast<char>(code);
    return *this;
  }
  PickleBytes& u8(unsigned value) { return le(value, 1); }
  PickleBytes& le(std::uint64_t value, int width) {
    for (int i = 0; i < width; ++i) bytes_ += static_cast<char>((value >> (8 * i)) & 0xFF);
    return *this;
  }
  PickleBytes& raw(std::string_view text) {
    bytes_ += text;
    return *this;
  }
  PickleBytes& line(std::string_view text) { return raw(text).raw("\n"); }

  // Shorthands for the common opcodes, with their arguments.
  PickleBytes& proto(unsigned version) { return op(Op::PROTO).u8(version); }
  PickleBytes& stop() { return op(Op::STOP); }
  PickleBytes& mark() { return op(Op::MARK); }
  PickleBytes& str(std::string_view text) {  // SHORT_BINUNICODE (or BINUNICODE when long)
    if (text.size() < 256) return op(Op::SHORT_BINUNICODE).u8(static_cast<unsigned>(text.size())).raw(text);
    return op(Op::BINUNICODE).le(text.size(), 4).raw(text);
  }
  PickleBytes& integer(std::int64_t value) {  // as Python's pickler picks the opcode
    if (value >= 0 && value < 256) return op(Op::BININT1).u8(static_cast<unsigned>(value));
    if (value >= 0 && value < 65536) return op(Op::BININT2).le(static_cast<std::uint64_t>(value), 2);
    if (value >= INT32_MIN && value <= INT32_MAX) return op(Op::BININT).le(static_cast<std::uint32_t>(value), 4);
    return op(Op::LONG1).u8(8).le(static_cast<std::uint64_t>(value), 8);
  }
  PickleBytes& memoize() { return op(Op::MEMOIZE); }
  PickleBytes& binget(unsigned index) { return op(Op::BINGET).u8(index); }

  const std::string& bytes() const { return bytes_; }
  operator std::string_view() const { return bytes_; }  // NOLINT: read_pickle(PickleBytes...)

 private:
  std::string bytes_;
};

inline std::string read_fixture(std::string_view name) {
  std::ifstream in(std::string(OOMLENS_SOURCE_DIR "/fixtures/snapshots/") + std::string(name), std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace oomlens::analyzer::snapshot::testing
