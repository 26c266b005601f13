#include "analyzer/log/traceback.hpp"

#include <array>
#include <charconv>

namespace oomlens::analyzer {
namespace {

// `  File "/path/x.py", line 42, in train_step`
std::optional<Frame> parse_frame(std::string_view t) {
  std::size_t i = t.find_first_not_of(" \t");
  if (i == std::string_view::npos || t.substr(i, 6) != "File \"") return std::nullopt;
  i += 6;
  std::size_t q = t.find("\", line ", i);
  if (q == std::string_view::npos) return std::nullopt;
  Frame f;
  f.file = std::string(t.substr(i, q - i));
  std::size_t n = q + 8;
  std::size_t e = n;
  while (e < t.size() && t[e] >= '0' && t[e] <= '9') ++e;
  if (e == n || std::from_chars(t.data() + n, t.data() + e, f.line).ec != std::errc()) return std::nullopt;
  std::string_view rest = t.substr(e);
  if (rest.starts_with(", in ")) f.function = std::string(rest.substr(5));
  while (!f.function.empty() && (f.function.back() == ' ' || f.function.back() == '\t')) f.function.pop_back();
  return f;
}

bool is_traceback_header(std::string_view t) {
  return t.find("Traceback (most recent call last):") != std::string_view::npos;
}

// Source lines, caret markers and "[Previous line repeated N more times]"
// sit between frames; all are indented.
bool is_frame_filler(std::string_view t) {
  return t.starts_with("    ") || t.starts_with("\t") || t.find("Previous line repeated") != std::string_view::npos;
}

}  // namespace

std::vector<Frame> traceback_before(const Region& region, std::size_t at, bool* reached_start) {
  std::vector<Frame> reversed;
  const auto& rank = region.lines[at].rank;
  constexpr std::size_t kMaxWalk = 4000;
  if (reached_start) *reached_start = false;
  std::size_t k = at, walked = 0;
  for (; k-- > 0 && walked < kMaxWalk; ++walked) {
    const Line& line = region.lines[k];
    if (line.rank != rank) continue;  // other ranks interleave their own output
    if (auto f = parse_frame(line.text)) {
      reversed.push_back(std::move(*f));
    } else if (is_traceback_header(line.text)) {
      return {reversed.rbegin(), reversed.rend()};
    } else if (line.number == region.lines[at].number) {
      continue;  // an earlier '\r' segment of the error's own raw line (a progress bar)
    } else if (!is_frame_filler(line.text)) {
      if (reversed.empty()) return {};
      return {reversed.rbegin(), reversed.rend()};
    }
  }
  // Ran out of lines while the traceback (or the other ranks' lines between
  // it and the error) went on: the region began too late.
  if (reached_start && k == static_cast<std::size_t>(-1)) *reached_start = true;
  return {reversed.rbegin(), reversed.rend()};
}

std::optional<Frame> user_frame(const std::vector<Frame>& frames) {
  for (auto it = frames.rbegin(); it != frames.rend(); ++it)
    if (!is_library_file(it->file)) return *it;
  return std::nullopt;
}

std::optional<Frame> entry_frame(const std::vector<Frame>& frames) {
  for (const auto& f : frames)
    if (!is_library_file(f.file)) return f;
  return std::nullopt;
}

}  // namespace oomlens::analyzer
