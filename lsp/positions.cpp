#include "lsp/positions.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "analyzer/utf8.hpp"

namespace oomlens::lsp {
namespace {

// One character of UTF-8 text: how many bytes it takes and how many UTF-16
// units it needs. An invalid byte is one character (U+FFFD) of one unit.
struct Character {
  std::uint8_t bytes = 1;
  std::uint8_t utf16_units = 1;
};

unsigned char byte_at(std::string_view text, std::size_t i) { return static_cast<unsigned char>(text[i]); }

bool is_continuation(unsigned char b) { return (b & 0xC0) == 0x80; }

// Well-formed sequences per the Unicode standard (table 3-7): no overlong
// forms, no surrogates, nothing above U+10FFFF.
Character decode(std::string_view text, std::size_t i) {
  int length = analyzer::utf8_sequence(reinterpret_cast<const unsigned char*>(text.data()) + i, text.size() - i);
  if (length <= 1) return {};
  return {static_cast<std::uint8_t>(length), static_cast<std::uint8_t>(length == 4 ? 2 : 1)};
}

std::size_t units_of(Character c, PositionEncoding encoding) {
  switch (encoding) {
    case PositionEncoding::utf8: return c.bytes;
    case PositionEncoding::utf16: return c.utf16_units;
    case PositionEncoding::utf32: return 1;
  }
  return 1;
}

// The start of the character that contains `offset` (offset itself when it
// is a boundary). Looks back at most 3 bytes: a lead byte is never inside a
// well-formed sequence, so the first non-continuation byte decides.
std::size_t character_start(std::string_view text, std::size_t line_start, std::size_t offset) {
  for (std::size_t back = 1; back <= 3 && back <= offset - line_start; ++back) {
    if (is_continuation(byte_at(text, offset - back))) continue;
    return decode(text, offset - back).bytes > back ? offset - back : offset;
  }
  return offset;
}

std::uint32_t saturate(std::size_t n) {
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, std::numeric_limits<std::uint32_t>::max()));
}

std::size_t find_byte(std::string_view text, char c, std::size_t from) {
  if (from >= text.size()) return std::string_view::npos;
  const void* hit = std::memchr(text.data() + from, c, text.size() - from);
  return hit ? static_cast<std::size_t>(static_cast<const char*>(hit) - text.data()) : std::string_view::npos;
}

}  // namespace

std::string_view to_string(PositionEncoding encoding) {
  switch (encoding) {
    case PositionEncoding::utf8: return "utf-8";
    case PositionEncoding::utf16: return "utf-16";
    case PositionEncoding::utf32: return "utf-32";
  }
  return "utf-16";
}

std::optional<PositionEncoding> parse_position_encoding(std::string_view kind) {
  if (kind == "utf-8") return PositionEncoding::utf8;
  if (kind == "utf-16") return PositionEncoding::utf16;
  if (kind == "utf-32") return PositionEncoding::utf32;
  return std::nullopt;
}

std::size_t code_units(std::string_view text, PositionEncoding encoding) {
  if (encoding == PositionEncoding::utf8) return text.size();
  std::size_t units = 0;
  for (std::size_t i = 0; i < text.size();) {
    Character c = decode(text, i);
    units += units_of(c, encoding);
    i += c.bytes;
  }
  return units;
}

LineStarts LineStartsBuilder::finish() && {
  close_line();
  return std::move(starts_);
}

