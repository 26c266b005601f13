#include "analyzer/log/segmented_log.hpp"

#include <algorithm>
#include <cstring>
#include <future>
#include <iterator>
#include <optional>
#include <span>

#include "analyzer/log/scan.hpp"

namespace oomlens::analyzer {

// The text's '\n' line starts when the caller knows them (the editor's line
// index, collected while the text arrived): then counting lines and finding
// line starts are binary searches instead of passes over the bytes, which
// on a 100 MiB log would cost the second half tens of milliseconds before
// it could start.
struct TextLines {
  std::string_view text;
  std::span<const std::size_t> starts;  // empty, or 0 then the offset after each '\n'

  // '\n's at offsets before `at`.
  std::uint64_t newlines_before(std::uint64_t at) const {
    return static_cast<std::uint64_t>(std::upper_bound(starts.begin(), starts.end(), at) - starts.begin()) - 1;
  }

  std::uint64_t newlines_in(std::uint64_t begin, std::uint64_t end) const {
    if (!starts.empty()) return newlines_before(end) - newlines_before(begin);
    return count_newlines(text.substr(static_cast<std::size_t>(begin), static_cast<std::size_t>(end - begin)));
  }

  // The start of the line `at` is on.
  std::uint64_t line_start_at_or_before(std::uint64_t at) const {
    if (at == 0) return 0;
    if (!starts.empty()) return *(std::upper_bound(starts.begin(), starts.end(), at) - 1);
    std::size_t nl = text.rfind('\n', static_cast<std::size_t>(at - 1));
    return nl == std::string_view::npos ? 0 : nl + 1;
  }

