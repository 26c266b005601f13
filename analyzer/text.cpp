#include "analyzer/text.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>

namespace oomlens::analyzer {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// Reads exactly n digits at text[i...]; returns the value or -1.
int digits(std::string_view text, std::size_t i, std::size_t n) {
  if (i + n > text.size()) return -1;
  int v = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (!is_digit(text[i + k])) return -1;
    v = v * 10 + (text[i + k] - '0');
  }
  return v;
}

// "YYYY-MM-DD[ T]HH:MM:SS[.,fraction][Z|+HH:MM]" optionally in brackets, then
// optional ':' or ' -' separators and spaces.
std::optional<std::size_t> read_timestamp(std::string_view t, std::int64_t& ms) {
  std::size_t i = 0;
  bool bracket = !t.empty() && t[0] == '[';
  if (bracket) ++i;
  int year = digits(t, i, 4);
  if (year < 0 || i + 19 > t.size() || t[i + 4] != '-' || t[i + 7] != '-' || (t[i + 10] != ' ' && t[i + 10] != 'T') ||
      t[i + 13] != ':' || t[i + 16] != ':')
    return std::nullopt;
  int month = digits(t, i + 5, 2), day = digits(t, i + 8, 2);
  int hour = digits(t, i + 11, 2), minute = digits(t, i + 14, 2), second = digits(t, i + 17, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60)
    return std::nullopt;
  i += 19;
  int millis = 0;
  if (i < t.size() && (t[i] == '.' || t[i] == ',')) {
    std::size_t start = ++i;
    while (i < t.size() && is_digit(t[i])) ++i;
    std::size_t n = i - start;
    if (n == 0) return std::nullopt;
    millis = digits(t, start, n < 3 ? n : 3);
    if (n == 1) millis *= 100;
    if (n == 2) millis *= 10;
  }
  int offset_minutes = 0;
  if (i < t.size() && t[i] == 'Z') {
    ++i;
  } else if (i + 5 < t.size() + 0 && (t[i] == '+' || t[i] == '-') && is_digit(t[i + 1])) {
    int oh = digits(t, i + 1, 2);
    std::size_t j = i + 3;
    if (j < t.size() && t[j] == ':') ++j;
    int om = digits(t, j, 2);
    if (oh >= 0 && om >= 0) {
      offset_minutes = (oh * 60 + om) * (t[i] == '-' ? -1 : 1);
      i = j + 2;
    }
  }
  if (bracket) {
    if (i >= t.size() || t[i] != ']') return std::nullopt;
    ++i;
  }
  if (i < t.size() && t[i] == ':') ++i;
  while (i < t.size() && t[i] == ' ') ++i;
  if (i + 1 < t.size() && t[i] == '-' && t[i + 1] == ' ') i += 2;
  ms = epoch_ms(year, month, day, hour, minute, second, millis) - std::int64_t{offset_minutes} * 60000;
  return i;
}

// "[rank3]:", "[default3]:", "[1,3]<stderr>:", "3: " (srun -l).
std::optional<std::size_t> read_rank(std::string_view t, int& rank) {
  auto number_at = [&](std::size_t i, std::size_t& end) -> int {
    std::size_t j = i;
    long v = 0;
    while (j < t.size() && is_digit(t[j]) && j - i < 7) v = v * 10 + (t[j++] - '0');
    if (j == i) return -1;
    end = j;
    return static_cast<int>(v);
  };
  std::size_t end = 0;
  for (std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
    if (t.starts_with(tag)) {
      int r = number_at(tag.size(), end);
      if (r >= 0 && end < t.size() && t[end] == ']') {
        std::size_t i = end + 1;
        if (i < t.size() && t[i] == ':') ++i;
        // The program's own text follows at once: its indentation (traceback
        // frames, source lines) is meaningful, so no spaces are dropped.
        rank = r;
        return i;
      }
    }
  }
  if (t.starts_with("[")) {  // mpirun --tag-output: [jobid,rank]<stdout|stderr>:
    std::size_t comma_end = 0;
    if (number_at(1, comma_end) >= 0 && comma_end < t.size() && t[comma_end] == ',') {
      int r = number_at(comma_end + 1, end);
      if (r >= 0 && end < t.size() && t[end] == ']') {
        std::size_t i = end + 1;
        for (std::string_view s : {std::string_view("<stdout>:"), std::string_view("<stderr>:")})
          if (t.substr(i).starts_with(s)) {
            rank = r;
            return i + s.size();
          }
      }
    }
  }
  // srun --label: "3: text". Only digits then ": ", so "12:00:01" never matches.
  int r = number_at(0, end);
  if (r >= 0 && end + 1 < t.size() && t[end] == ':' && t[end + 1] == ' ' && end <= 5) {
    rank = r;
    return end + 2;
  }
  return std::nullopt;
}

}  // namespace

std::int64_t epoch_ms(int year, int month, int day, int hour, int minute, int second, int millis) {
  // Days from civil (Howard Hinnant's algorithm), proleptic Gregorian, UTC.
  int y = year - (month <= 2 ? 1 : 0);
  int era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = static_cast<unsigned>(y - era * 400);
  unsigned doy = static_cast<unsigned>((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1);
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  std::int64_t days = std::int64_t{era} * 146097 + static_cast<std::int64_t>(doe) - 719468;
  return ((days * 24 + hour) * 60 + minute) * 60000 + std::int64_t{second} * 1000 + millis;
}

std::uint32_t display_columns(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
}

std::string strip_ansi(std::string_view text) {
  if (std::memchr(text.data(), '\x1b', text.size()) == nullptr) return std::string(text);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c != '\x1b') {
      out.push_back(c);
      continue;
    }
    if (i + 1 >= text.size()) break;
    char kind = text[i + 1];
    if (kind == '[') {  // CSI: parameters, then one final byte in 0x40..0x7e
      std::size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j;
    } else if (kind == ']') {  // OSC: until BEL or ESC backslash
      std::size_t j = i + 2;
      while (j < text.size() && text[j] != '\x07' && !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\')) ++j;
      i = (j < text.size() && text[j] == '\x1b') ? j + 1 : j;
    } else {
      i += 1;  // two-byte escape such as ESC 7 / ESC =
    }
  }
  return out;
}

LinePrefix read_prefix(std::string_view text) {
  LinePrefix p;
  std::size_t pos = 0;
  // Launchers and loggers stack prefixes: "[default0]:[rank0]:2026-... ".
  for (int round = 0; round < 4; ++round) {
    std::string_view rest = text.substr(pos);
    // A timestamp may follow a rank prefix after a space; plain text keeps its
    // leading spaces.
    std::size_t spaces = 0;
    while (spaces < rest.size() && rest[spaces] == ' ') ++spaces;
    std::int64_t ms = 0;
    int rank = 0;
    if (auto n = read_timestamp(rest.substr(spaces), ms)) {
      if (!p.time_ms) p.time_ms = ms;
      pos += spaces + *n;
    } else if (auto m = read_rank(rest, rank)) {
      if (!p.rank) p.rank = rank;
      pos += *m;
    } else {
      break;
    }
  }
  p.length = pos;
  return p;
}

}  // namespace oomlens::analyzer
