// Lines of a file on disk located as LSP ranges: the same ranges a document
// in memory gives (LineIndex), with progress-bar '\r's, CRLF and non-ASCII.
#include <catch2/catch.hpp>

#include <atomic>
#include <string>
#include <vector>

#include "lsp/file_lines.hpp"
#include "lsp_test_support.hpp"
#include "tests/temp_tree.hpp"

using namespace oomlens::lsp;
using oomlens::testing::TempTree;

TEST_CASE("a file's lines are where a document of the same text has them", "[lsp][job]") {
  const std::string text =
      "start\r\n"
      "epoch 1:  10%|#         |\repoch 1:  50%|#####     |\repoch 1: 100%|##########|\n"
      "caf\xC3\xA9 \xF0\x9F\x94\xA5 out of memory\r\n"
      "\n"
      "last line, no newline";
  TempTree t;
  t.file("rank0.log", text);
  const std::vector<NewlineSpan> spans = {{1, 1}, {2, 2}, {3, 3}, {2, 3}, {4, 4}, {5, 5}, {3, 3}, {6, 6}};
  LineIndex lines(text);
  std::atomic<bool> cancelled{false};
  for (auto encoding : {PositionEncoding::utf8, PositionEncoding::utf16, PositionEncoding::utf32}) {
    auto found = locate_file_lines(t.path("rank0.log"), spans, encoding, cancelled);
    REQUIRE(found.size() == spans.size());
    for (std::size_t k = 0; k + 1 < spans.size(); ++k) {
      INFO("span " << spans[k].first << "-" << spans[k].last);
      REQUIRE(found[k]);
      CHECK(*found[k] == lines.range_of(lines.newline_lines_bytes(spans[k].first, spans[k].last), encoding));
    }
    CHECK_FALSE(found.back());  // past the end
  }
  // The progress bar's two redraws are LSP lines of their own: line 3 starts on LSP line 4.
  CHECK(locate_file_lines(t.path("rank0.log"), {{3, 3}}, PositionEncoding::utf16, cancelled)[0]->start.line == 4);
}

TEST_CASE("an unreadable file locates nothing", "[lsp][job]") {
  std::atomic<bool> cancelled{false};
  auto found = locate_file_lines("/nonexistent/rank0.log", {{1, 1}}, PositionEncoding::utf16, cancelled);
  REQUIRE(found.size() == 1);
  CHECK_FALSE(found[0]);
}
