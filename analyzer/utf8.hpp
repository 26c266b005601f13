// UTF-8, shared by every decoder that turns escapes into text (Python string
// literals, pickle strings, JSON-RPC bodies) and every reader that must tell
// well-formed text from stray bytes (pickle strings, LSP positions, JSON-RPC).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace oomlens::analyzer {

// Writes the UTF-8 bytes of `cp` at `out` (room for 4) and returns the end.
// A surrogate or a value above U+10FFFF becomes U+FFFD, so the result is
// always valid UTF-8.
inline char* write_utf8(char* out, std::uint32_t cp) {
  if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) cp = 0xFFFD;
  if (cp < 0x80) {
    *out++ = static_cast<char>(cp);
  } else if (cp < 0x800) {
    *out++ = static_cast<char>(0xC0 | (cp >> 6));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    *out++ = static_cast<char>(0xE0 | (cp >> 12));
    *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    *out++ = static_cast<char>(0xF0 | (cp >> 18));
    *out++ = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    *out++ = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    *out++ = static_cast<char>(0x80 | (cp & 0x3F));
  }
  return out;
}

// Appends the UTF-8 bytes of `cp` (as write_utf8).
inline void append_utf8(std::string& out, std::uint32_t cp) {
  char bytes[4];
  out.append(bytes, static_cast<std::size_t>(write_utf8(bytes, cp) - bytes));
}

// The length of the well-formed UTF-8 sequence that starts at p[0], of the
// `available` (at least 1) bytes there, per the Unicode standard's table 3-7
// (no overlong forms, no surrogates, nothing above U+10FFFF): 1 for ASCII,
// 2 to 4 beyond it, 0 when it is ill-formed, -1 when the bytes end before
// they can tell (a reader of pieces waits for more; a reader of a whole text
// takes it for ill-formed).
inline int utf8_sequence(const unsigned char* p, std::size_t available) {
  unsigned char lead = p[0];
  if (lead < 0x80) return 1;
  int length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the second byte's range
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  for (int k = 1; k < length; ++k) {
    if (static_cast<std::size_t>(k) >= available) return -1;
    unsigned char b = p[k];
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return 0;
  }
  return length;
}

}  // namespace oomlens::analyzer
