// Decoding the text a pickle carries: UTF-8 strings, protocol-0/1 byte
// strings, raw-unicode-escape lines and decimal numbers. Output strings are
// always valid UTF-8 (what every consumer, JSON included, expects).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace oomlens::analyzer::snapshot::pickle_text {

// Copies UTF-8, replacing each invalid sequence (overlong forms, lone
// surrogates that Python's "surrogatepass" lets through, code points past
// U+10FFFF, stray bytes) with U+FFFD.
void append_utf8(std::string& out, std::string_view in);

// Protocol 0/1 str (BINSTRING): bytes read as Latin-1, as the `encoding`
// argument of pickle.loads would most tolerantly decode them.
void append_latin1(std::string& out, std::string_view in);

// The UNICODE opcode's line: Latin-1 with \uXXXX and \UXXXXXXXX escapes.
// False when an escape is cut short.
bool append_raw_unicode_escape(std::string& out, std::string_view in);

// A decimal integer as INT/LONG lines write it ("-12", "123L"). Values that
// fit are returned in `value`; others in `big_bytes`, little-endian two's
// complement of minimal length, as LONG1 would carry them.
struct DecimalInt {
  bool big = false;
  std::int64_t value = 0;
  std::string big_bytes;
};
// Python refuses to convert more digits than this (sys.int_info.default_max_str_digits);
// so do we: the conversion is quadratic.
inline constexpr std::size_t kMaxDecimalDigits = 4300;
std::optional<DecimalInt> parse_decimal_int(std::string_view text);

// Drops redundant sign bytes from little-endian two's complement.
void trim_twos_complement(std::string& bytes);

// A FLOAT line: Python's repr of a float ("0.5", "1e+300", "inf", "nan").
std::optional<double> parse_float(std::string_view text);

}  // namespace oomlens::analyzer::snapshot::pickle_text
