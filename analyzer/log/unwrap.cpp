#include "analyzer/log/unwrap.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <string_view>
#include <vector>

namespace oomlens::analyzer {
namespace {

constexpr std::uint32_t kMinWrapWidth = 40;

// Whether each line is all of its physical line ('\r' redraws split one
// physical line into several Lines with the same number; a redraw whose
// first segment was empty leaves one Line, marked redrawn).
std::vector<bool> whole_lines(const Region& region) {
  std::vector<bool> whole(region.lines.size(), true);
  for (std::size_t i = 0; i < region.lines.size(); ++i)
    if (region.lines[i].redrawn) whole[i] = false;
  for (std::size_t i = 1; i < region.lines.size(); ++i)
    if (region.lines[i].number == region.lines[i - 1].number) whole[i] = whole[i - 1] = false;
  return whole;
}


// The width a terminal wrapped at, from the whole physical lines: a width of
// at least 40 reached by two lines in a row (the middle of a long wrapped
// line) or by at least three lines (two, for the widths terminals and `fold`
// default to), and exceeded by fewer lines than reach it
// (a capture may mix in a few unwrapped lines). Of such widths, the one most
// lines reach. Two lines that happen to be equally long, far apart, are no
// evidence. 0 when there is none.
std::uint32_t wrap_width(const Region& region, const std::vector<bool>& whole, std::uint32_t Line::*width) {
  // Each line's width (only widths >= kMinWrapWidth) and whether the next
  // line has it too, sorted widest first: a sort of one buffer per region
  // instead of a tree node per width, for every region of a long log.
  struct Width {
    std::uint32_t width;
    bool in_a_row;
  };
  std::vector<Width> widths;
  widths.reserve(region.lines.size());
  for (std::size_t i = 0; i < region.lines.size(); ++i) {
    const std::uint32_t w = region.lines[i].*width;
    if (!whole[i] || w < kMinWrapWidth) continue;
    widths.push_back({w, i + 1 < region.lines.size() && whole[i + 1] && region.lines[i + 1].*width == w &&
                             region.lines[i + 1].number == region.lines[i].number + 1});
  }
  std::sort(widths.begin(), widths.end(), [](const Width& a, const Width& b) { return a.width > b.width; });
  std::uint32_t best = 0;
  std::size_t best_count = 0, wider = 0;
  for (std::size_t k = 0; k < widths.size();) {
    const std::uint32_t w = widths[k].width;
    std::size_t count = 0;
    bool in_a_row = false;
    for (; k < widths.size() && widths[k].width == w; ++k, ++count) in_a_row = in_a_row || widths[k].in_a_row;
    const bool common = w == 80 || w == 100 || w == 120 || w == 132 || w == 160;
    if ((count >= (common ? 2u : 3u) || in_a_row) && count > wider && count > best_count) {
      best = w;
      best_count = count;
    }
    wider += count;
  }
  return best;
}

bool is_identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// "RuntimeError: ...", "torch.OutOfMemoryError: ...", "jaxlib...XlaRuntimeError: ..."
bool starts_with_exception(std::string_view t) {
  std::size_t i = 0;
  while (i < t.size() && is_identifier_char(t[i])) ++i;
  if (i == 0 || i >= t.size() || t[i] != ':') return false;
  std::string_view name = t.substr(0, i);
  for (std::string_view tail : {"Error", "Exception", "Warning", "Interrupt", "Exit"})
    if (name.ends_with(tail)) return true;
  return false;
}

// A line that begins something of its own, never the rest of a wrapped one.
bool starts_record(const Line& line) {
  if (line.rank || line.time_ms) return true;  // a launcher prefix or a timestamp was read off it
  std::string_view t = line.text;
  if (t.empty()) return true;
  if (t.starts_with("    ")) return true;  // a traceback's source or caret line
  if (t.front() == '|' || t.front() == '+') return true;  // a table's row or border (memory_summary, nvidia-smi)
  for (std::string_view start : {"Traceback (most recent call last)", "  File \"", "During handling of the above",
                                 "The above exception was the direct cause"})
    if (t.starts_with(start)) return true;
  return starts_with_exception(t);
}

}  // namespace

void join_hard_wraps(Region& region) {
  const std::vector<bool> whole = whole_lines(region);
  const std::uint32_t by_columns = wrap_width(region, whole, &Line::columns);
  // Where every line is as many bytes as columns (ASCII), both widths agree.
  const bool ascii = std::all_of(region.lines.begin(), region.lines.end(),
                                 [](const Line& line) { return line.columns == line.bytes; });
  const std::uint32_t by_bytes = ascii ? by_columns : wrap_width(region, whole, &Line::bytes);
  if (!by_columns && !by_bytes) return;
  auto full = [&](const Line& line) {
    return (by_columns && line.columns == by_columns) || (by_bytes && line.bytes == by_bytes);
  };
  // Whether line i continues line i - 1, as long as nothing before it joined.
  auto continues_previous = [&](std::size_t i) {
    const Line& last = region.lines[i - 1];
    return whole[i] && whole[i - 1] && full(last) && !last.text.ends_with('|') &&
           region.lines[i].number == last.last_number() + 1 && !starts_record(region.lines[i]);
  };
  // Most regions have a width but no wrapped line: leave their lines where
  // they are rather than moving each into a new vector.
  std::size_t first_join = 1;
  while (first_join < region.lines.size() && !continues_previous(first_join)) ++first_join;
  if (first_join >= region.lines.size()) return;

  std::vector<Line> joined;
  std::vector<std::size_t> index_of(region.lines.size());  // old line index -> joined index
  joined.reserve(region.lines.size());
  for (std::size_t i = 0; i < region.lines.size(); ++i) {
    Line& line = region.lines[i];
    bool continues = false;
    // A full-width line that closes a table row ("...|") is complete.
    if (!joined.empty() && whole[i] && i > 0 && whole[i - 1] && full(region.lines[i - 1]) &&
        !joined.back().text.ends_with('|')) {
      const Line& last = joined.back();
      continues = line.number == last.last_number() + 1 && !starts_record(line);
    }
    if (continues) {
      Line& into = joined.back();
      into.text += line.text;
      into.end_number = line.number;
    } else {
      joined.push_back(std::move(line));
    }
    index_of[i] = joined.size() - 1;
  }
  if (joined.size() == region.lines.size()) {
    region.lines = std::move(joined);
    return;
  }
  std::vector<std::size_t> anchors;
  std::vector<std::uint64_t> literals;
  for (std::size_t k = 0; k < region.anchors.size(); ++k) {
    const std::size_t at = index_of[region.anchors[k]];
    const std::uint64_t mask = k < region.anchor_literals.size() ? region.anchor_literals[k] : 0;
    if (!anchors.empty() && anchors.back() == at) {
      if (!literals.empty()) literals.back() |= mask;
      continue;
    }
    anchors.push_back(at);
    if (k < region.anchor_literals.size()) literals.push_back(mask);
  }
  region.lines = std::move(joined);
  region.anchors = std::move(anchors);
  region.anchor_literals = std::move(literals);
}

}  // namespace oomlens::analyzer
