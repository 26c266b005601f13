#include "analyzer/log/text.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
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

// "YYYY-MM-DD[ T]HH:MM:SS[.,fraction][Z|+HH:MM]" (or YYYY/MM/DD) optionally in brackets, then
// optional ':' or ' -' separators and spaces.
std::optional<std::size_t> read_timestamp(std::string_view t, std::int64_t& ms) {
  std::size_t i = 0;
  bool bracket = !t.empty() && t[0] == '[';
  if (bracket) ++i;
  int year = digits(t, i, 4);
  const char sep = i + 4 < t.size() && t[i + 4] == '/' ? '/' : '-';
  if (year < 0 || i + 19 > t.size() || t[i + 4] != sep || t[i + 7] != sep || (t[i + 10] != ' ' && t[i + 10] != 'T') ||
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

bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

// Up to `max_digits` digits at t[i...]; -1 when none. `end` receives where they stop.
long number_at(std::string_view t, std::size_t i, std::size_t& end, std::size_t max_digits = 7) {
  std::size_t j = i;
  long v = 0;
  while (j < t.size() && is_digit(t[j]) && j - i < max_digits) v = v * 10 + (t[j++] - '0');
  if (j == i || (j < t.size() && is_digit(t[j]))) return -1;
  end = j;
  return v;
}

// Launcher prefixes that name a rank:
//   "[rank3]:", "[default3]:", any torchelastic role "[trainer3]:"
//   "[1,3]<stderr>:" (Open MPI --tag-output), "[3]<stderr>:" (horovod's gloo runner)
//   "[rank: 3] " (Lightning), "[3] " (MPICH/Intel MPI -prepend-rank, line start only)
//   "3: " (srun --label; right-aligned " 3: " at the line start only)
std::optional<std::size_t> read_rank(std::string_view t, int& rank, bool line_start) {
  std::size_t end = 0;
  if (t.starts_with("[")) {
    // "[" role digits "]" ":"? -- "rank" and "default" may omit the colon.
    std::size_t i = 1;
    while (i < t.size() && i < 40 && (is_alpha(t[i]) || t[i] == '_')) ++i;
    if (i > 1) {
      long r = number_at(t, i, end);
      if (r >= 0 && end < t.size() && t[end] == ']') {
        std::string_view role = t.substr(1, i - 1);
        bool colon = end + 1 < t.size() && t[end + 1] == ':';
        if (colon || role == "rank" || role == "default") {
          // The program's own text follows at once: its indentation (traceback
          // frames, source lines) is meaningful, so no spaces are dropped.
          rank = static_cast<int>(r);
          return end + 1 + (colon ? 1 : 0);
        }
      }
    }
    if (t.starts_with("[rank: ")) {
      long r = number_at(t, 7, end);
      if (r >= 0 && end + 1 < t.size() && t[end] == ']' && t[end + 1] == ' ') {
        rank = static_cast<int>(r);
        return end + 2;
      }
    }
    std::size_t first_end = 0;
    long first = number_at(t, 1, first_end);
    if (first >= 0 && first_end < t.size()) {
      std::size_t i = first_end;
      long r = first;
      bool comma = t[i] == ',';
      if (comma) {  // mpirun --tag-output: [jobid,rank]<stdout|stderr>:
        r = number_at(t, i + 1, end);
        if (r < 0) return std::nullopt;
        i = end;
      }
      if (i < t.size() && t[i] == ']') {
        ++i;
        for (std::string_view s : {std::string_view("<stdout>:"), std::string_view("<stderr>:")})
          if (t.substr(i).starts_with(s)) {
            rank = static_cast<int>(r);
            return i + s.size();
          }
        // MPICH's -prepend-rank: "[3] text"; never torchelastic's "[0]:" summary rows.
        if (!comma && line_start && i < t.size() && t[i] == ' ' && first_end - 1 <= 4) {
          rank = static_cast<int>(r);
          return i + 1;
        }
      }
    }
    return std::nullopt;
  }
  // srun --label: "3: text". Only digits then ": ", so "12:00:01" never matches.
  std::size_t pad = 0;
  if (line_start)
    while (pad < t.size() && pad < 3 && t[pad] == ' ') ++pad;
  long r = number_at(t, pad, end);
  if (r >= 0 && end + 1 < t.size() && t[end] == ':' && t[end + 1] == ' ' && end <= 5) {
    rank = static_cast<int>(r);
    return end + 2;
  }
  return std::nullopt;
}

// Ray and vLLM worker tags: "(VllmWorker rank=1 pid=4242) ", "(RayWorkerWrapper
// pid=4242, ip=10.0.0.3) ", "(pid=4242) ", "(EngineCore_DP0 pid=4242) ",
// "(Worker_TP1 pid=4242) ". A tag without "pid=" is no worker tag.
std::optional<std::size_t> read_worker_tag(std::string_view t, std::optional<int>& rank, std::uint64_t& pid) {
  if (!t.starts_with("(")) return std::nullopt;
  std::size_t depth = 0, close = 0;
  for (std::size_t i = 0; i < t.size() && i < 200; ++i) {
    if (t[i] == '(') ++depth;
    else if (t[i] == ')' && --depth == 0) {
      close = i;
      break;
    }
  }
  if (close == 0 || (close + 1 < t.size() && t[close + 1] != ' ')) return std::nullopt;
  std::string_view inner = t.substr(1, close - 1);
  auto value_after = [&](std::string_view key, std::size_t from = 0) -> std::optional<long> {
    for (std::size_t at = inner.find(key, from); at != std::string_view::npos; at = inner.find(key, at + 1)) {
      char before = at == 0 ? ' ' : inner[at - 1];
      if (before != ' ' && before != ',' && before != '(' && before != '_') continue;
      std::size_t end = 0;
      long v = number_at(inner, at + key.size(), end, 10);
      if (v >= 0) return v;
    }
    return std::nullopt;
  };
  auto p = value_after("pid=");
  if (!p) return std::nullopt;
  pid = static_cast<std::uint64_t>(*p);
  if (auto r = value_after("rank=")) {
    rank = static_cast<int>(*r);
  } else {
    // vLLM names workers by their parallel ranks: "Worker_TP1", "VllmWorker TP1",
    // early "Worker_1". Only a tensor-parallel index alone is the global rank;
    // with pipeline or data parallel ("Worker_PP1_TP0") it is not.
    std::string_view name = inner.substr(0, inner.find(" pid="));
    bool other_axes = name.find("PP") != std::string_view::npos || name.find("DP") != std::string_view::npos ||
                      name.find("EP") != std::string_view::npos;
    std::size_t tp = name.rfind("TP");
    std::size_t end = 0;
    if (!other_axes && tp != std::string_view::npos && (tp == 0 || name[tp - 1] == '_' || name[tp - 1] == ' ')) {
      long v = number_at(name, tp + 2, end);
      if (v >= 0 && end == name.size()) rank = static_cast<int>(v);
    } else if (name.starts_with("Worker_")) {
      long v = number_at(name, 7, end);
      if (v >= 0 && end == name.size()) rank = static_cast<int>(v);
    }
  }
  return close + 1 < t.size() ? close + 2 : close + 1;
}

bool is_level_word(std::string_view w) {
  return w == "DEBUG" || w == "INFO" || w == "WARNING" || w == "WARN" || w == "ERROR" || w == "CRITICAL";
}

// vLLM's logger: "ERROR 03-01 12:00:00 [file.py:12] " or, older,
// "ERROR 03-01 12:00:00 file.py:12] ". The time has no year.
std::optional<std::size_t> read_vllm_logger(std::string_view t, std::int64_t& ms) {
  std::size_t sp = t.find(' ');
  if (sp == std::string_view::npos || sp > 8 || !is_level_word(t.substr(0, sp))) return std::nullopt;
  std::size_t i = sp + 1;
  if (i + 14 > t.size() || t[i + 2] != '-' || t[i + 5] != ' ' || t[i + 8] != ':' || t[i + 11] != ':') return std::nullopt;
  int month = digits(t, i, 2), day = digits(t, i + 3, 2);
  int hour = digits(t, i + 6, 2), minute = digits(t, i + 9, 2), second = digits(t, i + 12, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60)
    return std::nullopt;
  i += 14;
  int millis = 0;
  if (i < t.size() && t[i] == '.') {
    std::size_t start = ++i;
    while (i < t.size() && is_digit(t[i])) ++i;
    if (i - start >= 3) millis = digits(t, start, 3);
  }
  if (i >= t.size() || t[i] != ' ') return std::nullopt;
  ++i;
  // The source location ends with "]" after ":line".
  std::size_t close = t.find(']', i);
  if (close == std::string_view::npos || close - i > 120) return std::nullopt;
  std::string_view loc = t.substr(i, close - i);
  if (loc.starts_with("[")) loc.remove_prefix(1);
  std::size_t colon = loc.rfind(':');
  std::size_t end = 0;
  if (colon == std::string_view::npos || colon == 0 || number_at(loc, colon + 1, end) < 0 || end != loc.size() ||
      loc.find(' ') != std::string_view::npos)
    return std::nullopt;
  ms = epoch_ms(kYearlessYear, month, day, hour, minute, second, millis);
  std::size_t after = close + 1;
  return after < t.size() && t[after] == ' ' ? after + 1 : after;
}

// DeepSpeed's log_dist: "[INFO] [logging.py:128:log_dist] [Rank 0] text" (the
// bracketed timestamp before it is read separately). Only with "[Rank N]".
std::optional<std::size_t> read_deepspeed_rank(std::string_view t, int& rank) {
  if (!t.starts_with("[")) return std::nullopt;
  std::size_t close = t.find(']');
  if (close == std::string_view::npos || !is_level_word(t.substr(1, close - 1))) return std::nullopt;
  std::size_t i = close + 1;
  if (!t.substr(i).starts_with(" [")) return std::nullopt;
  std::size_t loc_close = t.find(']', i + 2);
  if (loc_close == std::string_view::npos || loc_close - i > 120) return std::nullopt;
  i = loc_close + 1;
  if (!t.substr(i).starts_with(" [Rank ")) return std::nullopt;
  std::size_t end = 0;
  long r = number_at(t, i + 7, end);
  if (r < 0 || end >= t.size() || t[end] != ']') return std::nullopt;
  rank = static_cast<int>(r);
  return end + 1 < t.size() && t[end + 1] == ' ' ? end + 2 : end + 1;
}

// pdsh (DeepSpeed's multi-node runner) puts "host: " before each line; only
// taken when a rank prefix follows, so "Epoch: 3" stays text.
std::optional<std::size_t> read_host_then_rank(std::string_view t, int& rank) {
  std::size_t i = 0;
  while (i < t.size() && i < 64 && (is_alpha(t[i]) || is_digit(t[i]) || t[i] == '-' || t[i] == '.' || t[i] == '_')) ++i;
  if (i == 0 || i + 1 >= t.size() || t[i] != ':' || t[i + 1] != ' ') return std::nullopt;
  if (!t.substr(i + 2).starts_with("[")) return std::nullopt;
  if (auto n = read_rank(t.substr(i + 2), rank, false)) return i + 2 + *n;
  return std::nullopt;
}

// glog "E0301 12:00:00.123456 4242 file.py:12]" and c10 "[W301 12:00:00.123456789
// file.cpp:12]": month and day without a year.
std::optional<std::int64_t> glog_time(std::string_view t) {
  std::size_t i = t.starts_with("[") ? 1 : 0;
  if (i >= t.size() || (t[i] != 'I' && t[i] != 'W' && t[i] != 'E' && t[i] != 'F')) return std::nullopt;
  std::size_t end = 0;
  long mmdd = number_at(t, i + 1, end, 4);
  if (mmdd < 0 || end - (i + 1) < 3 || end >= t.size() || t[end] != ' ') return std::nullopt;
  std::size_t h = end + 1;
  if (h + 8 > t.size() || t[h + 2] != ':' || t[h + 5] != ':') return std::nullopt;
  int month = static_cast<int>(mmdd / 100), day = static_cast<int>(mmdd % 100);
  int hour = digits(t, h, 2), minute = digits(t, h + 3, 2), second = digits(t, h + 6, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 || minute > 59 ||
      second < 0 || second > 60)
    return std::nullopt;
  int millis = 0;
  if (h + 8 < t.size() && t[h + 8] == '.' && digits(t, h + 9, 3) >= 0) millis = digits(t, h + 9, 3);
  return epoch_ms(kYearlessYear, month, day, hour, minute, second, millis);
}

// NCCL: "host:pid:tid [N] " (N the CUDA device index).
bool read_nccl_prefix(std::string_view t, int& device, std::uint64_t& pid) {
  std::size_t i = 0;
  while (i < t.size() && i < 128 && t[i] != ':' && t[i] != ' ') ++i;
  if (i == 0 || i >= t.size() || t[i] != ':') return false;
  std::size_t end = 0;
  long p = number_at(t, i + 1, end, 10);
  if (p < 0 || end >= t.size() || t[end] != ':') return false;
  long tid = number_at(t, end + 1, end, 10);
  if (tid < 0 || !t.substr(end).starts_with(" [")) return false;
  long d = number_at(t, end + 2, end, 4);
  if (d < 0 || end + 1 >= t.size() || t[end] != ']' || t[end + 1] != ' ') return false;
  device = static_cast<int>(d);
  pid = static_cast<std::uint64_t>(p);
  return true;
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

namespace {

// How often a byte turns up in log text, roughly (English letter frequencies
// in tenths of a percent, both cases together; spaces and digits common,
// most punctuation rare). contains_folded looks for a needle's rarest byte:
// a needle's first letter is often one of e, t, a, o, n that a PyTorch
// message holds dozens of, each a candidate to compare.
constexpr std::array<std::uint8_t, 256> kByteFrequency = [] {
  std::array<std::uint8_t, 256> f{};
  for (auto& v : f) v = 10;  // punctuation, control and non-ASCII bytes
  constexpr std::string_view kLetters = "abcdefghijklmnopqrstuvwxyz";
  constexpr std::array<std::uint8_t, 26> kPerMille = {82, 15, 28, 43, 127, 22, 20, 61, 70, 2,  8, 40, 24,
                                                      67, 75, 19, 1,  60, 63, 91, 28, 10, 24, 2, 20, 1};
  for (std::size_t i = 0; i < kLetters.size(); ++i) f[static_cast<unsigned char>(kLetters[i])] = kPerMille[i];
  for (char d = '0'; d <= '9'; ++d) f[static_cast<unsigned char>(d)] = 40;
  f[' '] = 200;
  for (char c : std::string_view(".,:/=")) f[static_cast<unsigned char>(c)] = 30;
  return f;
}();

}  // namespace

bool contains_folded(std::string_view text, std::string_view lower) {
  if (lower.empty()) return true;
  if (lower.size() > text.size()) return false;
  // Candidates are the needle's rarest byte in either case, each found once
  // (memchr), then the whole needle compared around it.
  std::size_t rare = 0;
  for (std::size_t j = 1; j < lower.size(); ++j)
    if (kByteFrequency[static_cast<unsigned char>(lower[j])] < kByteFrequency[static_cast<unsigned char>(lower[rare])])
      rare = j;
  const char small = lower[rare];
  const char upper = small >= 'a' && small <= 'z' ? static_cast<char>(small - ('a' - 'A')) : small;
  // The rare byte of a match starting at s is at s + rare, for s in [0, last_start].
  const std::size_t last = text.size() - lower.size() + rare;
  std::size_t next_lower = text.find(small, rare);
  std::size_t next_upper = upper == small ? std::string_view::npos : text.find(upper, rare);
  for (;;) {
    const std::size_t i = std::min(next_lower, next_upper);
    if (i > last) return false;  // npos included
    const std::size_t start = i - rare;
    std::size_t k = 0;
    while (k < lower.size() && ascii_lower(text[start + k]) == lower[k]) ++k;
    if (k == lower.size()) return true;
    if (i == next_lower) next_lower = text.find(small, i + 1);
    else next_upper = text.find(upper, i + 1);
  }
}

FoldedText::FoldedText(std::string_view text) {
  char* out = inline_.data();
  if (text.size() > kInlineBytes) {
    long_.resize(text.size());
    out = long_.data();
  }
  for (std::size_t i = 0; i < text.size(); ++i) out[i] = ascii_lower(text[i]);
  folded_ = std::string_view(out, text.size());
}

bool FoldedText::has_any(std::initializer_list<std::string_view> lower) const {
  for (std::string_view w : lower)
    if (has(w)) return true;
  return false;
}

std::uint32_t display_columns(std::string_view text) {
  // ASCII, eight bytes at a time: a byte a column.
  std::size_t i = 0;
  for (; i + 8 <= text.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, text.data() + i, 8);
    if (word & 0x8080808080808080u) break;
  }
  std::size_t n = i;
  for (; i < text.size(); ++i) n += (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
  return static_cast<std::uint32_t>(std::min<std::size_t>(n, UINT32_MAX));
}

std::string strip_ansi(std::string_view text) {
  const char* esc = static_cast<const char*>(std::memchr(text.data(), '\x1b', text.size()));
  if (esc == nullptr) return std::string(text);
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (esc != nullptr) {
    // The text up to the escape in one copy: a coloured line has a few
    // escapes between long runs of text.
    const auto e = static_cast<std::size_t>(esc - text.data());
    out.append(text.data() + i, e - i);
    i = e;
    if (i + 1 >= text.size()) return out;
    const char kind = text[i + 1];
    if (kind == '[') {  // CSI: parameters, then one final byte in 0x40..0x7e
      std::size_t j = i + 2;
      while (j < text.size() && !(text[j] >= 0x40 && text[j] <= 0x7e)) ++j;
      i = j + 1;
    } else if (kind == ']') {  // OSC: until BEL or ESC backslash
      std::size_t j = i + 2;
      while (j < text.size() && text[j] != '\x07' && !(text[j] == '\x1b' && j + 1 < text.size() && text[j + 1] == '\\')) ++j;
      i = (j < text.size() && text[j] == '\x1b') ? j + 2 : j + 1;
    } else {
      i += 2;  // two-byte escape such as ESC 7 / ESC =
    }
    if (i >= text.size()) return out;
    esc = static_cast<const char*>(std::memchr(text.data() + i, '\x1b', text.size() - i));
  }
  out.append(text.data() + i, text.size() - i);
  return out;
}

bool is_yearless(std::int64_t ms) { return ms < epoch_ms(kYearlessYear + 1, 1, 1, 0, 0, 0, 0); }

bool same_clock(std::int64_t a, std::int64_t b) { return is_yearless(a) == is_yearless(b); }

std::string format_time(std::int64_t ms) {
  // Civil from days (Howard Hinnant's algorithm), the inverse of epoch_ms.
  std::int64_t days = ms >= 0 ? ms / 86400000 : (ms - 86399999) / 86400000;
  std::int64_t rest = ms - days * 86400000;
  std::int64_t z = days + 719468;
  std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  std::int64_t doe = z - era * 146097;
  std::int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  std::int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  std::int64_t mp = (5 * doy + 2) / 153;
  int day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  int month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  std::int64_t year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  int h = static_cast<int>(rest / 3600000), m = static_cast<int>(rest / 60000 % 60), s = static_cast<int>(rest / 1000 % 60);
  int milli = static_cast<int>(rest % 1000);
  char buf[48];
  if (is_yearless(ms))
    std::snprintf(buf, sizeof buf, "--%02d-%02dT%02d:%02d:%02d.%03d", month, day, h, m, s, milli);
  else
    std::snprintf(buf, sizeof buf, "%04lld-%02d-%02dT%02d:%02d:%02d.%03d", static_cast<long long>(year), month, day, h,
                  m, s, milli);
  return buf;
}

LinePrefix read_prefix(std::string_view text) {
  LinePrefix p;
  std::size_t pos = 0;
  // Launchers and loggers stack prefixes: "[default0]:[rank0]:2026-... ",
  // "(VllmWorker rank=1 pid=4242) ERROR 03-01 12:00:00 [x.py:12] ".
  for (int round = 0; round < 6; ++round) {
    std::string_view rest = text.substr(pos);
    // A timestamp may follow a rank prefix after a space; plain text keeps its
    // leading spaces.
    std::size_t spaces = 0;
    while (spaces < rest.size() && rest[spaces] == ' ') ++spaces;
    std::int64_t ms = 0;
    int rank = 0;
    std::optional<int> tag_rank;
    std::uint64_t pid = 0;
    if (auto n = read_timestamp(rest.substr(spaces), ms)) {
      if (!p.time_ms) p.time_ms = ms;
      pos += spaces + *n;
    } else if (auto m = read_rank(rest, rank, pos == 0)) {
      if (!p.rank) p.rank = rank;
      pos += *m;
    } else if (auto w = read_worker_tag(rest, tag_rank, pid)) {
      if (!p.rank) p.rank = tag_rank;
      if (!p.pid) p.pid = pid;
      pos += *w;
    } else if (auto v = read_vllm_logger(rest, ms)) {
      if (!p.time_ms) p.time_ms = ms;
      pos += *v;
    } else if (auto d = read_deepspeed_rank(rest, rank)) {
      if (!p.rank) p.rank = rank;
      pos += *d;
    } else if (auto h = pos == 0 ? read_host_then_rank(rest, rank) : std::nullopt) {
      if (!p.rank) p.rank = rank;
      pos += *h;
    } else {
      break;
    }
  }
  p.length = pos;
  // Read, not removed: the parsers look at these themselves.
  std::string_view rest = text.substr(pos);
  if (!p.time_ms) p.time_ms = glog_time(rest);
  int device = 0;
  std::uint64_t pid = 0;
  if (read_nccl_prefix(rest, device, pid)) {
    p.device = device;
    if (!p.pid) p.pid = pid;
  }
  return p;
}

}  // namespace oomlens::analyzer
