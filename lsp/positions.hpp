// Byte offsets <-> LSP positions (line, character in the negotiated encoding).
//
// LSP lines end at "\n", "\r\n" or a bare "\r" (types/position.md). Logs are
// full of bare '\r' from progress bars, so an LSP line is not what grep -n
// counts; the analyzer reports '\n'-counted lines and byte offsets, and
// LineIndex answers both kinds of question.
//
// Text that is not valid UTF-8 never fails: each invalid byte is one
// character (U+FFFD), one code unit in every encoding.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace oomlens::lsp {

enum class PositionEncoding { utf8, utf16, utf32 };

// "utf-8", "utf-16", "utf-32": the PositionEncodingKind strings.
std::string_view to_string(PositionEncoding encoding);
std::optional<PositionEncoding> parse_position_encoding(std::string_view kind);

// 0-based, as on the wire.
struct Position {
  std::uint32_t line = 0;
  std::uint32_t character = 0;  // code units of the encoding from the line start
  friend auto operator<=>(const Position&, const Position&) = default;
};

struct Range {
  Position start;
  Position end;
  friend bool operator==(const Range&, const Range&) = default;
};

// Half-open [begin, end) in bytes.
struct ByteRange {
  std::size_t begin = 0;
  std::size_t end = 0;
  friend bool operator==(const ByteRange&, const ByteRange&) = default;
};

// Code units `text` takes in `encoding` (for UTF-8: its size).
std::size_t code_units(std::string_view text, PositionEncoding encoding);

// Where the lines of a text start, as LineIndex keeps them.
struct LineStarts {
  std::vector<std::size_t> lsp{0};  // after "\n", "\r\n" and a bare "\r"
  bool has_bare_cr = false;
  std::vector<std::size_t> newline;  // after "\n" only (with 0 first); only when has_bare_cr
};

// Collects LineStarts from the line-end characters of a text as its writer
// puts them down (the JSON reader unescaping a document's text sees every
// '\n' and '\r' go by), so that no pass over the text is needed afterwards.
class LineStartsBuilder {
 public:
  // A '\n' or '\r' at byte `at`; calls come in increasing order of `at`.
  void line_end(char c, std::size_t at) {
    if (c == '\n') {
      if (after_cr_ == at) {  // "\r\n": one line end
        starts_.lsp.back() = at + 1;
        ++pairs_;
      } else {
        starts_.lsp.push_back(at + 1);
      }
      newline_.push_back(at + 1);
    } else {
      starts_.lsp.push_back(at + 1);
      after_cr_ = at + 1;
      ++crs_;
    }
  }
  LineStarts finish() &&;
  // Starts over for another text, keeping the room already made.
  void reset() {
    starts_.lsp.assign(1, 0);
    starts_.has_bare_cr = false;
    starts_.newline.clear();
    newline_.assign(1, 0);
    after_cr_ = SIZE_MAX;
    crs_ = pairs_ = 0;
  }

 private:
  LineStarts starts_;
  std::vector<std::size_t> newline_{0};
  std::size_t after_cr_ = SIZE_MAX;  // just after the last '\r' (none yet: no '\n' is there)
  std::size_t crs_ = 0;
  std::size_t pairs_ = 0;
};

// Line starts of one text, found in one pass; conversions then cost a binary
// search plus a walk along one line. Holds a view: the text must outlive it.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // With line starts already known (they must be those of `text`).
  LineIndex(std::string_view text, LineStarts starts);

  std::string_view text() const { return text_; }
  // LSP lines; at least 1. "a\n" has 2 (the second empty).
  std::size_t line_count() const { return line_starts_.size(); }
  std::size_t line_start(std::size_t line) const { return line_starts_[line]; }
  // Where the line's content ends, before its line terminator.
  std::size_t line_end(std::size_t line) const;

  // An offset past the text clamps to its end; one inside a line terminator
  // maps to the line end; one inside a multi-byte character maps to the
  // start of that character.
  Position position_of(std::size_t byte_offset, PositionEncoding encoding) const;
  // A character past the line end clamps to the line end (as the spec says);
  // a line past the last clamps to the end of the text. nullopt when the
  // position falls inside a character (between the halves of a UTF-16
  // surrogate pair, or inside a UTF-8 sequence).
  std::optional<std::size_t> offset_of(Position position, PositionEncoding encoding) const;

  Range range_of(ByteRange bytes, PositionEncoding encoding) const;
  // nullopt when an end falls inside a character or start is after end.
  std::optional<ByteRange> offsets_of(Range range, PositionEncoding encoding) const;

  // Lines as grep -n counts them (by '\n' only), 1-based, as the analyzer
  // reports them. Line 0 is read as 1; a line past the last gives text().size().
  std::size_t newline_line_start(std::uint64_t one_based_line) const;
  std::uint64_t newline_line_of(std::size_t byte_offset) const;

 private:
  const std::vector<std::size_t>& newline_starts() const {
    return has_bare_cr_ ? newline_starts_ : line_starts_;
  }

  std::string_view text_;
  std::vector<std::size_t> line_starts_;     // LSP rule: after \n, \r\n, bare \r
  bool has_bare_cr_ = false;
  std::vector<std::size_t> newline_starts_;  // after \n only; filled only when they differ
};

}  // namespace oomlens::lsp
