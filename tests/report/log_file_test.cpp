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

namespace {

// `text` written to a file and read back gives the analysis of the text.
void check_read_as_whole(const std::string& text) {
  oomlens::testing::TempTree tree;
  tree.file("long.log", text);
  auto read = report::read_log(tree.path("long.log"), /*skip_binary=*/true);
  REQUIRE(read.error.empty());
  REQUIRE(read.log);
  CHECK(analyzer::testing::summary(analyzer::analysis_of(std::move(*read.log))) ==
        analyzer::testing::summary(analyzer::analyze_text(text)));
}

}  // namespace

TEST_CASE("a long log file read through the analyzer gives the analysis of its whole text") {
  check_read_as_whole(analyzer::testing::mixed_log(40u << 20, 23));
}

TEST_CASE("a long log file read in two halves gives one reader's lines, whatever falls at its middle") {
  // A deep traceback of 8 ranks and its OOM, with the middle of the file
  // (where the halves are cut) before it, inside it and after it; the last
  // file ends in a cut line with no '\n'.
  for (int where = 0; where < 3; ++where) {
    INFO("middle in part " << where);
    std::string text = analyzer::testing::mixed_log(14u << 20, 31);
    const std::size_t block = text.size();
    analyzer::testing::interleaved_oom(text, where);
    const std::size_t block_end = text.size();
    const std::size_t middle = where == 0 ? block - 1000 : where == 1 ? (block + block_end) / 2 : block_end + 500;
    std::string tail = analyzer::testing::mixed_log(2 * middle - text.size(), 37 + where);
    tail.resize(2 * middle - text.size() - (where == 2 ? 0 : 1));
    text += tail;
    if (where != 2) text += '\n';
    check_read_as_whole(text);
  }
}

TEST_CASE("a long log file read in two halves gives one reader's lines when long lines fall where it is cut") {
  // The reader looks for a line start near the middle and near the second
  // half's margin a piece at a time, and gives up on a line past 1 MiB (the
  // file is then read in one pass): lines of one piece, of several, and of
  // more than the search, over both places.
  for (std::size_t length : {std::size_t{3000}, std::size_t{150} << 10, std::size_t{1536} << 10}) {
    INFO("long lines of " << length << " bytes");
    std::string text = analyzer::testing::mixed_log(26u << 20, 41);
    const std::size_t middle = text.size() / 2;
    for (std::size_t at : {middle, middle - (3u << 20)}) {
      const std::size_t begin = at - length / 2;
      text.replace(begin, length, length, 'x');
      text[begin - 1] = '\n';
      text[begin + length] = '\n';
    }
    check_read_as_whole(text);
  }
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
