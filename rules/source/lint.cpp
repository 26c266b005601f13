#include "rules/source/lint.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace oomlens::rules {

namespace {

std::uint32_t begin_of(const Diagnosis& d) { return d.location.source ? d.location.source->range.begin : 0; }

}  // namespace

void sort_in_source_order(std::vector<Diagnosis>& diagnostics) {
  std::stable_sort(diagnostics.begin(), diagnostics.end(),
                   [](const Diagnosis& a, const Diagnosis& b) { return begin_of(a) < begin_of(b); });
}

std::vector<Diagnosis> lint_script(const analyzer::python::Script& script, const source::ProjectContext& project) {
  std::vector<Diagnosis> out;
  for (const auto& rule : source_rules()) rule.check(script, project, out);
  if (script.has_errors())
    for (auto& d : out)
      for (auto& f : d.fixes) f.edits.clear();
  sort_in_source_order(out);
  return out;
}

std::vector<TextEdit> fix_edits(const std::vector<Diagnosis>& diagnostics, bool unsafe) {
  std::vector<TextEdit> edits;
  std::vector<std::pair<std::size_t, std::size_t>> taken;
  for (const auto& d : diagnostics) {
    const Fix* fix = d.automatic_fix();
    if (!fix || fix->safety == FixSafety::display_only) continue;
    if (fix->safety == FixSafety::unsafe && !unsafe) continue;
    bool overlaps = false;
    for (const auto& e : fix->edits)
      for (const auto& [b, en] : taken)
        if (e.begin < en && b < e.end) overlaps = true;
    if (overlaps) continue;  // a later run picks it up
    for (const auto& e : fix->edits) {
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

std::vector<TextEdit> line_edits(std::string_view before, std::string_view after) {
  auto a = split_lines(before), b = split_lines(after);
  const long n = static_cast<long>(a.size()), m = static_cast<long>(b.size());
  const long max = n + m;
  // Myers: v[k] = furthest x on diagonal k; one copy of v per d to trace back.
  std::vector<std::vector<long>> trace;
  std::vector<long> v(static_cast<std::size_t>(2 * max + 2), 0);
  auto at = [&](std::vector<long>& vec, long k) -> long& { return vec[static_cast<std::size_t>(k + max + 1)]; };
  long found_d = -1;
  for (long d = 0; d <= max && found_d < 0; ++d) {
    for (long k = -d; k <= d; k += 2) {
      long x = (k == -d || (k != d && at(v, k - 1) < at(v, k + 1))) ? at(v, k + 1) : at(v, k - 1) + 1;
      long y = x - k;
      while (x < n && y < m && a[static_cast<std::size_t>(x)] == b[static_cast<std::size_t>(y)]) ++x, ++y;
      at(v, k) = x;
      if (x >= n && y >= m) {
        found_d = d;
        break;
      }
    }
    trace.push_back(v);
  }
  // Walk back, collecting runs of deleted (old) and inserted (new) lines.
  struct Op { long x0, x1, y0, y1; };
  std::vector<Op> ops;
  long x = n, y = m;
  for (long d = found_d; d > 0; --d) {
    std::vector<long>& prev = trace[static_cast<std::size_t>(d - 1)];
    long k = x - y;
    long prev_k = (k == -d || (k != d && at(prev, k - 1) < at(prev, k + 1))) ? k + 1 : k - 1;
    long prev_x = at(prev, prev_k), prev_y = prev_x - prev_k;
    while (x > prev_x && y > prev_y) --x, --y;  // the snake
    // One step: an insertion (x unchanged) or a deletion.
    if (x == prev_x) ops.push_back({x, x, prev_y, y});
    else ops.push_back({prev_x, x, y, y});
    x = prev_x, y = prev_y;
  }
  std::reverse(ops.begin(), ops.end());
  // Line starts in bytes, to turn line ops into byte edits; merge adjacent ops.
  auto starts = [](const std::vector<std::string_view>& lines, std::string_view text) {
    std::vector<std::size_t> s;
    for (auto l : lines) s.push_back(static_cast<std::size_t>(l.data() - text.data()));
    s.push_back(text.size());
    return s;
  };
  auto sa = starts(a, before), sb = starts(b, after);
  std::vector<TextEdit> edits;
  std::vector<Op> merged;
  for (const auto& op : ops) {
    if (!merged.empty() && merged.back().x1 == op.x0 && merged.back().y1 == op.y0) {
      merged.back().x1 = op.x1;
      merged.back().y1 = op.y1;
    } else {
      merged.push_back(op);
    }
  }
  for (const auto& op : merged)
    edits.push_back({sa[static_cast<std::size_t>(op.x0)], sa[static_cast<std::size_t>(op.x1)],
                     std::string(after.substr(sb[static_cast<std::size_t>(op.y0)],
                                              sb[static_cast<std::size_t>(op.y1)] - sb[static_cast<std::size_t>(op.y0)]))});
  return edits;
}

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
    if (e.begin == e.end && e.begin == S) E = S;  // a pure insertion of whole lines changes no old line
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
