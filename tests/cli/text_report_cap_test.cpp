// The text output of a log with more OOM messages than the analyzer keeps:
// a warning that says how many were counted and not analysed, after the
// incidents it did analyse (its JSON twin: files[].ooms_not_analysed).
#include <catch2/catch.hpp>

#include <sstream>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "cli/report.hpp"
#include "rules/diagnose_log.hpp"
#include "tests/repeated_oom_log.hpp"

using namespace oomlens;

namespace {

std::string text_of(const std::string& log, std::size_t max_events) {
  analyzer::AnalyzerOptions options;
  options.max_events = max_events;
  analyzer::LogAnalyzer analyzer(options);
  analyzer.feed_contiguous(log, [](std::uint64_t, std::uint64_t) {});
  std::vector<cli::FileReport> files;
  files.emplace_back("train.log", rules::diagnose_log(analyzer.finish()));
  std::ostringstream out;
  cli::render_text(out, files, {});
  return out.str();
}

}  // namespace

TEST_CASE("the text output warns when OOM messages were counted but not analysed") {
  const std::string log = testing::repeated_oom_log(9);
  const std::string warning =
      "train.log: warning: 5 more GPU out-of-memory messages were counted but not analysed: oomlens keeps 4 of a "
      "log's messages, to bound its memory, and incidents among the rest are not in this report.";
  const std::string capped = text_of(log, 4);
  CHECK(capped.find(warning) != std::string::npos);
  CHECK(capped.find(warning) > capped.find("error[OOM"));  // after the incidents it analysed
  CHECK(text_of(log, 100).find("not analysed") == std::string::npos);
}
