#include "analyzer/python/strings.hpp"
#include "analyzer/hex.hpp"
#include "analyzer/utf8.hpp"

#include <algorithm>
#include <cctype>

namespace oomlens::analyzer::python {

using analyzer::append_utf8;

namespace {

// Reads exactly `count` hex digits at text[at...]; nothing when they are not there.
std::optional<std::uint32_t> read_hex(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  return parse_hex(text.substr(at, count));
}

class Decoder {
 public:
  explicit Decoder(StringLiteral& out) : out_(out) {}

  void verbatim(std::uint32_t source_begin, std::string_view bytes) {
    if (bytes.empty()) return;
    auto& pieces = out_.pieces;
    if (!pieces.empty() && pieces.back().verbatim &&
        pieces.back().source.end == source_begin &&
        pieces.back().value_begin + pieces.back().value_size == out_.value.size()) {
      pieces.back().value_size += bytes.size();
      pieces.back().source.end += static_cast<std::uint32_t>(bytes.size());
    } else {
      pieces.push_back({out_.value.size(), bytes.size(),
                        {source_begin, source_begin + static_cast<std::uint32_t>(bytes.size())}, true});
    }
    out_.value += bytes;
  }

  void decoded(ByteRange source, std::string_view bytes) {
    if (bytes.empty()) return;  // a line continuation adds no character
    out_.pieces.push_back({out_.value.size(), bytes.size(), source, false});
    out_.value += bytes;
  }

 private:
  StringLiteral& out_;
};

// Decodes one `string` node into `out` (appending: concatenation calls it per part).
bool decode_one(Node node, std::string_view source, StringLiteral& out, bool& first, bool& is_bytes) {
  if (!node.is("string") || node.has_error()) return false;
  for (const Node& child : node.named_children())
    if (child.is("interpolation")) return false;  // an f-string with a replacement field

  const ByteRange range = node.range();
  std::string_view text = source.substr(range.begin, range.size());
  std::size_t at = 0;
  bool raw = false, bytes = false, fstring = false;
  while (at < text.size() && std::isalpha(static_cast<unsigned char>(text[at]))) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(text[at])));
    raw |= c == 'r';
    bytes |= c == 'b';
    fstring |= c == 'f';
    ++at;
  }
  if (at >= text.size() || (text[at] != '"' && text[at] != '\'')) return false;
  const char quote = text[at];
  std::size_t quote_size = text.substr(at, 3) == std::string(3, quote) && text.size() - at >= 6 ? 3 : 1;
  if (text.size() < at + 2 * quote_size) return false;
  const std::size_t content_begin = at + quote_size;
  const std::size_t content_end = text.size() - quote_size;
  if (text.substr(content_end) != std::string(quote_size, quote)) return false;

  if (first) {
    is_bytes = bytes;
    first = false;
  } else if (is_bytes != bytes) {
    return false;  // "a" b"b" is a SyntaxError in Python
  }

  Decoder decoder(out);
  auto source_at = [&](std::size_t i) { return range.begin + static_cast<std::uint32_t>(i); };
  std::size_t i = content_begin;
  while (i < content_end) {
    char c = text[i];
    if (fstring && (c == '{' || c == '}') && i + 1 < content_end && text[i + 1] == c) {
      decoder.decoded({source_at(i), source_at(i + 2)}, std::string_view(&text[i], 1));
      i += 2;
      continue;
    }
    if (c != '\\' || raw || i + 1 >= content_end) {
      std::size_t j = i + 1;
      while (j < content_end && text[j] != '\\' && !(fstring && (text[j] == '{' || text[j] == '}'))) ++j;
      if (raw) j = content_end;
      decoder.verbatim(source_at(i), text.substr(i, j - i));
      i = j;
      continue;
    }
    // An escape sequence: text[i] == '\\'.
    char e = text[i + 1];
    std::size_t end = i + 2;
    std::string value;
    switch (e) {
      case '\n': break;  // line continuation: no character
      case '\r': if (end < content_end && text[end] == '\n') ++end; break;
      case '\\': value = "\\"; break;
      case '\'': value = "'"; break;
      case '"': value = "\""; break;
      case 'a': value = "\a"; break;
      case 'b': value = "\b"; break;
      case 'f': value = "\f"; break;
      case 'n': value = "\n"; break;
      case 'r': value = "\r"; break;
      case 't': value = "\t"; break;
      case 'v': value = "\v"; break;
      case 'x': {
        auto cp = read_hex(text.substr(0, content_end), i + 2, 2);
        if (!cp) return false;  // SyntaxError in Python
        end = i + 4;
        if (bytes) value = std::string(1, static_cast<char>(*cp));
        else append_utf8(value, *cp);
        break;
      }
      case 'u':
      case 'U': {
        if (bytes) {  // not an escape in bytes: kept as written
          value = std::string(text.substr(i, 2));
          break;
        }
        std::size_t digits = e == 'u' ? 4 : 8;
        auto cp = read_hex(text.substr(0, content_end), i + 2, digits);
        if (!cp || *cp > 0x10FFFF) return false;
        end = i + 2 + digits;
        append_utf8(value, *cp);
        break;
      }
      case 'N': {
        // Named characters need the Unicode name table; keep the escape as written.
        std::size_t close = text.find('}', i);
        if (bytes || close == std::string_view::npos || close >= content_end) {
          value = std::string(text.substr(i, 2));
          break;
        }
        end = close + 1;
        value = std::string(text.substr(i, end - i));
        break;
      }
      default:
        if (e >= '0' && e <= '7') {
          std::uint32_t cp = 0;
          end = i + 1;
          while (end < content_end && end < i + 4 && text[end] >= '0' && text[end] <= '7')
            cp = cp * 8 + static_cast<std::uint32_t>(text[end++] - '0');
          if (bytes) value = std::string(1, static_cast<char>(cp & 0xFF));
          else append_utf8(value, cp);
        } else {
          // Unknown escapes keep their backslash, as in Python.
          std::size_t size = 2;
          while (i + size < content_end && (static_cast<unsigned char>(text[i + size]) & 0xC0) == 0x80) ++size;
          value = std::string(text.substr(i, size));
          end = i + size;
        }
    }
    decoder.decoded({source_at(i), source_at(end)}, value);
    i = end;
  }
  return true;
}

}  // namespace

