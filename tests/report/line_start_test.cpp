// Line starts near a place in a file (report/line_start.hpp), found a piece
// at a time: held to a search of the whole text at every kind of place.
#include <catch2/catch.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/files.hpp"
#include "report/line_start.hpp"
#include "tests/temp_tree.hpp"

using namespace oomlens::report;

namespace {

// What the functions promise, read off the text itself.
std::optional<std::uint64_t> expected_after(const std::string& text, std::uint64_t at) {
  const std::size_t nl = text.find('\n', at - 1);
  if (nl == std::string::npos || nl > at - 1 + kLineSearch) return std::nullopt;
  return nl + 1;
}

std::uint64_t expected_before(const std::string& text, std::uint64_t at) {
  const std::uint64_t from = at > kLineSearch ? at - kLineSearch : 0;
  const std::size_t nl = at == 0 ? std::string::npos : text.rfind('\n', at - 1);
  if (nl != std::string::npos && nl >= from) return nl + 1;
  return from == 0 ? 0 : at;
}

// Short lines, then lines of one search piece, of several, of exactly the
// search's reach, and longer than it, then short lines again; no '\n' at
// the end.
std::string lines_of_every_length() {
  std::string text;
  for (int i = 0; i < 50; ++i) text += "rank0: step " + std::to_string(i) + "\n";
  for (std::size_t length : {std::size_t{65535}, std::size_t{65536}, std::size_t{200000}, kLineSearch - 1,
                             kLineSearch, kLineSearch + 1, std::size_t{1500000}})
    text += std::string(length, 'x') + "\n";
  for (int i = 0; i < 50; ++i) text += "rank1: step " + std::to_string(i) + "\n";
  return text + "last";
}

// Each '\n' and the bytes around it, the ends, and a spread of other places.
std::vector<std::uint64_t> places(const std::string& text) {
  std::vector<std::uint64_t> at;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n')
      for (std::size_t d : {0, 1, 2})
        if (i + d >= 1 && i + d <= text.size()) at.push_back(i + d);
  }
  for (std::uint64_t i = 1; i < text.size(); i += 7919) at.push_back(i);
  at.push_back(1);
  at.push_back(text.size() - 1);
  return at;
}

// lines_of_every_length() in a file, open for reading.
struct LongLinesFile {
  oomlens::testing::TempTree tree;
  std::string text = lines_of_every_length();
  FileError error;
  std::optional<OpenFile> file = OpenFile::open(tree.write("long-lines.log", text), error);
  int fd() const {
    REQUIRE(file);
    return file->fd();
  }
};

}  // namespace

TEST_CASE("the line start after a place is the search of the whole text's, for lines of every length") {
  const LongLinesFile log;
  for (std::uint64_t at : places(log.text)) {
    INFO("at " << at);
    CHECK(line_start_after(log.fd(), at) == expected_after(log.text, at));
  }
}

TEST_CASE("the line start before a place is the search of the whole text's, for lines of every length") {
  const LongLinesFile log;
  for (std::uint64_t at : places(log.text)) {
    INFO("at " << at);
    CHECK(line_start_before(log.fd(), at) == expected_before(log.text, at));
  }
  CHECK(line_start_before(log.fd(), 0) == 0);
}
