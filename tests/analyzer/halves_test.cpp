// A long log read in two halves on two threads (SegmentedLog) gives what
// one reader of the whole text gives: the same incidents, tracebacks,
// findings and lines, also when the cut between the halves falls inside a
// traceback or a wrapped message, and whatever the line ends around it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/segmented_log.hpp"
#include "tests/analyzer/mixed_log.hpp"

using namespace oomlens::analyzer;
using oomlens::analyzer::testing::interleaved_oom;
using oomlens::analyzer::testing::mixed_log;
using oomlens::analyzer::testing::summary;

namespace {

std::string whole_summary(const std::string& text) {
  LogAnalyzer analyzer;
  analyzer.feed_contiguous(text, [](std::uint64_t, std::uint64_t) {});
  return summary(analyzer.finish());
}

std::string halves_summary(const std::string& text) { return summary(analysis_of(SegmentedLog(text).parsed())); }

// Where the '\n' lines start, as an editor's line index knows them.
std::vector<std::size_t> newline_starts(const std::string& text) {
  std::vector<std::size_t> starts{0};
  for (std::size_t i = 0; i < text.size(); ++i)
    if (text[i] == '\n') starts.push_back(i + 1);
  return starts;
}

// The halves, with lines looked up in the known line starts instead of counted.
Analysis halves_with_starts(const std::string& text) {
  const std::vector<std::size_t> starts = newline_starts(text);
  return analysis_of(SegmentedLog(text, nullptr, {}, starts).parsed());
}

std::uint64_t line_of(const std::string& log, std::size_t offset) {
  return static_cast<std::uint64_t>(std::count(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) + 1;
}

// Training output in every line-ending style, up to `target` bytes.
void filler_until(std::string& log, std::size_t target) {
  for (int i = 0; log.size() < target; ++i) {
    if (i % 7 == 0) {
      for (int k = 0; k < 30; ++k) log += " 45%|####      | 450/1000 [01:02<01:16,  7.2it/s]\r";
      log += '\n';
    } else if (i % 5 == 0) {
      log += "epoch 3 step 1200 loss 0.2311 lr 3.0e-04\r\n";
    } else {
      log += "[rank" + std::to_string(i % 8) + "]:2026-03-01 12:00:00,123 INFO trainer: step done in 812 ms\n";
    }
  }
}

// Pads `log` with whole lines to exactly `size` bytes (at least 2 short of it).
void pad_to(std::string& log, std::size_t size) {
  while (size - log.size() > 1002) log += std::string(1000, 'x') + "\n";
  log += std::string(size - log.size() - 1, 'x') + "\n";
}

// The cut SegmentedLog makes: the first line start at or after the middle.
std::size_t cut_of(const std::string& log) {
  std::size_t mid = log.size() / 2;
  if (mid > 0 && log[mid - 1] != '\n') mid = log.find('\n', mid) + 1;
  return mid;
}

}  // namespace

TEST_CASE("a long log read in two halves gives what one reader gives") {
  const std::string text = mixed_log(40u << 20, 17);
  const std::string whole = whole_summary(text);
  CHECK(halves_summary(text) == whole);
  CHECK(summary(halves_with_starts(text)) == whole);
}

TEST_CASE("a log whose line starts are known is cut and numbered as one whose lines are counted") {
  // An edit later re-reads segments from their recorded starts and lines,
  // so those must be right too.
  std::string text = mixed_log(30u << 20, 5);
  const std::vector<std::size_t> starts = newline_starts(text);
  SegmentedLog known(text, nullptr, {}, starts);
  CHECK(summary(analysis_of(known.parsed())) == summary(analysis_of(SegmentedLog(text).parsed())));
  const std::size_t at = text.find('\n', (20u << 20) + 12345) + 1;
  const std::string inserted = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n";
  text.insert(at, inserted);
  known.apply(text, LogEdit{at, 0, inserted.size()});
  CHECK(summary(analysis_of(known.parsed())) == whole_summary(text));
}

TEST_CASE("a traceback or a wrapped message across the cut between the halves keeps its lines") {
  constexpr std::size_t kHalf = 14u << 20;  // each half well past the size worth a second thread
  // Where, in the planted block, the middle of the log falls.
  for (int where = 0; where < 3; ++where) {
    INFO("middle in part " << where);
    std::string log;
    filler_until(log, kHalf);
    const std::size_t block = log.size();
    interleaved_oom(log, 0);  // a deep traceback of 8 ranks, then the message
    const std::size_t message = log.rfind("[rank3]:torch.OutOfMemoryError");
    const std::uint64_t message_line = line_of(log, message);
    // The same message again, hard-wrapped at 80 columns by a terminal, after a bar's redraw.
    log += " 99%|##########| 990/1000\r\n";
    const std::size_t wrapped = log.size();
    const std::string text =
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 120.00 MiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and "
        "1.00 GiB is reserved by PyTorch but unallocated.";
    for (std::size_t i = 0; i < text.size(); i += 80) log += text.substr(i, 80) + "\n";
    const std::uint64_t wrapped_line = line_of(log, wrapped);
    const std::size_t block_end = log.size();
    // A look-alike on a '\r' piece right after the block.
    const std::uint64_t killed_line = line_of(log, log.size());
    log += " 99%|##########| 990/1000\rDataLoader worker (pid 4242) is killed by signal: Killed.\r\n";
    const std::size_t middle = where == 0   ? block + (message - block) / 2     // inside the traceback
                               : where == 1 ? wrapped + 81                       // between wrapped lines
                                            : block_end;                         // just before the look-alike
    filler_until(log, 2 * middle - (256u << 10));
    pad_to(log, 2 * middle);
    REQUIRE(log.size() == 2 * middle);
    const std::size_t cut = cut_of(log);
    REQUIRE(cut > block);
    REQUIRE(cut <= block_end);

    const Analysis a = analysis_of(SegmentedLog(log).parsed());
    CHECK(summary(a) == whole_summary(log));
    CHECK(summary(halves_with_starts(log)) == summary(a));
    REQUIRE(a.incidents.size() == 2);
    CHECK(a.incidents[0].primary.line == message_line);
    CHECK(a.incidents[0].primary.traceback.size() == 40);  // every frame: the walk crossed the cut
    CHECK(a.incidents[1].primary.line == wrapped_line);
    bool killed = false;
    for (const auto& f : a.findings) killed = killed || f.line == killed_line;
    CHECK(killed);
    CHECK(a.lines == static_cast<std::uint64_t>(std::count(log.begin(), log.end(), '\n')));
  }
}
