#include "report/log_pieces.hpp"

#include <algorithm>
#include <cmath>
#include <future>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <vector>

#include "analyzer/log/scan.hpp"
#include "analyzer/log/segmented_log.hpp"
#include "report/line_start.hpp"

namespace oomlens::report {
namespace {

using analyzer::SegmentedLog;

// The language server's margin and threshold: a piece reads this far past
// its cuts, and below eight margins a second thread costs more than it saves.
constexpr std::uint64_t kMargin = SegmentedLog::kMarginBytes;
constexpr std::uint64_t kPiecesFrom = 8 * kMargin;
// Each read: large enough to amortise the system call, small enough to stay
// in cache for the scan that runs right after (the one-pass reader's size).
constexpr std::size_t kRead = 1 << 20;

// One piece: the bytes from `cut` up to `next_cut` are its own; it reads from
// a line start a margin before `cut` (`begin`) to the first line start after
// `until`, a margin past `next_cut` (to the end of the file for the last).
struct Piece {
  std::uint64_t begin = 0, cut = 0, next_cut = 0;
  std::uint64_t until = UINT64_MAX;
  std::size_t max_events = 0;

  // What it read.
  analyzer::ParsedSegment own;  // in the piece's coordinates until placed
  std::uint64_t end = 0;        // offset after the last byte read
  std::uint64_t lead_newlines = 0, own_newlines = 0;  // '\n' in [begin, cut) and [cut, next_cut)
  bool ends_in_newline = true;
  // False: not read (cancelled, a read failed, a line too long past
  // `until`) or not all read (the file cut short while read).
  bool usable = false;

  void read(int fd, std::uint64_t size, const std::atomic<bool>* cancel, const std::atomic<bool>& stop) {
    // The piece's bytes, and the line after `until` if it is near: a longer
    // line is left to the one-pass reader, which reads it in bounded pieces.
    end = size;
    if (until < size) {
      const std::optional<std::uint64_t> after = line_start_after(fd, until + 1);  // past the first '\n' from `until`
      if (after && *after <= size) end = *after;
      else if (until + kLineSearch < size) return;
    }
    const bool last = next_cut >= end;
    const std::uint64_t own_end = std::min(next_cut, end);

    analyzer::AnalyzerOptions options;
    if (cut > begin) options.segment_starts.push_back(0);
    options.segment_starts.push_back(cut - begin);
    if (!last) options.segment_starts.push_back(own_end - begin);
    // Each piece parses on its own thread: the pieces already keep the cores
    // busy, and a parse worker per piece spent more CPU on handing regions
    // over than it saved.
    options.parse_beside_from = UINT64_MAX;
    options.max_events = max_events;
    analyzer::LogAnalyzer analyzer(options);
    // Read, not mapped: a mapping's cost follows how the page cache holds the
    // file. Just written (a training job's log, a copy) it holds it in small
    // pages, and mapping them one by one took a piece 1.8 times as long as
    // copying them into the analyzer's buffer; in the large pages a re-read
    // leaves, the two took the same time (bench/README.md).
    std::uint64_t trail_newlines = 0;
    char last_byte = '\n';
    for (std::uint64_t at = begin; at < end;) {
      if ((cancel && cancel->load(std::memory_order_relaxed)) || stop.load(std::memory_order_relaxed)) return;
      const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(kRead, end - at));
      const std::span<char> room = analyzer.prepare(want);
      const std::optional<std::size_t> got = read_at(fd, room.data(), want, at);
      if (!got || *got == 0) return;  // the file was cut short while read: read again in one pass
      const std::string_view bytes(room.data(), *got);
      if (at < cut) lead_newlines += analyzer::count_newlines(bytes.substr(0, static_cast<std::size_t>(std::min<std::uint64_t>(cut - at, *got))));
      if (!last && at + *got > own_end)
        trail_newlines += analyzer::count_newlines(bytes.substr(static_cast<std::size_t>(own_end - std::min(own_end, at))));
      last_byte = bytes.back();
      analyzer.commit(*got);
      at += *got;
    }
    ends_in_newline = last_byte == '\n';
    std::uint64_t lines = 0;
    std::vector<analyzer::ParsedSegment> segments = analyzer.finish_segments(nullptr, &lines);
    // A last line without '\n' counts in `lines`, as LogStream::lines_seen counts it.
    own_newlines = lines - (ends_in_newline ? 0 : 1) - lead_newlines - trail_newlines;
    own = std::move(segments[cut > begin ? 1 : 0]);
    usable = true;
  }
};

// Each reading thread holds about 4.5 MiB (its buffer, the lookback, its
// regions): on 1 GiB logs of the benchmark's matrix a run peaked at 17-19 MiB
// with 2 threads, 27 MiB with 4 and 39-46 MiB with 8 (of the 64 MiB we allow
// ourselves).
unsigned reading_threads(unsigned asked) {
  if (asked > 0) return asked;
  return std::clamp(std::thread::hardware_concurrency(), 2u, 8u);
}

}  // namespace

