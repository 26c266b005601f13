// Every reported line equals grep -n's line for the message, whatever the
// log's size and line endings, and wherever the reader's internal windows
// fall: messages are planted just before, on and after each internal size
// (the scanner's steps, region and lookahead caps, the release step of a
// mapped file, the unbroken-line cut), and every line is checked against an
// independent count of '\n' before the planted byte; also when the log is
// read in two halves on two threads.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/segmented_log.hpp"

using namespace oomlens::analyzer;

namespace {

struct Planted {
  std::string log;
  std::set<std::uint64_t> oom_lines;      // grep -n's line of each OOM message
  std::set<std::uint64_t> finding_lines;  // and of each look-alike
};

std::uint64_t line_of(const std::string& log, std::size_t offset) {
  return static_cast<std::uint64_t>(std::count(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(offset), '\n')) + 1;
}

// Ordinary output in every line-ending style: '\n', "\r\n", progress bars
// redrawn with bare '\r', and now and then a very long bar line.
void filler_until(std::string& log, std::size_t target, std::mt19937_64& rng) {
  while (log.size() < target) {
    switch (rng() % 8) {
      case 0: log += "epoch 3 step 1200 loss 0.2311 lr 3.0e-04 grad_norm 1.02\r\n"; break;
      case 1: {
        for (int i = 0; i < 40; ++i) log += " 45%|####      | 450/1000 [01:02<01:16,  7.2it/s]\r";
        log += '\n';
        break;
      }
      case 2:
        if (rng() % 64 == 0) {
          log.append(70000 + rng() % 30000, '#');
          log += '\n';
        }
        break;
      default: log += "[rank0]:2026-03-01 12:00:00,123 INFO trainer: step done in 812 ms\n"; break;
    }
  }
}

// Distinct requests, so that no two messages are one incident's echoes.
std::string oom_message(int i) {
  return "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + std::to_string(2 + i) +
         ".00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 120.00 MiB is free. Of the allocated memory "
         "70.00 GiB is allocated by PyTorch, and 1.00 GiB is reserved by PyTorch but unallocated.";
}

Planted planted_log() {
  constexpr std::size_t KiB = 1024, MiB = 1024 * KiB;
  std::vector<std::size_t> sizes = {64 * KiB, 256 * KiB, 1 * MiB, 2 * MiB, 4 * MiB, 16 * MiB, 20 * MiB, 32 * MiB};
  std::vector<std::size_t> targets;
  for (std::size_t k = 1; k <= 3; ++k)
    for (std::size_t s : sizes)
      for (std::ptrdiff_t delta : {-300, -1, 0, 1, 200})
        targets.push_back(static_cast<std::size_t>(static_cast<std::ptrdiff_t>(k * s) + delta));
  std::sort(targets.begin(), targets.end());
  targets.erase(std::unique(targets.begin(), targets.end()), targets.end());

  std::mt19937_64 rng(42);
  Planted p;
  int n = 0;
  for (std::size_t target : targets) {
    // Messages close together would share an incident; keep ~3000 lines apart.
    if (!p.oom_lines.empty() && target < p.log.size() + 200 * KiB) continue;
    filler_until(p.log, target, rng);
    if (n % 5 == 4) {  // a look-alike now and then, on a '\r' piece after a bar
      p.finding_lines.insert(line_of(p.log, p.log.size()));
      p.log += " 99%|##########| 990/1000\rDataLoader worker (pid 4242) is killed by signal: Killed.\n";
    }
    p.oom_lines.insert(line_of(p.log, p.log.size()));
    p.log += oom_message(n++);
    p.log += (n % 3 == 0) ? "\r\n" : "\n";
  }
  filler_until(p.log, p.log.size() + 100 * KiB, rng);
  return p;
}

std::set<std::uint64_t> oom_lines_of(const Analysis& a) {
  std::set<std::uint64_t> lines;
  for (const auto& inc : a.incidents) {
    lines.insert(inc.primary.line);
    for (const auto& e : inc.echoes) lines.insert(e.line);
  }
  return lines;
}

// Repeats of one cause are one finding: its first lines and its last.
std::set<std::uint64_t> finding_lines_of(const Analysis& a) {
  std::set<std::uint64_t> lines;
  for (const auto& f : a.findings) {
    lines.insert(f.line);
    lines.insert(f.more_lines.begin(), f.more_lines.end());
    if (f.count > 1) lines.insert(f.last_line);
  }
  return lines;
}

}  // namespace

TEST_CASE("line numbers equal an independent count at every internal boundary, fed or mapped") {
  const Planted p = planted_log();
  REQUIRE(p.log.size() > 96u << 20);
  REQUIRE(p.oom_lines.size() >= 16);
  const auto total_lines = static_cast<std::uint64_t>(std::count(p.log.begin(), p.log.end(), '\n'));

  SECTION("fed in pieces, as from a pipe") {
    for (std::size_t piece : {std::size_t{1} << 20, std::size_t{65537}}) {
      INFO("piece " << piece);
      LogAnalyzer analyzer;
      for (std::size_t i = 0; i < p.log.size(); i += piece) analyzer.feed(std::string_view(p.log).substr(i, piece));
      Analysis a = analyzer.finish();
      CHECK(oom_lines_of(a) == p.oom_lines);
      CHECK(finding_lines_of(a) == p.finding_lines);
      CHECK(a.lines == total_lines);
    }
  }
  SECTION("read in two halves side by side, as an editor's long log") {
    Analysis a = analysis_of(SegmentedLog(p.log).parsed());
    CHECK(oom_lines_of(a) == p.oom_lines);
    CHECK(finding_lines_of(a) == p.finding_lines);
    CHECK(a.lines == total_lines);
  }
  SECTION("read in place, as a mapped file") {
    LogAnalyzer analyzer;
    analyzer.feed_contiguous(p.log, [](std::uint64_t, std::uint64_t) {});
    Analysis a = analyzer.finish();
    CHECK(oom_lines_of(a) == p.oom_lines);
    CHECK(finding_lines_of(a) == p.finding_lines);
    CHECK(a.lines == total_lines);
  }
}
