#include "analyzer/log/parse/common.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>

#include "analyzer/size.hpp"

namespace oomlens::analyzer::parse {
namespace {

// The C10 suffix is at most 4 lines; slack for "Exception raised from".
constexpr std::size_t kC10SuffixLines = 6;

bool starts_new_record(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  std::string_view s = t.substr(i);
  return s.empty() || s.starts_with("Traceback (most recent call last)") || s.starts_with("File \"") ||
         s.starts_with("During handling of the above exception") ||
         s.starts_with("The above exception was the direct cause");
}

// Events and findings name the anchor line the same way.
template <typename Record>
void place_at(const Line& line, Record& record) {
  record.line = line.number;
  record.offset = line.offset;
  record.rank = line.rank;
  record.time_ms = line.time_ms;
}

template <typename Int>
std::optional<Int> exact_integer(std::string_view digits) {
  Int value{};
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || ptr != digits.data() + digits.size()) return std::nullopt;
  return value;
}

}  // namespace

std::string capped(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, max_bytes)) + "…";
}

std::string exception_before(std::string_view line, std::size_t needle_pos) {
  std::string_view before = line.substr(0, needle_pos);
  while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
  if (before.empty() || before.back() != ':') return {};
  before.remove_suffix(1);
  std::size_t start = before.size();
  while (start > 0) {
    char c = before[start - 1];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') --start;
    else break;
  }
  std::string_view name = before.substr(start);
  // An exception type names a class: its last dotted part is capitalised.
  auto dot = name.rfind('.');
  std::string_view cls = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (cls.empty() || !std::isupper(static_cast<unsigned char>(cls[0]))) return {};
  return std::string(name);
}

std::optional<std::uint64_t> exact_u64(std::string_view digits) { return exact_integer<std::uint64_t>(digits); }

std::optional<int> exact_int(std::string_view digits) { return exact_integer<int>(digits); }

bool is_word_byte(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

bool is_digit_byte(char c) { return c >= '0' && c <= '9'; }

std::optional<std::string_view> value_after(std::string_view text, std::string_view key, bool (*value)(char),
                                            std::string_view then) {
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const std::size_t begin = at + key.size();
    std::size_t end = begin;
    while (end < text.size() && value(text[end])) ++end;
    // The run is taken whole (greedy): what follows it must be `then`. A
    // shorter run would end before a value byte, which `then` never starts with.
    if (end > begin && text.substr(end).starts_with(then)) return text.substr(begin, end - begin);
  }
  return std::nullopt;
}

std::string sized(std::string_view before, std::string_view after) {
  std::string pattern(before);
  pattern += kSizePattern;
  pattern += after;
  return pattern;
}

std::optional<std::uint64_t> size_of(std::string_view text, const RE2& re) {
  re2::StringPiece size;
  if (!RE2::PartialMatch(text, re, &size)) return std::nullopt;
  return parse_size(view(size));
}

std::optional<std::uint64_t> size_at_literal(std::string_view text, std::string_view literal, const RE2& anchored) {
  re2::StringPiece size;
  if (!match_at_literal(text, literal, anchored, &size)) return std::nullopt;
  return parse_size(view(size));
}

OomEvent event_at(const Line& line, OomFamily family) {
  OomEvent ev;
  place_at(line, ev);
  ev.family = family;
  ev.end_line = line.last_number();
  return ev;
}

LogFinding finding_at(const Line& line, FindingKind kind, std::string detail, std::optional<std::uint64_t> bytes) {
  LogFinding f;
  place_at(line, f);
  f.kind = kind;
  f.text = capped(line.text);
  f.detail = std::move(detail);
  f.bytes = bytes;
  return f;
}

std::size_t append_event(const Region& region, std::size_t last, OomEvent ev, Parsed& out) {
  ev.end_line = region.lines[last].last_number();
  out.ooms.push_back(std::move(ev));
  return last;
}

std::optional<std::size_t> next_line_of(const Region& region, std::size_t i, const std::optional<int>& rank) {
  for (std::size_t j = i + 1; j < region.lines.size(); ++j) {
    if (region.lines[j].rank == rank) return j;
    if (std::binary_search(region.anchors.begin(), region.anchors.end(), j)) return std::nullopt;
  }
  return std::nullopt;
}

