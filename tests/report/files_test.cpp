// Reading files for both front ends (report/files.hpp): errors name the file and the reason.
#include <catch2/catch.hpp>

#include <string>

#include "report/files.hpp"
#include "tests/temp_tree.hpp"

using oomlens::report::FileError;
using oomlens::report::OpenFile;
using oomlens::report::read_file;

TEST_CASE("read_file reads a whole file") {
  oomlens::testing::TempTree tree;
  std::string text(200000, 'x');
  text += std::string("\r\nend\0bytes", 11);  // line ends and a NUL kept as they are
  tree.file("a.log", text);
  FileError error;
  auto read = read_file((tree.root / "a.log").string(), error);
  REQUIRE(read);
  CHECK(*read == text);
}

TEST_CASE("read_file says which file and why it could not") {
  oomlens::testing::TempTree tree;
  FileError error;
  std::string missing = (tree.root / "missing.log").string();
  CHECK_FALSE(read_file(missing, error));
  CHECK(error.path == missing);
  CHECK(error.reason == "No such file or directory");
  CHECK(error.message() == missing + ": No such file or directory");
  CHECK_FALSE(read_file(tree.root.string(), error));
  CHECK(error.reason == "is a directory");
}

TEST_CASE("OpenFile knows a regular file's size") {
  oomlens::testing::TempTree tree;
  tree.file("s.pickle", "12345");
  FileError error;
  auto file = OpenFile::open((tree.root / "s.pickle").string(), error);
  REQUIRE(file);
  CHECK(file->regular());
  CHECK(file->size() == 5);
  char buffer[8];
  CHECK(file->read(buffer, error) == 5u);
  CHECK(file->read(buffer, error) == 0u);
}
