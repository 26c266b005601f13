// Reading a log file (report/log_file.hpp): a long file streamed through the
// analyzer gives the analysis of its whole text.
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "report/line_start.hpp"
#include "report/log_file.hpp"
#include "report/log_pieces.hpp"
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

// `text` written to a file and read in small pieces (many cuts, margins that
// reach over several pieces) on `threads` threads gives the analysis of the
// text, with every cut at a line start.
void check_read_in_pieces(const std::string& text, unsigned threads) {
  oomlens::testing::TempTree tree;
  const std::string path = tree.write("long.log", text);
  report::FileError error;
  auto file = report::OpenFile::open(path, error);
  REQUIRE(file);
  const std::uint64_t small = 1u << 20;
  const auto cuts = report::piece_cuts(file->fd(), file->size(), threads, small);
  INFO(cuts.size() - 1 << " pieces on " << threads << " threads");
  REQUIRE(cuts.size() > 5);
  CHECK(cuts.front() == 0);
  CHECK(cuts.back() == text.size());
  for (std::size_t i = 1; i + 1 < cuts.size(); ++i) {
    CHECK(cuts[i] > cuts[i - 1]);
    CHECK(text[cuts[i] - 1] == '\n');
  }
  std::string read_error;
  report::PieceOptions options;
  options.threads = threads;
  options.min_piece = small;
  auto log = report::read_log_in_pieces(*file, nullptr, read_error, options);
  REQUIRE(read_error.empty());
  REQUIRE(log);
  CHECK(analyzer::testing::summary(analyzer::analysis_of(std::move(*log))) ==
        analyzer::testing::summary(analyzer::analyze_text(text)));
}

}  // namespace

TEST_CASE("a long log file read through the analyzer gives the analysis of its whole text") {
  check_read_as_whole(analyzer::testing::mixed_log(40u << 20, 23));
}

TEST_CASE("a long log file read in pieces gives one reader's lines, whatever falls at its middle") {
  // A deep traceback of 8 ranks and its OOM, with the middle of the file
  // (where a 28 MiB file is cut in two) before it, inside it and after it; the last
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

TEST_CASE("a long log file read in pieces gives one reader's lines when long lines fall where it is cut") {
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

TEST_CASE("a long log file read in many small pieces on several threads gives one reader's lines") {
  // OOMs with deep interleaved tracebacks spread over the file, so that cuts
  // and margins fall before, inside and after them; the file ends in a line
  // without '\n'. Pieces of about 1 MiB under margins of 3 MiB: each piece's
  // margins reach over its neighbours.
  std::string text;
  for (int part = 0; part < 6; ++part) {
    text += analyzer::testing::mixed_log((4u << 20) + 77777u * static_cast<unsigned>(part), 50 + part);
    analyzer::testing::interleaved_oom(text, part % 3);
  }
  text += "[rank3]: step 9 loss 1.25";
  for (unsigned threads : {1u, 2u, 3u}) check_read_in_pieces(text, threads);
}

TEST_CASE("the cuts between pieces pass over lines longer than the search for a line start") {
  // A 1.5 MiB line where a cut would fall: no line start within the search
  // after that place, so the cut moves on past the long line.
  std::string text = analyzer::testing::mixed_log(30u << 20, 43);
  const std::size_t at = text.size() / 3;
  const std::size_t length = std::size_t{1536} << 10;
  text.replace(at - 100, length, length, 'x');
  text[at - 101] = '\n';
  text[at - 100 + length] = '\n';
  oomlens::testing::TempTree tree;
  const std::string path = tree.write("long.log", text);
  report::FileError error;
  auto file = report::OpenFile::open(path, error);
  REQUIRE(file);
  const auto cuts = report::piece_cuts(file->fd(), file->size(), 2, 1u << 20);
  REQUIRE(cuts.size() > 3);
  for (std::size_t i = 1; i + 1 < cuts.size(); ++i) {
    CHECK(text[cuts[i] - 1] == '\n');
    CHECK_FALSE((cuts[i] > at - 100 && cuts[i] <= at - 100 + length));
  }
  check_read_as_whole(text);
}

TEST_CASE("a file under 24 MiB is not cut, and one under two smallest pieces is cut near its middle") {
  oomlens::testing::TempTree tree;
  const std::string text = analyzer::testing::mixed_log(30u << 20, 47);
  const std::string path = tree.write("mid.log", text);
  report::FileError error;
  auto file = report::OpenFile::open(path, error);
  REQUIRE(file);
  auto cuts = report::piece_cuts(file->fd(), file->size(), 2, 24u << 20);
  REQUIRE(cuts.size() == 3);
  CHECK(cuts[1] >= text.size() / 2);
  CHECK(cuts[1] < text.size() / 2 + report::kLineSearch);
  CHECK(report::piece_cuts(file->fd(), 20u << 20, 2, 1u << 20) == std::vector<std::uint64_t>{0, 20u << 20});
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
