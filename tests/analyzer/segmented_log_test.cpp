// An edited log analysed by segments gives what a fresh analysis of the
// whole new text gives, while reading only the segments around each edit.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <random>
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

std::string fresh_summary(const std::string& text) {
  LogAnalyzer analyzer;
  analyzer.feed_contiguous(text, [](std::uint64_t, std::uint64_t) {});
  return summary(analyzer.finish());
}

std::string segmented_summary(const SegmentedLog& log) { return summary(analysis_of(log.parsed())); }

std::size_t line_start_near(const std::string& text, std::size_t at) {
  at = std::min(at, text.size());
  std::size_t nl = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  return nl == std::string::npos ? 0 : nl + 1;
}

// Applies one edit to both the text and the segmented analysis.
std::uint64_t edit(std::string& text, SegmentedLog& log, std::size_t offset, std::size_t removed,
                   const std::string& inserted) {
  text.replace(offset, removed, inserted);
  return log.apply(text, LogEdit{offset, removed, inserted.size()});
}

}  // namespace

TEST_CASE("a segmented log follows edits as a fresh analysis would, reading only around them") {
  std::string text = mixed_log(48u << 20, 11);
  SegmentedLog log(text);
  REQUIRE(segmented_summary(log) == fresh_summary(text));

  std::mt19937_64 rng(5);
  int n = 1000;
  const std::uint64_t segment = SegmentedLog::kSegmentBytes;
  for (int round = 0; round < 14; ++round) {
    INFO("round " << round);
    // Mid-log edits first, then at segment boundaries, the start and the end.
    std::size_t at;
    if (round < 6) at = line_start_near(text, text.size() / 4 + rng() % (text.size() / 2));
    else if (round < 10) at = line_start_near(text, (1 + rng() % 4) * segment + rng() % 64);
    else if (round < 12) at = 0;
    else at = text.size();
    std::uint64_t read = 0;
    switch (round % 4) {
      case 0: {  // a new OOM under a deep interleaved traceback
        std::string oom;
        interleaved_oom(oom, n++);
        read = edit(text, log, at, 0, oom);
        break;
      }
      case 1: {  // lines deleted (perhaps an OOM's traceback cut in two)
        std::size_t end = at;
        for (int k = 0, lines = 1 + static_cast<int>(rng() % 400); k < lines && end < text.size(); ++k)
          end = text.find('\n', end) == std::string::npos ? text.size() : text.find('\n', end) + 1;
        read = edit(text, log, at, end - at, "");
        break;
      }
      case 2:  // a look-alike and a pressure warning typed in
        read = edit(text, log, at, 0,
                    "DataLoader worker (pid 777) is killed by signal: Killed.\n"
                    "[rank2]:5 pytorch allocator cache flushes since last step.\n");
        break;
      default: {  // one line rewritten into a bare CUDA error
        std::size_t end = text.find('\n', at);
        end = end == std::string::npos ? text.size() : end + 1;
        read = edit(text, log, at, end - at, "[rank5]:RuntimeError: CUDA error: out of memory\n");
        break;
      }
    }
    CHECK(segmented_summary(log) == fresh_summary(text));
    if (round < 6) CHECK(read < text.size() / 2);
  }
}

TEST_CASE("a segmented log of a small text, emptied and filled again") {
  std::string text = mixed_log(300u << 10, 3);
  SegmentedLog log(text);
  CHECK(segmented_summary(log) == fresh_summary(text));
  edit(text, log, 0, text.size(), "");
  CHECK(segmented_summary(log) == fresh_summary(text));
  edit(text, log, 0, 0, mixed_log(200u << 10, 4));
  CHECK(segmented_summary(log) == fresh_summary(text));
}

namespace {

std::string applied(std::string text, const LogEdit& e, std::string_view inserted) {
  return text.replace(e.offset, e.removed, inserted);
}

}  // namespace

TEST_CASE("edits made one after another compose into one replacement") {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 2000; ++round) {
    INFO("round " << round);
    std::string before(rng() % 40, 'a');
    for (auto& c : before) c = static_cast<char>('a' + rng() % 3);
    auto random_edit = [&](const std::string& text) {
      LogEdit e;
      e.offset = rng() % (text.size() + 1);
      e.removed = rng() % (text.size() - e.offset + 1);
      e.inserted = rng() % 5;
      return e;
    };
    LogEdit first = random_edit(before);
    std::string middle = applied(before, first, std::string(first.inserted, 'x'));
    LogEdit then = random_edit(middle);
    std::string after = applied(middle, then, std::string(then.inserted, 'y'));
    LogEdit both = compose(first, then);
    REQUIRE(both.offset + both.removed <= before.size());
    // The composed edit, replaying the bytes of `after` it names, gives `after`.
    CHECK(applied(before, both, std::string_view(after).substr(both.offset, both.inserted)) == after);
    // And it is no smaller than the minimal one.
    LogEdit minimal = edit_between(before, after);
    CHECK(applied(before, minimal, std::string_view(after).substr(minimal.offset, minimal.inserted)) == after);
    CHECK(minimal.removed <= both.removed);
    CHECK(minimal.inserted <= both.inserted);
  }
}

TEST_CASE("the edit between two texts is what differs between their common prefix and suffix") {
  CHECK(edit_between("", "") == LogEdit{0, 0, 0});
  CHECK(edit_between("abc", "abc") == LogEdit{3, 0, 0});
  CHECK(edit_between("abc", "abXc") == LogEdit{2, 0, 1});
  CHECK(edit_between("aaaa", "aa") == LogEdit{2, 2, 0});
  CHECK(edit_between("", "new") == LogEdit{0, 0, 3});
  // Across memcmp blocks: a change in the middle of 20,000 bytes.
  std::string big(20000, 'q');
  std::string changed = big;
  changed.replace(12345, 3, "XYZW");
  CHECK(edit_between(big, changed) == LogEdit{12345, 3, 4});
}

TEST_CASE("a segmented analysis stopped early says it is incomplete") {
  std::string text = mixed_log(24u << 20, 8);
  std::atomic<bool> stop{true};
  SegmentedLog stopped(text, &stop);
  CHECK(stopped.incomplete());
  std::atomic<bool> go{false};
  std::vector<double> seen;
  SegmentedLog whole(text, &go, [&](double f) { seen.push_back(f); });
  CHECK_FALSE(whole.incomplete());
  CHECK_FALSE(seen.empty());
  CHECK(segmented_summary(whole) == fresh_summary(text));
}
