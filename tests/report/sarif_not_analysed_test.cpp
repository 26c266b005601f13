// The SARIF of a log with more OOM messages than the analyzer keeps: the run
// carries a warning notification that says so, naming the log; a log read
// whole carries none.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/analyzer.hpp"
#include "report/sarif.hpp"
#include "rules/diagnose_log.hpp"
#include "tests/repeated_oom_log.hpp"

using namespace oomlens;

namespace {

nlohmann::json sarif_of(std::size_t max_events) {
  const std::string log = testing::repeated_oom_log(6);
  analyzer::AnalyzerOptions options;
  options.max_events = max_events;
  analyzer::LogAnalyzer analyzer(options);
  analyzer.feed(log);
  std::vector<report::FileReport> files;
  files.emplace_back("runs/train.log", rules::diagnose_log(analyzer.finish()));
  return report::logs_sarif(files);
}

}  // namespace

TEST_CASE("SARIF says when OOM messages were counted but not analysed", "[sarif][cap]") {
  const nlohmann::json capped = sarif_of(2);
  const auto& run = capped["runs"][0];
  REQUIRE(run.contains("invocations"));
  const auto& invocation = run["invocations"][0];
  CHECK(invocation["executionSuccessful"] == true);
  const auto& note = invocation["toolExecutionNotifications"][0];
  CHECK(note["level"] == "warning");
  CHECK(note["message"]["text"].get<std::string>().starts_with(
      "4 more GPU out-of-memory messages were counted but not analysed"));
  CHECK(note["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "runs/train.log");
  CHECK(!run["results"].empty());

  CHECK(!sarif_of(100)["runs"][0].contains("invocations"));
}