std::vector<std::uint64_t> piece_cuts(int fd, std::uint64_t size, unsigned threads, std::uint64_t min_piece) {
  std::vector<std::uint64_t> cuts{0};
  if (size >= kPiecesFrom) {
    const std::uint64_t smallest = std::max<std::uint64_t>({min_piece, size / 32, 1});
    const unsigned share = std::max(threads, 1u) + 1;
    for (;;) {
      const std::uint64_t left = size - cuts.back();
      const std::uint64_t piece =
          cuts.size() == 1 && size < 2 * smallest ? size / 2 : std::max(smallest, left / share);
      if (left - std::min(left, piece) < std::min(smallest, size / 2)) break;  // the rest is the last piece
      // Past a line longer than the search, within a smallest piece (4 MiB at
      // least) more: a file with no '\n' for longer is read on as one piece,
      // not searched to its end a MiB at a time (the one-pass reader reads it
      // all again).
      const std::uint64_t give_up = std::min(size, cuts.back() + piece + std::max(smallest, 4 * kLineSearch));
      std::optional<std::uint64_t> cut;
      for (std::uint64_t at = cuts.back() + piece; !cut && at < give_up; at += kLineSearch)
        cut = line_start_after(fd, at);
      if (!cut || *cut >= size) break;
      cuts.push_back(*cut);
    }
  }
  cuts.push_back(size);
  return cuts;
}

std::optional<analyzer::ParsedLog> read_log_in_pieces(const OpenFile& file, const std::atomic<bool>* cancelled,
                                                      std::string& error, const PieceOptions& options) {
  error.clear();
  if (!file.regular() || file.size() < kPiecesFrom) return std::nullopt;
  const int fd = file.fd();
  const std::uint64_t size = file.size();
  const unsigned threads = reading_threads(options.threads);
  const std::vector<std::uint64_t> cuts = piece_cuts(fd, size, threads, options.min_piece);
  if (cuts.size() < 3) return std::nullopt;  // one piece: read in one pass

  std::vector<Piece> pieces(cuts.size() - 1);
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    Piece& p = pieces[i];
    p.cut = cuts[i];
    p.next_cut = cuts[i + 1];
    p.begin = i == 0 ? 0 : line_start_before(fd, p.cut - std::min(p.cut, kMargin));
    p.until = i + 1 == pieces.size() ? UINT64_MAX : p.next_cut + kMargin;
    const double read = static_cast<double>(std::min(p.until, size) - p.begin);
    p.max_events = static_cast<std::size_t>(
        std::ceil(static_cast<double>(options.max_events) * read / static_cast<double>(size)));
  }

  // Pieces go out in order: the big ones first, the small ones last, so the
  // threads end close together.
  std::atomic<std::size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (std::size_t i = next++; i < pieces.size() && !stop.load(); i = next++) {
      pieces[i].read(fd, size, cancelled, stop);
      if (!pieces[i].usable) stop = true;
    }
  };
  std::vector<std::future<void>> others;
  for (unsigned t = 1; t < std::min<std::size_t>(threads, pieces.size()); ++t)
    others.push_back(std::async(std::launch::async, work));
  work();
  for (auto& f : others) f.get();
  if (cancelled && cancelled->load()) {
    error = "cancelled";
    return std::nullopt;
  }
  for (const Piece& p : pieces)
    if (!p.usable) return std::nullopt;  // read in one pass

  // Each piece's lines are numbered from the '\n' before its first byte.
  std::vector<analyzer::ParsedSegment> own;
  own.reserve(pieces.size());
  std::uint64_t before_cut = 0;  // '\n' in [0, cut)
  for (Piece& p : pieces) {
    analyzer::shift(p.own, static_cast<std::int64_t>(p.begin), static_cast<std::int64_t>(before_cut - p.lead_newlines));
    own.push_back(std::move(p.own));
    before_cut += p.own_newlines;
  }
  // A last line without '\n' counts, as LogStream::lines_seen counts it.
  const Piece& last = pieces.back();
  return analyzer::merge_segments(std::move(own), last.end, before_cut + (last.ends_in_newline ? 0 : 1));
}

}  // namespace oomlens::report
