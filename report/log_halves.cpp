#include "report/log_halves.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <future>
#include <vector>

#include "analyzer/log/scan.hpp"
#include "analyzer/log/segmented_log.hpp"
#include "report/line_start.hpp"
#include "report/mapped_range.hpp"

namespace oomlens::report {
namespace {

using analyzer::SegmentedLog;

// The language server's margin and threshold: a half reads this far past
// the cut, and below eight margins a second thread costs more than it saves.
constexpr std::uint64_t kMargin = SegmentedLog::kMarginBytes;
constexpr std::uint64_t kHalvesFrom = 8 * kMargin;

// One half: the bytes from `begin` on, up to the first line start after
// `until` (to the end of the file when there is none), through an analyzer
// whose segments start at `segment_starts` (offsets from `begin`).
struct Half {
  std::uint64_t begin = 0;
  std::uint64_t until = UINT64_MAX;
  std::uint64_t count_from = 0, count_to = 0;  // '\n' in [count_from, count_to) are counted
  std::vector<std::uint64_t> segment_starts;

  // What it read.
  std::vector<analyzer::ParsedSegment> segments;
  std::uint64_t end = 0;       // offset after the last byte read
  std::uint64_t newlines = 0;  // in the whole half
  std::uint64_t counted = 0;   // in [count_from, count_to)
  bool ends_in_newline = true;
  bool cancelled = false;
  // False: not read (cancelled, a mapping refused, a line too long past
  // `until`) or read wrong (the file cut short while mapped).
  bool usable = false;

  void read(int fd, std::uint64_t size, const std::atomic<bool>* cancel, const std::atomic<bool>& stop) {
    // The half's bytes, and the line after `until` if it is near: a longer
    // line is left to the one-pass reader, which reads it in bounded pieces.
    const std::uint64_t reach = until < size ? std::min(size, until + kLineSearch) : size;
    MappedRange mapped(fd, begin, reach - begin);
    if (!mapped.ok()) return;
    std::string_view input = mapped.bytes();
    if (until < size) {
      const std::size_t from = static_cast<std::size_t>(until - begin);
      const void* nl = std::memchr(input.data() + from, '\n', input.size() - from);
      if (nl) input = input.substr(0, static_cast<std::size_t>(static_cast<const char*>(nl) - input.data()) + 1);
      else if (reach < size) return;
    }
    end = begin + input.size();
    const std::uint64_t lo = std::max(begin, count_from), hi = std::min(end, count_to);
    if (lo < hi) counted = analyzer::count_newlines(input.substr(static_cast<std::size_t>(lo - begin), static_cast<std::size_t>(hi - lo)));
    ends_in_newline = input.empty() || input.back() == '\n';

    analyzer::AnalyzerOptions options;
    options.segment_starts = segment_starts;
    // Each half parses on its own thread: the two halves already keep two
    // cores busy, and a parse worker per half spent more CPU on handing
    // regions over than it saved.
    options.parse_beside_from = UINT64_MAX;
    analyzer::LogAnalyzer analyzer(options);
    analyzer.feed_contiguous(
        input, [&](std::uint64_t at, std::uint64_t n) { mapped.release_before(at + n); },
        [&](std::uint64_t) {
          cancelled = (cancel && cancel->load(std::memory_order_relaxed)) || stop.load(std::memory_order_relaxed);
          return !cancelled && !mapped.faulted();
        });
    if (cancelled || mapped.vanished()) return;
    std::uint64_t lines = 0;
    segments = analyzer.finish_segments(nullptr, &lines);
    if (mapped.vanished()) return;
    newlines = lines - (ends_in_newline ? 0 : 1);
    usable = true;
  }
};

}  // namespace

std::optional<analyzer::ParsedLog> read_log_in_halves(const OpenFile& file, const std::atomic<bool>* cancelled,
                                                      std::string& error) {
  error.clear();
  if (!file.regular() || file.size() < kHalvesFrom) return std::nullopt;
  const int fd = file.fd();
  const auto cut = line_start_after(fd, file.size() / 2);
  if (!cut || *cut >= file.size()) return std::nullopt;

  Half first;
  first.begin = 0;
  first.until = *cut + kMargin;
  first.segment_starts = {0, *cut};
  first.count_from = *cut;
  first.count_to = UINT64_MAX;

  Half second;
  second.begin = line_start_before(fd, *cut - kMargin);
  second.count_from = second.begin;
  second.count_to = *cut;
  second.segment_starts = {0, *cut - second.begin};

  std::atomic<bool> stop{false};
  const std::uint64_t size = file.size();
  auto later = std::async(std::launch::async, [&] { second.read(fd, size, cancelled, stop); });
  first.read(fd, size, cancelled, stop);
  if (!first.usable) stop = true;
  later.get();
  if (cancelled && cancelled->load()) {
    error = "cancelled";
    return std::nullopt;
  }
  if (!first.usable || !second.usable) return std::nullopt;  // read in one pass

  // The second half's numbers start at the line its first byte is on.
  const std::uint64_t before_cut = first.newlines - first.counted;  // '\n' in [0, cut)
  const std::uint64_t before_second = before_cut - second.counted;   // '\n' in [0, second.begin)
  analyzer::ParsedSegment tail = std::move(second.segments.back());
  analyzer::shift(tail, static_cast<std::int64_t>(second.begin), static_cast<std::int64_t>(before_second));
  std::vector<analyzer::ParsedSegment> kept;
  kept.push_back(std::move(first.segments.front()));
  kept.push_back(std::move(tail));
  // A last line without '\n' counts, as LogStream::lines_seen counts it.
  const std::uint64_t lines = before_second + second.newlines + (second.ends_in_newline ? 0 : 1);
  return analyzer::merge_segments(std::move(kept), second.end, lines);
}

}  // namespace oomlens::report