void LineStarts::replace(std::string_view text, std::size_t offset, std::size_t removed, std::size_t inserted) {
  // The '\n' lines a..b of the old text hold the replaced bytes (and a '\r'
  // just before them, which a '\n' typed after it would pair with); they
  // span [newline[a], old_end) there and [newline[a], new_end) now.
  const std::size_t a = static_cast<std::size_t>(std::upper_bound(newline.begin(), newline.end(), offset) - newline.begin()) - 1;
  const std::size_t b = static_cast<std::size_t>(std::upper_bound(newline.begin(), newline.end(), offset + removed) - newline.begin()) - 1;
  const std::ptrdiff_t delta = static_cast<std::ptrdiff_t>(inserted) - static_cast<std::ptrdiff_t>(removed);
  const std::size_t begin = newline[a];
  const std::size_t new_end = b + 1 < newline.size() ? static_cast<std::size_t>(static_cast<std::ptrdiff_t>(newline[b + 1]) + delta)
                                                     : text.size();

  LineStartsBuilder builder;
  std::string_view region = text.substr(begin, new_end - begin);
  for (std::size_t i = 0; i < region.size(); ++i)
    if (region[i] == '\n' || region[i] == '\r') builder.line_end(region[i], i);
  LineStarts fresh = std::move(builder).finish();
  // The region's last start, when it ends in '\n', is line b + 1's: kept below.
  if (b + 1 < newline.size()) fresh.newline.pop_back();

  // Bare '\r's before line a, and in lines a..b before and after.
  auto first_redrawn_from = [&](std::size_t line) {
    return std::lower_bound(redrawn.begin(), redrawn.end(), line,
                            [](const Redrawn& r, std::size_t n) { return r.newline_line < n; });
  };
  auto from = first_redrawn_from(a), to = first_redrawn_from(b + 1);
  const std::size_t crs_before = from == redrawn.end() ? (redrawn.empty() ? 0 : redrawn.back().before + redrawn.back().count)
                                                       : from->before;
  std::size_t old_crs = 0;
  for (auto it = from; it != to; ++it) old_crs += it->count;
  std::size_t new_crs = 0;
  for (auto& r : fresh.redrawn) {
    r.newline_line += a;
    r.before += crs_before;
    new_crs += r.count;
  }
  const std::ptrdiff_t line_delta = static_cast<std::ptrdiff_t>(fresh.newline.size()) - static_cast<std::ptrdiff_t>(b + 1 - a);
  const std::ptrdiff_t cr_delta = static_cast<std::ptrdiff_t>(new_crs) - static_cast<std::ptrdiff_t>(old_crs);
  for (auto it = to; it != redrawn.end(); ++it) {
    it->newline_line = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(it->newline_line) + line_delta);
    it->before = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(it->before) + cr_delta);
  }
  const auto from_at = from - redrawn.begin();
  redrawn.erase(from, to);
  redrawn.insert(redrawn.begin() + from_at, fresh.redrawn.begin(), fresh.redrawn.end());

  for (std::size_t k = b + 1; k < newline.size(); ++k)
    newline[k] = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(newline[k]) + delta);
  for (auto& start : fresh.newline) start += begin;  // fresh.newline[0] is line a's start
  newline.erase(newline.begin() + static_cast<std::ptrdiff_t>(a), newline.begin() + static_cast<std::ptrdiff_t>(b + 1));
  newline.insert(newline.begin() + static_cast<std::ptrdiff_t>(a), fresh.newline.begin(), fresh.newline.end());
}

LineIndex::LineIndex(std::string_view text, LineStarts starts) : text_(text), starts_(std::move(starts)) {}

LineIndex::LineIndex(std::string_view text) : text_(text) {
  // Two memchr cursors instead of a byte loop: line ends are sparse, and
  // documents can be hundreds of megabytes.
  LineStartsBuilder builder;
  std::size_t next_lf = find_byte(text, '\n', 0);
  std::size_t next_cr = find_byte(text, '\r', 0);
  while (next_lf != std::string_view::npos || next_cr != std::string_view::npos) {
    if (next_cr < next_lf) {
      builder.line_end('\r', next_cr);
      next_cr = find_byte(text, '\r', next_cr + 1);
    } else {
      builder.line_end('\n', next_lf);
      next_lf = find_byte(text, '\n', next_lf + 1);
    }
  }
  starts_ = std::move(builder).finish();
}

std::size_t LineIndex::line_count() const {
  const std::size_t crs = starts_.redrawn.empty() ? 0 : starts_.redrawn.back().before + starts_.redrawn.back().count;
  return starts_.newline.size() + crs;
}

std::size_t LineIndex::first_lsp_line_of(std::size_t nl) const {
  auto it = std::lower_bound(starts_.redrawn.begin(), starts_.redrawn.end(), nl,
                             [](const LineStarts::Redrawn& r, std::size_t n) { return r.newline_line < n; });
  if (it != starts_.redrawn.end()) return nl + it->before;
  return nl + (starts_.redrawn.empty() ? 0 : starts_.redrawn.back().before + starts_.redrawn.back().count);
}

std::size_t LineIndex::newline_line_end(std::size_t nl) const {
  if (nl + 1 >= starts_.newline.size()) return text_.size();
  std::size_t next = starts_.newline[nl + 1] - 1;  // the '\n'
  if (next > starts_.newline[nl] && text_[next - 1] == '\r') --next;
  return next;
}

std::size_t LineIndex::start_after_bare_crs(std::size_t nl, std::size_t k) const {
  std::size_t at = starts_.newline[nl];
  const std::size_t end = newline_line_end(nl);
  for (; k > 0; --k) {
    std::size_t cr = find_byte(text_.substr(0, end), '\r', at);
    if (cr == std::string_view::npos) return end;
    at = cr + 1;
  }
  return at;
}

