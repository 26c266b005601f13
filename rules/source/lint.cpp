#include "rules/source/lint.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace oomlens::rules {

std::vector<SourceDiagnostic> lint_script(const analyzer::python::Script& script) {
  std::vector<SourceDiagnostic> out;
  for (const auto& rule : source_rules()) rule.check(script, out);
  if (script.has_errors())
    for (auto& d : out) {
      d.edits.clear();
      d.fix_safety.reset();
    }
  std::stable_sort(out.begin(), out.end(),
                   [](const SourceDiagnostic& a, const SourceDiagnostic& b) { return a.range.begin < b.range.begin; });
  return out;
}

std::vector<TextEdit> fix_edits(const std::vector<SourceDiagnostic>& diagnostics, bool unsafe) {
  std::vector<TextEdit> edits;
  std::vector<std::pair<std::size_t, std::size_t>> taken;
  for (const auto& d : diagnostics) {
    if (!d.fix_safety || d.edits.empty()) continue;
    if (*d.fix_safety == FixSafety::display_only) continue;
    if (*d.fix_safety == FixSafety::unsafe && !unsafe) continue;
    bool overlaps = false;
    for (const auto& e : d.edits)
      for (const auto& [b, en] : taken)
        if (e.begin < en && b < e.end) overlaps = true;
    if (overlaps) continue;  // a later run picks it up
    for (const auto& e : d.edits) {
      taken.emplace_back(e.begin, e.end);
      edits.push_back(e);
    }
  }
  std::sort(edits.begin(), edits.end(), [](const TextEdit& a, const TextEdit& b) { return a.begin < b.begin; });
  return edits;
}

std::string apply_edits(std::string_view source, const std::vector<TextEdit>& edits) {
  std::string out;
  out.reserve(source.size());
  std::size_t at = 0;
  for (const auto& e : edits) {
    out.append(source.substr(at, e.begin - at));
    out.append(e.replacement);
    at = e.end;
  }
  out.append(source.substr(at));
  return out;
}

namespace {

std::size_t line_begin(std::string_view s, std::size_t at) {
  while (at > 0 && s[at - 1] != '\n') --at;
  return at;
}
std::size_t line_after(std::string_view s, std::size_t at) {  // past the newline, or the end
  auto nl = s.find('\n', at);
  return nl == std::string_view::npos ? s.size() : nl + 1;
}
std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t end = line_after(s, at);
    lines.push_back(s.substr(at, end - at));
    at = end;
  }
  return lines;
}
std::size_t count_lines(std::string_view s, std::size_t begin) {  // 0-based line index of byte
  return static_cast<std::size_t>(std::count(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(begin), '\n'));
}

struct Segment {
  std::size_t old_first = 0;  // 0-based line
  std::vector<std::string_view> old_lines;
  std::string new_text;
};

}  // namespace

std::string unified_diff(std::string_view path, std::string_view source, const std::vector<TextEdit>& edits) {
  if (edits.empty()) return {};
  // Line-aligned segments: [S, E) covering each run of edits.
  struct Span {
    std::size_t S, E;
    std::vector<const TextEdit*> edits;
  };
  std::vector<Span> spans;
  for (const auto& e : edits) {
    std::size_t S = line_begin(source, e.begin);
    std::size_t E = (e.end > S && e.end > e.begin && source[e.end - 1] == '\n') ? e.end : line_after(source, e.end);
    if (!spans.empty() && S < spans.back().E) {
      spans.back().E = std::max(spans.back().E, E);
      spans.back().edits.push_back(&e);
    } else {
      spans.push_back({S, E, {&e}});
    }
  }
  std::vector<std::string> new_texts;
  std::vector<std::vector<std::string_view>> old_lines;
  std::vector<std::size_t> first_line;
  for (const auto& sp : spans) {
    std::string t;
    std::size_t at = sp.S;
    for (const TextEdit* e : sp.edits) {
      t.append(source.substr(at, e->begin - at));
      t.append(e->replacement);
      at = e->end;
    }
    t.append(source.substr(at, sp.E - at));
    new_texts.push_back(std::move(t));
    old_lines.push_back(split_lines(source.substr(sp.S, sp.E - sp.S)));
    first_line.push_back(count_lines(source, sp.S));
  }
  auto all_old = split_lines(source);
  constexpr std::size_t kContext = 3;
  std::string out = fmt::format("--- {}\n+++ {}\n", path, path);
  auto emit_line = [&out](char tag, std::string_view line) {
    out += tag;
    out.append(line);
    if (line.empty() || line.back() != '\n') out += "\n\\ No newline at end of file\n";
  };
  long delta = 0;  // new line number minus old, before the current hunk
  std::size_t i = 0;
  while (i < spans.size()) {
    std::size_t j = i;  // spans i..j form one hunk
    while (j + 1 < spans.size() && first_line[j + 1] <= first_line[j] + old_lines[j].size() + 2 * kContext) ++j;
    std::size_t begin = first_line[i] >= kContext ? first_line[i] - kContext : 0;
    std::size_t end = std::min(all_old.size(), first_line[j] + old_lines[j].size() + kContext);
    std::string body;
    std::size_t old_count = 0, new_count = 0;
    std::string saved;
    saved.swap(out);
    std::size_t line = begin;
    long hunk_delta = 0;
    for (std::size_t k = i; k <= j; ++k) {
      for (; line < first_line[k]; ++line, ++old_count, ++new_count) emit_line(' ', all_old[line]);
      for (auto l : old_lines[k]) emit_line('-', l), ++old_count;
      auto nl = split_lines(new_texts[k]);
      for (auto l : nl) emit_line('+', l), ++new_count;
      hunk_delta += static_cast<long>(nl.size()) - static_cast<long>(old_lines[k].size());
      line = first_line[k] + old_lines[k].size();
    }
    for (; line < end; ++line, ++old_count, ++new_count) emit_line(' ', all_old[line]);
    body.swap(out);
    out.swap(saved);
    std::size_t old_start = old_count ? begin + 1 : begin;
    long new_start_l = static_cast<long>(begin) + delta + (new_count ? 1 : 0);
    out += fmt::format("@@ -{},{} +{},{} @@\n", old_start, old_count, new_start_l, new_count);
    out += body;
    delta += hunk_delta;
    i = j + 1;
  }
  return out;
}

}  // namespace oomlens::rules