std::string joined_message(const Region& region, std::size_t at, std::size_t max_lines,
                           const std::function<bool(std::string_view)>& complete, std::size_t* last) {
  std::string text = region.lines[at].text;
  std::size_t end = at;
  const auto& rank = region.lines[at].rank;
  for (std::size_t i = at + 1; i < region.lines.size() && i - at < max_lines; ++i) {
    if (complete(text)) break;
    const Line& next = region.lines[i];
    if (next.rank != rank) continue;  // other ranks' lines interleave; skip them
    // A line with a timestamp of its own was logged on its own: wrapped
    // pieces and a message's continuation lines never carry one.
    if (starts_new_record(next.text) || next.time_ms) break;
    text += next.text;
    end = i;
  }
  if (last) *last = end;
  return text;
}

namespace {

// What the prefix pattern needs, read without it: nothing in the pattern
// before its "]" matches a ']', so a prefix ends at the text's first ']',
// right after ".cc:N", ".h:N" or ".cpp:N". Most lines handed to
// strip_log_prefix have no prefix and fail here without a search.
bool may_have_log_prefix(std::string_view text) {
  const std::size_t close = text.find(']');
  if (close == std::string_view::npos) return false;
  std::size_t digits = close;
  while (digits > 0 && is_digit_byte(text[digits - 1])) --digits;
  if (digits == close || digits == 0 || text[digits - 1] != ':') return false;
  const std::string_view source = text.substr(0, digits - 1);
  return source.ends_with(".cc") || source.ends_with(".h") || source.ends_with(".cpp");
}

}  // namespace

bool strip_log_prefix(std::string_view& text, std::string_view* file) {
  if (!may_have_log_prefix(text)) return false;
  static const RE2 prefix(R"(^[^\]]{0,48}?\b[IWEF](?:\d{4}\s+[0-9:.]+\s+\d+)?\s+([\w./-]+\.(?:cc|h|cpp)):\d+\]\s?)",
                          RE2::Latin1);
  re2::StringPiece rest(text), source;
  if (!RE2::Consume(&rest, prefix, &source)) return false;
  text = view(rest);
  if (file) *file = view(source);
  return true;
}

bool is_c10_suffix(std::string_view text) {
  // The lines of PyTorch's C10_CUDA_CHECK suffix, read as the pattern
  //   ^\s*(?:Search for `\w+' in https?://|(?:CUDA|HIP) kernel errors might be asynchronously reported
  //        |For debugging consider passing (?:CUDA_LAUNCH_BLOCKING|AMD_SERIALIZE_KERNEL)=
  //        |Compile with `TORCH_USE_(?:CUDA|HIP)_DSA`)
  // reads the line's head, without its call: on a look-alike log every
  // illegal access or device-side assert is followed by three of these, and
  // the pattern took 2% of the run (tests/analyzer/field_reader_test.cpp
  // holds the two against each other).
  static constexpr std::array<std::string_view, 6> kWhole = {
      "CUDA kernel errors might be asynchronously reported", "HIP kernel errors might be asynchronously reported",
      "For debugging consider passing CUDA_LAUNCH_BLOCKING=", "For debugging consider passing AMD_SERIALIZE_KERNEL=",
      "Compile with `TORCH_USE_CUDA_DSA`",                   "Compile with `TORCH_USE_HIP_DSA`"};
  static constexpr std::string_view kSearch = "Search for `";
  std::string_view line = head(text);
  const std::size_t first = line.find_first_not_of(" \t\n\f\r");  // RE2's \s
  if (first == std::string_view::npos) return false;
  line.remove_prefix(first);
  if (std::any_of(kWhole.begin(), kWhole.end(), [&](std::string_view w) { return line.starts_with(w); })) return true;
  if (!line.starts_with(kSearch)) return false;
  std::size_t name_end = kSearch.size();
  while (name_end < line.size() && is_word_byte(line[name_end])) ++name_end;
  if (name_end == kSearch.size()) return false;
  line.remove_prefix(name_end);
  return line.starts_with("' in http://") || line.starts_with("' in https://");
}

std::size_t c10_suffix_end(const Region& region, std::size_t at) {
  std::size_t last = at;
  for (std::size_t n = 0; n < kC10SuffixLines; ++n) {
    auto next = next_line_of(region, last, region.lines[at].rank);
    if (!next || !is_c10_suffix(region.lines[*next].text)) break;
    last = *next;
  }
  return last;
}

}  // namespace oomlens::analyzer::parse