  // The first line start at or after `at` (the text's end when none).
  std::uint64_t line_start_at_or_after(std::uint64_t at) const {
    if (at == 0) return 0;
    if (at >= text.size()) return text.size();
    if (!starts.empty()) {
      auto next = std::lower_bound(starts.begin(), starts.end(), at);
      return next == starts.end() ? text.size() : *next;
    }
    if (text[static_cast<std::size_t>(at - 1)] == '\n') return at;
    std::size_t nl = text.find('\n', static_cast<std::size_t>(at));
    return nl == std::string_view::npos ? text.size() : nl + 1;
  }
};

namespace {

std::uint64_t lines_of(std::string_view text, std::uint64_t newlines) {
  return newlines + (!text.empty() && text.back() != '\n' ? 1 : 0);
}

// Below this, a second thread costs more than it saves. Each half reads a
// margin past the cut, so a half must be well beyond a margin.
constexpr std::uint64_t kHalvesFrom = 8 * SegmentedLog::kMarginBytes;

// Where a long text is cut in two (a line start), or nothing when it is not
// worth it or the second half would be empty (no '\n' after the middle).
std::optional<std::uint64_t> halves_cut(const TextLines& lines) {
  const std::string_view text = lines.text;
  if (text.size() < kHalvesFrom) return std::nullopt;
  const std::uint64_t mid = lines.line_start_at_or_after(text.size() / 2);
  if (mid >= text.size()) return std::nullopt;
  return mid;
}

}  // namespace

LogEdit compose(const LogEdit& first, const LogEdit& then) {
  // In the middle text (after `first`), `first` changed [first.offset,
  // first_end); `then` changes [then.offset, then_end). The union of both,
  // mapped back through `first` for the original text.
  const std::uint64_t first_end = first.offset + first.inserted;
  const std::uint64_t then_end = then.offset + then.removed;
  const std::uint64_t begin = std::min(first.offset, then.offset);
  const std::uint64_t end = std::max(first_end, then_end);  // in the middle text
  LogEdit out;
  out.offset = begin;
  // Middle-text bytes outside first's insertion are original bytes, offset by
  // first's change of length.
  out.removed = (end - begin) - first.inserted + first.removed;
  out.inserted = (end - begin) - then.removed + then.inserted;
  return out;
}

LogEdit edit_between(std::string_view before, std::string_view after) {
  const std::size_t shorter = std::min(before.size(), after.size());
  std::size_t prefix = 0;
  // memcmp in blocks runs at memory speed; then byte by byte in the block that differs.
  constexpr std::size_t kBlock = 4096;
  while (prefix + kBlock <= shorter && std::memcmp(before.data() + prefix, after.data() + prefix, kBlock) == 0)
    prefix += kBlock;
  while (prefix < shorter && before[prefix] == after[prefix]) ++prefix;
  std::size_t suffix = 0;
  const std::size_t room = shorter - prefix;
  while (suffix + kBlock <= room &&
         std::memcmp(before.data() + before.size() - suffix - kBlock, after.data() + after.size() - suffix - kBlock,
                     kBlock) == 0)
    suffix += kBlock;
  while (suffix < room && before[before.size() - suffix - 1] == after[after.size() - suffix - 1]) ++suffix;
  return LogEdit{prefix, before.size() - prefix - suffix, after.size() - prefix - suffix};
}

SegmentedLog::SegmentedLog(std::string_view text, const std::atomic<bool>* stop,
                           const std::function<void(double)>& progress, std::span<const std::size_t> newline_starts)
    : bytes_(text.size()) {
  if (text.empty()) return;
  const TextLines lines{text, newline_starts};
  if (const std::optional<std::uint64_t> cut = halves_cut(lines)) {
    // The halves side by side. Only this thread reports progress: both
    // halves advance at about the same pace.
    auto second_half = std::async(std::launch::async, [&] {
      return analyse(lines, *cut, text.size(), 1 + lines.newlines_in(0, *cut), stop, {}, true);
    });
    segments_ = analyse(lines, 0, *cut, 1, stop, progress, true);
    std::vector<Segment> second = second_half.get();
    std::move(second.begin(), second.end(), std::back_inserter(segments_));
  } else {
    segments_ = analyse(lines, 0, text.size(), 1, stop, progress);
  }
  incomplete_ = stop && stop->load();
  const Segment& last = segments_.back();
  lines_ = lines_of(text, last.first_line - 1 + lines.newlines_in(last.begin, text.size()));
}

std::vector<SegmentedLog::Segment> SegmentedLog::analyse(const TextLines& lines, std::uint64_t begin,
                                                         std::uint64_t end, std::uint64_t first_line,
                                                         const std::atomic<bool>* stop,
                                                         const std::function<void(double)>& progress, bool half) const {
  const std::string_view text = lines.text;
  const std::uint64_t window_begin = lines.line_start_at_or_before(begin > kMarginBytes ? begin - kMarginBytes : 0);
  const std::uint64_t window_end = lines.line_start_at_or_after(std::min<std::uint64_t>(text.size(), end + kMarginBytes));
  const std::uint64_t base_line = first_line - lines.newlines_in(window_begin, begin);  // the line at window_begin

  // The segments to keep, and one on either side for the margins' results.
  std::vector<Segment> inner;
  std::uint64_t at = begin, line = first_line;
  while (at < end) {
    inner.push_back(Segment{at, line, {}});
    std::uint64_t next = lines.line_start_at_or_after(std::min(end, at + kSegmentBytes));
    if (next <= at || next > end) next = end;
    line += lines.newlines_in(at, next);
    at = next;
  }
  AnalyzerOptions options;
  // Read in halves, each half parses on its own thread, as the CLI's halves
  // do: a parse worker beside each would put four busy threads on two cores.
  if (half) options.parse_beside_from = UINT64_MAX;
  const bool margin_before = window_begin < begin;
  if (margin_before) options.segment_starts.push_back(0);
  for (const auto& s : inner) options.segment_starts.push_back(s.begin - window_begin);
  if (end < window_end) options.segment_starts.push_back(end - window_begin);

  LogAnalyzer analyzer(options);
  const std::uint64_t window = window_end - window_begin;
  analyzer.feed_contiguous(
      text.substr(window_begin, window), [](std::uint64_t, std::uint64_t) {},
      [&](std::uint64_t read) {
        if (stop && stop->load(std::memory_order_relaxed)) return false;
        if (progress && (read >> 20) % 16 == 15) progress(static_cast<double>(read) / static_cast<double>(window));
        return true;
      });
  std::vector<ParsedSegment> found = analyzer.finish_segments();
  const std::size_t first = margin_before ? 1 : 0;
  for (std::size_t k = 0; k < inner.size(); ++k) {
    inner[k].results = std::move(found[first + k]);
    shift(inner[k].results, static_cast<std::int64_t>(window_begin), static_cast<std::int64_t>(base_line) - 1);
  }
  return inner;
}

std::uint64_t SegmentedLog::apply(std::string_view text, const LogEdit& edit) {
  const std::uint64_t old_bytes = bytes_;
  bytes_ = text.size();
  const TextLines lines{text, {}};
  if (segments_.empty() || text.empty()) {
    *this = SegmentedLog(text);
    return text.size();
  }
  // Segments whose results may read the edited bytes: within the margin of it.
  const std::uint64_t edit_end = edit.offset + edit.removed;
  auto end_of = [&](std::size_t k) { return k + 1 < segments_.size() ? segments_[k + 1].begin : old_bytes; };
  std::size_t i = segments_.size(), j = 0;
  for (std::size_t k = 0; k < segments_.size(); ++k) {
    const std::uint64_t lo = segments_[k].begin > kMarginBytes ? segments_[k].begin - kMarginBytes : 0;
    const std::uint64_t hi = end_of(k) + kMarginBytes;
    if (lo <= edit_end && hi >= edit.offset) {
      i = std::min(i, k);
      j = k;
    }
  }
  if (i == segments_.size()) {  // past the end (cannot happen for an edit inside the text): start over
    *this = SegmentedLog(text);
    return text.size();
  }
  // The affected run starts at or before the edit, so its start and first
  // line are unchanged; it ends at the next segment's start, moved by the
  // edit, which is at least a margin past the edit and so still a line start.
  const std::int64_t delta = static_cast<std::int64_t>(edit.inserted) - static_cast<std::int64_t>(edit.removed);
  const bool last = j + 1 == segments_.size();
  const std::uint64_t begin = segments_[i].begin, first_line = segments_[i].first_line;
  const std::uint64_t end = last ? text.size() : static_cast<std::uint64_t>(static_cast<std::int64_t>(end_of(j)) + delta);
  std::vector<Segment> fresh = analyse(lines, begin, end, first_line);

  const std::uint64_t line_at_end = first_line + lines.newlines_in(begin, end);
  std::vector<Segment> after(std::make_move_iterator(segments_.begin() + static_cast<std::ptrdiff_t>(j + 1)),
                             std::make_move_iterator(segments_.end()));
  if (!after.empty()) {
    const std::int64_t line_delta = static_cast<std::int64_t>(line_at_end) - static_cast<std::int64_t>(after.front().first_line);
    for (auto& s : after) {
      s.begin = static_cast<std::uint64_t>(static_cast<std::int64_t>(s.begin) + delta);
      s.first_line = static_cast<std::uint64_t>(static_cast<std::int64_t>(s.first_line) + line_delta);
      shift(s.results, delta, line_delta);
    }
    lines_ = static_cast<std::uint64_t>(static_cast<std::int64_t>(lines_) + line_delta);
    // The text's last line may have gained or lost its '\n' only if the edit reached the end; it did not.
  } else {
    lines_ = lines_of(text, line_at_end - 1);
  }
  segments_.erase(segments_.begin() + static_cast<std::ptrdiff_t>(i), segments_.end());
  std::move(fresh.begin(), fresh.end(), std::back_inserter(segments_));
  std::move(after.begin(), after.end(), std::back_inserter(segments_));

  const std::uint64_t read_begin = begin > kMarginBytes ? begin - kMarginBytes : 0;
  return std::min<std::uint64_t>(text.size(), end + kMarginBytes) - read_begin;
}

ParsedLog SegmentedLog::parsed() const {
  std::vector<ParsedSegment> copies;
  copies.reserve(segments_.size());
  for (const auto& s : segments_) copies.push_back(s.results);
  return merge_segments(std::move(copies), bytes_, lines_);
}

}  // namespace oomlens::analyzer
