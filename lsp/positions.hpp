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

// Where the lines of a text start, as LineIndex keeps them: the '\n' lines,
// and, for the '\n' lines that hold bare '\r's (progress bars), how many.
// One entry per redraw would take tens of millions of entries on a big log;
// an LSP line inside such a '\n' line is found by walking its '\r's.
struct LineStarts {
  std::vector<std::size_t> newline{0};  // after each '\n' (0 first)
  struct Redrawn {
    std::size_t newline_line;  // index into `newline`
    std::size_t before;        // bare '\r's in all earlier '\n' lines
    std::size_t count;         // bare '\r's in this one
  };
  std::vector<Redrawn> redrawn;  // in increasing newline_line

  // After text[offset, offset + removed) was replaced by `inserted` bytes,
  // giving `text`: the old text's starts made the new one's, in place.
  // Rescans only the '\n' lines the replacement touched; the rest move by
  // its change of bytes, lines and bare '\r's. What a keystroke in a
  // 100 MiB log costs, instead of indexing it again.
  void replace(std::string_view text, std::size_t offset, std::size_t removed, std::size_t inserted);
};

// Collects LineStarts from the line-end characters of a text as its writer
// puts them down (the JSON reader unescaping a document's text sees every
// '\n' and '\r' go by), so that no pass over the text is needed afterwards.
class LineStartsBuilder {
 public:
  // A '\n' or '\r' at byte `at`; calls come in increasing order of `at`.
  void line_end(char c, std::size_t at) {
    if (c == '\r') {
      ++crs_in_line_;  // bare, unless a '\n' follows at once
      after_cr_ = at + 1;
      return;
    }
    if (after_cr_ == at) --crs_in_line_;  // "\r\n": one line end
    close_line();
    starts_.newline.push_back(at + 1);
  }
  LineStarts finish() &&;
  // Room for this many line starts, made once: a 100 MiB text has a million
  // lines, and growing to them moves the starts a dozen times into fresh pages.
  void reserve(std::size_t lines) { starts_.newline.reserve(lines); }
  // Starts over for another text, keeping the room already made.
  void reset() {
    starts_.newline.assign(1, 0);
    starts_.redrawn.clear();
    after_cr_ = SIZE_MAX;
    crs_in_line_ = crs_before_ = 0;
  }

 private:
  void close_line() {
    if (crs_in_line_ == 0) return;
    starts_.redrawn.push_back({starts_.newline.size() - 1, crs_before_, crs_in_line_});
    crs_before_ += crs_in_line_;
    crs_in_line_ = 0;
  }

  LineStarts starts_;
  std::size_t after_cr_ = SIZE_MAX;  // just after the last '\r' (none yet: no '\n' is there)
  std::size_t crs_in_line_ = 0;      // bare '\r's in the '\n' line being read
  std::size_t crs_before_ = 0;       // in the lines before it
};

// Line starts of one text, found in one pass; conversions then cost a binary
// search plus a walk along one line. Holds a view: the text must outlive it.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text);
  // With line starts already known (they must be those of `text`).
  LineIndex(std::string_view text, LineStarts starts);

  std::string_view text() const { return text_; }
  // Where the '\n' lines start: 0, then the offset after each '\n'.
  const std::vector<std::size_t>& newline_starts() const { return starts_.newline; }
  // The starts, for the index of the next version of the text (LineStarts::replace).
  LineStarts take_starts() && { return std::move(starts_); }
  // LSP lines; at least 1. "a\n" has 2 (the second empty).
  std::size_t line_count() const;
  std::size_t line_start(std::size_t line) const;
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
  // The bytes of '\n' lines [first, last] (1-based, as the analyzer reports
  // them), without the final line terminator.
  ByteRange newline_lines_bytes(std::uint64_t first, std::uint64_t last) const;

 private:
  // The LSP line that starts the 0-based '\n' line `nl`.
  std::size_t first_lsp_line_of(std::size_t nl) const;
  // Where the k-th LSP line inside '\n' line `nl` starts (k = 0: the line start).
  std::size_t start_after_bare_crs(std::size_t nl, std::size_t k) const;
  // The end of '\n' line `nl`, before its terminator.
  std::size_t newline_line_end(std::size_t nl) const;

  std::string_view text_;
  LineStarts starts_;
};

}  // namespace oomlens::lsp
