// Parsing on a second thread beside the reading gives the same analysis as
// parsing on the reading thread: the same incidents with the same tracebacks
// (including those that need the full lookback, decided on the reading
// thread), and the findings grouped in the same OOM epochs, in log order.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "tests/analyzer/mixed_log.hpp"

using namespace oomlens::analyzer;
using oomlens::analyzer::testing::mixed_log;
using oomlens::analyzer::testing::summary;

namespace {

Analysis analyze(const std::string& log, std::uint64_t beside_from) {
  AnalyzerOptions options;
  options.parse_beside_from = beside_from;
  LogAnalyzer analyzer(options);
  for (std::size_t i = 0; i < log.size(); i += 1 << 20) analyzer.feed(std::string_view(log).substr(i, 1 << 20));
  return analyzer.finish();
}

}  // namespace

TEST_CASE("parsing beside the reading gives the same analysis as parsing in line") {
  const std::string log = mixed_log(24u << 20);
  const Analysis alone = analyze(log, std::numeric_limits<std::uint64_t>::max());
  REQUIRE(alone.incidents.size() >= 4);
  REQUIRE(alone.findings.size() >= 5);
  // The traceback above the interleaved OOMs was read whole: 40 frames.
  CHECK(alone.incidents.front().primary.traceback.size() == 40);
  const std::string expected = summary(alone);
  CHECK(summary(analyze(log, 0)) == expected);
  CHECK(summary(analyze(log, 4u << 20)) == expected);
}
