#include "analyzer/parse/common.hpp"

#include <cctype>

namespace oomlens::analyzer::parse {
namespace {

bool starts_new_record(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t')) ++i;
  std::string_view s = t.substr(i);
  return s.empty() || s.starts_with("Traceback (most recent call last)") || s.starts_with("File \"") ||
         s.starts_with("During handling of the above exception") ||
         s.starts_with("The above exception was the direct cause");
}

}  // namespace

std::string joined_message(const Region& region, std::size_t at, std::size_t max_lines,
                           const std::function<bool(std::string_view)>& complete, std::size_t* last) {
  std::string text = region.lines[at].text;
  std::size_t end = at;
  const auto& rank = region.lines[at].rank;
  for (std::size_t i = at + 1; i < region.lines.size() && i - at < max_lines; ++i) {
    if (complete(text)) break;
    const Line& next = region.lines[i];
    if (next.rank != rank) continue;  // other ranks' lines interleave; skip them
    if (starts_new_record(next.text)) break;
    text += next.text;
    end = i;
  }
  if (last) *last = end;
  return text;
}

std::string exception_before(std::string_view line, std::size_t needle_pos) {
  std::string_view head = line.substr(0, needle_pos);
  while (!head.empty() && head.back() == ' ') head.remove_suffix(1);
  if (head.empty() || head.back() != ':') return {};
  head.remove_suffix(1);
  std::size_t start = head.size();
  while (start > 0) {
    char c = head[start - 1];
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.') --start;
    else break;
  }
  std::string_view name = head.substr(start);
  // An exception type names a class: its last dotted part is capitalised.
  auto dot = name.rfind('.');
  std::string_view cls = dot == std::string_view::npos ? name : name.substr(dot + 1);
  if (cls.empty() || !std::isupper(static_cast<unsigned char>(cls[0]))) return {};
  return std::string(name);
}

std::string capped(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return std::string(text);
  return std::string(text.substr(0, max_bytes)) + "…";
}

}  // namespace oomlens::analyzer::parse
