// A log with more OOM messages than the analyzer keeps (a loop that catches
// the error and goes on, for a whole run): the messages past the bound are
// counted, in every way a log is read, so that the report can say that part
// of it was not analysed instead of presenting the rest as all there is.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/job.hpp"

using namespace oomlens::analyzer;

namespace {

// `n` OOMs of a loop that skips the batch, each with its own figures, with
// training output between them.
std::string oom_loop(int n) {
  std::string log;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 20; ++k) log += "step " + std::to_string(i * 20 + k) + " | loss 0.4210\n";
    log += "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + std::to_string(1 + i) +
           ".00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 10.00 MiB is free. Of the allocated memory "
           "70.00 GiB is allocated by PyTorch, and 2.00 GiB is reserved by PyTorch but unallocated.\n";
    log += "| WARNING: ran out of memory with exception, skipping batch\n";
  }
  return log;
}

std::uint64_t analysed(const Analysis& a) {
  std::uint64_t n = 0;
  for (const auto& inc : a.incidents) n += 1 + inc.echoes.size();
  return n;
}

Analysis capped_at(const std::string& text, std::size_t max_events, std::vector<std::uint64_t> segments = {}) {
  AnalyzerOptions options;
  options.max_events = max_events;
  options.segment_starts = std::move(segments);
  LogAnalyzer analyzer(options);
  analyzer.feed_contiguous(text, [](std::uint64_t, std::uint64_t) {});
  return analyzer.finish();
}

}  // namespace

TEST_CASE("OOM messages past the analyzer's bound are counted, not dropped silently") {
  const std::string log = oom_loop(12);
  SECTION("under the bound nothing is left out") {
    Analysis a = capped_at(log, 100);
    CHECK(analysed(a) == 12);
    CHECK(a.ooms_not_analysed == 0);
    CHECK_FALSE(a.findings_capped);
  }
  SECTION("one reader") {
    Analysis a = capped_at(log, 5);
    CHECK(analysed(a) == 5);
    CHECK(a.ooms_not_analysed == 7);
    CHECK(a.findings_capped);
  }
  SECTION("segments: the count is the whole log's") {
    Analysis a = capped_at(log, 5, {0, log.size() / 3, 2 * log.size() / 3});
    CHECK(analysed(a) == 5);
    CHECK(a.ooms_not_analysed == 7);
  }
  SECTION("one job's files: each file's count adds up") {
    auto parsed = [&](std::size_t max_events) {
      AnalyzerOptions options;
      options.max_events = max_events;
      LogAnalyzer analyzer(options);
      analyzer.feed_contiguous(log, [](std::uint64_t, std::uint64_t) {});
      return analyzer.finish_parsed();
    };
    std::vector<JobInput> inputs;
    inputs.push_back({parsed(5), "rank0.log", 0});
    inputs.push_back({parsed(10), "rank1.log", 1});
    Analysis a = analyze_job(std::move(inputs));
    CHECK(a.ooms_not_analysed == 7 + 2);
    CHECK(analysed(a) == 15);
  }
}