std::size_t LineIndex::line_start(std::size_t line) const {
  // The last '\n' line whose first LSP line is at or before `line`.
  std::size_t lo = 0, hi = starts_.newline.size();
  while (hi - lo > 1) {
    std::size_t mid = lo + (hi - lo) / 2;
    if (first_lsp_line_of(mid) <= line) lo = mid;
    else hi = mid;
  }
  return start_after_bare_crs(lo, line - first_lsp_line_of(lo));
}

std::size_t LineIndex::line_end(std::size_t line) const {
  std::size_t start = line_start(line);
  std::size_t nl = static_cast<std::size_t>(
      std::upper_bound(starts_.newline.begin(), starts_.newline.end(), start) - starts_.newline.begin() - 1);
  std::size_t end = newline_line_end(nl);
  std::size_t cr = find_byte(text_.substr(0, end), '\r', start);
  return cr == std::string_view::npos ? end : cr;
}

Position LineIndex::position_of(std::size_t byte_offset, PositionEncoding encoding) const {
  std::size_t offset = std::min(byte_offset, text_.size());
  auto after = std::upper_bound(starts_.newline.begin(), starts_.newline.end(), offset);
  auto nl = static_cast<std::size_t>(after - starts_.newline.begin()) - 1;
  // Within the '\n' line, each bare '\r' before the offset starts an LSP line.
  std::size_t start = starts_.newline[nl];
  const std::size_t nl_end = newline_line_end(nl);
  std::size_t line = first_lsp_line_of(nl);
  for (std::size_t cr = find_byte(text_.substr(0, std::min(offset, nl_end)), '\r', start);
       cr != std::string_view::npos; cr = find_byte(text_.substr(0, std::min(offset, nl_end)), '\r', cr + 1)) {
    start = cr + 1;
    ++line;
  }
  std::size_t content_end = find_byte(text_.substr(0, nl_end), '\r', start);
  if (content_end == std::string_view::npos) content_end = nl_end;
  std::size_t target = character_start(text_, start, std::min(offset, content_end));
  if (encoding == PositionEncoding::utf8) return {saturate(line), saturate(target - start)};

  std::size_t units = 0;
  for (std::size_t i = start; i < target;) {
    Character c = decode(text_, i);
    units += units_of(c, encoding);
    i += c.bytes;
  }
  return {saturate(line), saturate(units)};
}

std::optional<std::size_t> LineIndex::offset_of(Position position, PositionEncoding encoding) const {
  if (position.line >= line_count()) return text_.size();
  std::size_t start = line_start(position.line);
  std::size_t end = line_end(position.line);
  if (encoding == PositionEncoding::utf8) {
    std::size_t offset = start + std::min<std::size_t>(position.character, end - start);
    if (character_start(text_, start, offset) != offset) return std::nullopt;
    return offset;
  }
  std::size_t units = 0;
  std::size_t i = start;
  while (i < end && units < position.character) {
    Character c = decode(text_, i);
    units += units_of(c, encoding);
    i += c.bytes;
  }
  if (units > position.character) return std::nullopt;  // between two surrogate halves
  return i;
}

Range LineIndex::range_of(ByteRange bytes, PositionEncoding encoding) const {
  return {position_of(bytes.begin, encoding), position_of(bytes.end, encoding)};
}

std::optional<ByteRange> LineIndex::offsets_of(Range range, PositionEncoding encoding) const {
  auto begin = offset_of(range.start, encoding);
  auto end = offset_of(range.end, encoding);
  if (!begin || !end || *begin > *end) return std::nullopt;
  return ByteRange{*begin, *end};
}

std::size_t LineIndex::newline_line_start(std::uint64_t one_based_line) const {
  const auto& starts = starts_.newline;
  std::uint64_t index = one_based_line == 0 ? 0 : one_based_line - 1;
  return index < starts.size() ? starts[static_cast<std::size_t>(index)] : text_.size();
}

std::uint64_t LineIndex::newline_line_of(std::size_t byte_offset) const {
  const auto& starts = starts_.newline;
  auto after = std::upper_bound(starts.begin(), starts.end(), std::min(byte_offset, text_.size()));
  return static_cast<std::uint64_t>(after - starts.begin());
}

ByteRange LineIndex::newline_lines_bytes(std::uint64_t first, std::uint64_t last) const {
  std::size_t begin = newline_line_start(first);
  std::size_t end = newline_line_start(last + 1);
  while (end > begin && (text_[end - 1] == '\n' || text_[end - 1] == '\r')) --end;
  return {begin, std::max(begin, end)};
}

}  // namespace oomlens::lsp
