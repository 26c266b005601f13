// Reading a log file (report/log_file.hpp): a long file streamed through the
// analyzer gives the analysis of its whole text.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "report/log_file.hpp"
#include "tests/analyzer/mixed_log.hpp"
#include "tests/temp_tree.hpp"

using namespace oomlens;

TEST_CASE("a long log file read through the analyzer gives the analysis of its whole text") {
  oomlens::testing::TempTree tree;
  const std::string text = analyzer::testing::mixed_log(40u << 20, 23);
  tree.file("long.log", text);
  auto read = report::read_log(tree.path("long.log"), /*skip_binary=*/true);
  REQUIRE(read.error.empty());
  REQUIRE(read.log);
  CHECK(analyzer::testing::summary(analyzer::analysis_of(std::move(*read.log))) ==
        analyzer::testing::summary(analyzer::analyze_text(text)));
}

TEST_CASE("a long binary file is skipped when asked, and a cancelled read says so") {
  oomlens::testing::TempTree tree;
  std::string text = analyzer::testing::mixed_log(40u << 20, 29);
  text[100] = '\0';
  tree.file("long.bin", text);
  CHECK(report::read_log(tree.path("long.bin"), /*skip_binary=*/true).binary);
  std::atomic<bool> cancelled{true};
  auto read = report::read_log(tree.path("long.bin"), /*skip_binary=*/false, &cancelled);
  CHECK_FALSE(read.log);
  CHECK(read.error == "cancelled");
}
