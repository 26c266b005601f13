// Which files `oomlens diagnose DIR` reads: ripgrep's walk.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "cli/log_files.hpp"
#include "tests/temp_tree.hpp"

using namespace oomlens::cli;
using oomlens::testing::TempTree;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> relative(const LogFiles& found, const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& f : found.files) out.push_back(fs::path(f.path).lexically_relative(root).string());
  return out;
}

}  // namespace

TEST_CASE("the walk is recursive, sorted, and skips hidden entries and links", "[cli][walk]") {
  TempTree t;
  t.file("b.log");
  t.file("a/z.log");
  t.file("a/c.out");
  t.file(".hidden/x.log");
  t.file(".dot.log");
  fs::create_symlink(t.root / "b.log", t.root / "link.log");
  fs::create_directory_symlink(t.root, t.root / "a" / "loop");
  auto found = expand_log_files({t.root.string()});
  CHECK(relative(found, t.root) == std::vector<std::string>{"a/c.out", "a/z.log", "b.log"});
  CHECK(found.errors.empty());
  for (const auto& f : found.files) CHECK(f.walked);
}

TEST_CASE("the walk honours .gitignore and .ignore", "[cli][walk]") {
  TempTree t;
  t.file(".gitignore", "# comment\n*.tmp\nbuild/\n/top.log\n!keep.tmp\n");
  t.file("sub/.ignore", "secret*\n");
  t.file("a.tmp");
  t.file("keep.tmp");
  t.file("build/out.log");
  t.file("top.log");
  t.file("sub/top.log");
  t.file("sub/secret1.log");
  t.file("sub/visible.log");
  t.file("other/secret2.log");
  auto found = expand_log_files({t.root.string()});
  CHECK(relative(found, t.root) ==
        std::vector<std::string>{"keep.tmp", "other/secret2.log", "sub/top.log", "sub/visible.log"});
}

TEST_CASE("named files are read as named; missing paths are reported, not fatal", "[cli][walk]") {
  TempTree t;
  t.file(".hidden.log");
  t.file("d/one.log");
  std::string missing = (t.root / "nope.log").string();
  auto found = expand_log_files({(t.root / ".hidden.log").string(), missing, "-", (t.root / "d").string()});
  REQUIRE(found.files.size() == 3);
  CHECK(found.files[0].path == (t.root / ".hidden.log").string());
  CHECK_FALSE(found.files[0].walked);
  CHECK(found.files[1].path == "-");
  CHECK(found.files[2].walked);
  REQUIRE(found.errors.size() == 1);
  CHECK(found.errors[0].path == missing);
  CHECK(found.errors[0].reason == "No such file or directory");
}

TEST_CASE("an empty directory is said to be empty", "[cli][walk]") {
  TempTree t;
  fs::create_directories(t.root / "empty");
  t.file("empty/.only_hidden");
  auto found = expand_log_files({(t.root / "empty").string()});
  CHECK(found.files.empty());
  CHECK(found.errors.empty());
  CHECK(found.empty_dirs == std::vector<std::string>{(t.root / "empty").string()});
}

TEST_CASE("an unreadable directory is reported and the walk goes on", "[cli][walk]") {
  if (::geteuid() == 0) return;  // root reads everything
  TempTree t;
  t.file("ok.log");
  t.file("locked/x.log");
  fs::permissions(t.root / "locked", fs::perms::none);
  auto found = expand_log_files({t.root.string()});
  CHECK(relative(found, t.root) == std::vector<std::string>{"ok.log"});
  REQUIRE(found.errors.size() == 1);
  CHECK(found.errors[0].reason == "Permission denied");
  fs::permissions(t.root / "locked", fs::perms::owner_all);
}