ByteRange StringLiteral::source_range(std::size_t begin, std::size_t end) const {
  if (pieces.empty()) {
    // An empty literal: point between its quotes.
    std::uint32_t inside = range.end > range.begin ? range.end - 1 : range.end;
    return {inside, inside};
  }
  end = std::max(begin, end);
  // The piece holding value byte `offset` (the last piece past the end).
  auto piece_of = [&](std::size_t offset) -> const Piece& {
    auto it = std::upper_bound(pieces.begin(), pieces.end(), offset,
                               [](std::size_t o, const Piece& p) { return o < p.value_begin; });
    return it == pieces.begin() ? *it : *std::prev(it);
  };
  auto start_of = [&](std::size_t offset) -> std::uint32_t {
    if (offset >= value.size()) return pieces.back().source.end;
    const Piece& p = piece_of(offset);
    // A start inside an escape snaps to the start of the escape.
    return p.verbatim ? p.source.begin + static_cast<std::uint32_t>(offset - p.value_begin) : p.source.begin;
  };
  std::uint32_t source_begin = start_of(begin);
  if (begin == end) return {source_begin, source_begin};
  const Piece& last = piece_of(std::min(end, value.size()) - 1);
  // An end inside an escape snaps to the end of the escape.
  std::uint32_t source_end = last.verbatim
      ? last.source.begin + static_cast<std::uint32_t>(std::min(end, value.size()) - last.value_begin)
      : last.source.end;
  return {source_begin, source_end};
}

std::optional<StringLiteral> decode_string_literal(Node node, std::string_view source) {
  if (!node || node.end_byte() > source.size()) return std::nullopt;
  StringLiteral out;
  out.range = node.range();
  bool first = true;
  if (node.is("string")) {
    if (!decode_one(node, source, out, first, out.is_bytes)) return std::nullopt;
  } else if (node.is("concatenated_string")) {
    for (const Node& part : node.named_children())
      if (!decode_one(part, source, out, first, out.is_bytes)) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace oomlens::analyzer::python
