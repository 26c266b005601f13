#include "analyzer/snapshot/pickle_text.hpp"

#include <charconv>
#include <cstddef>

#include "analyzer/hex.hpp"
#include "analyzer/utf8.hpp"

namespace oomlens::analyzer::snapshot::pickle_text {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// (Qualified: this namespace has an append_utf8 of its own, for byte runs.)
void append_code_point(std::string& out, std::uint32_t cp) { ::oomlens::analyzer::append_utf8(out, cp); }

// Length of the valid UTF-8 sequence at in[i], or 0.
std::size_t valid_sequence(std::string_view in, std::size_t i) {
  int length = utf8_sequence(reinterpret_cast<const unsigned char*>(in.data()) + i, in.size() - i);
  return length > 0 ? static_cast<std::size_t>(length) : 0;
}

}  // namespace

void append_utf8(std::string& out, std::string_view in) {
  std::size_t i = 0;
  while (i < in.size()) {
    // Fast path: copy the valid stretch in one go.
    std::size_t start = i;
    std::size_t length = 0;
    while (i < in.size() && (length = valid_sequence(in, i)) != 0) i += length;
    out.append(in.substr(start, i - start));
    if (i < in.size()) {
      out += kReplacement;
      ++i;
    }
  }
}

void append_latin1(std::string& out, std::string_view in) {
  for (char c : in) append_code_point(out, static_cast<unsigned char>(c));
}

bool append_raw_unicode_escape(std::string& out, std::string_view in) {
  std::size_t backslashes = 0;  // an escape needs an odd run of them before the u
  for (std::size_t i = 0; i < in.size(); ++i) {
    char c = in[i];
    if ((c == 'u' || c == 'U') && backslashes % 2 == 1) {
      std::size_t digits = c == 'u' ? 4 : 8;
      if (in.size() - (i + 1) < digits) return false;
      auto cp = parse_hex(in.substr(i + 1, digits));
      if (!cp) return false;
      out.pop_back();  // the backslash that began the escape
      append_code_point(out, *cp);
      i += digits;
      backslashes = 0;
      continue;
    }
    backslashes = c == '\\' ? backslashes + 1 : 0;
    append_code_point(out, static_cast<unsigned char>(c));
  }
  return true;
}

void trim_twos_complement(std::string& bytes) {
  while (bytes.size() > 1) {
    auto last = static_cast<unsigned char>(bytes.back());
    auto prev = static_cast<unsigned char>(bytes[bytes.size() - 2]);
    bool redundant = (last == 0x00 && !(prev & 0x80)) || (last == 0xFF && (prev & 0x80));
    if (!redundant) break;
    bytes.pop_back();
  }
}

std::optional<DecimalInt> parse_decimal_int(std::string_view text) {
  if (!text.empty() && text.back() == 'L') text.remove_suffix(1);  // Python 2's long suffix
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty() || text.size() > kMaxDecimalDigits) return std::nullopt;
  for (char c : text)
    if (c < '0' || c > '9') return std::nullopt;

  DecimalInt result;
  std::int64_t value = 0;
  std::string_view signed_text(text.data() - (negative ? 1 : 0), text.size() + (negative ? 1 : 0));
  auto [end, ec] = std::from_chars(signed_text.data(), signed_text.data() + signed_text.size(), value);
  if (ec == std::errc() && end == signed_text.data() + signed_text.size()) {
    result.value = value;
    return result;
  }
  // Too big for int64: build the magnitude little-endian, then the sign.
  std::string magnitude(1, '\0');
  for (char c : text) {
    unsigned carry = static_cast<unsigned>(c - '0');
    for (char& b : magnitude) {
      unsigned v = static_cast<unsigned char>(b) * 10u + carry;
      b = static_cast<char>(v & 0xFF);
      carry = v >> 8;
    }
    if (carry) magnitude += static_cast<char>(carry);
  }
  magnitude += '\0';  // room for the sign bit
  if (negative) {
    unsigned carry = 1;
    for (char& b : magnitude) {
      unsigned v = static_cast<unsigned char>(~static_cast<unsigned char>(b)) + carry;
      b = static_cast<char>(v & 0xFF);
      carry = v >> 8;
    }
  }
  trim_twos_complement(magnitude);
  result.big = true;
  result.big_bytes = std::move(magnitude);
  return result;
}

std::optional<double> parse_float(std::string_view text) {
  if (!text.empty() && text.front() == '+') text.remove_prefix(1);
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace oomlens::analyzer::snapshot::pickle_text
