// Which files the language server reads with a log that is one rank's file
// of a job: the directory of the job key's first rank component, walked as
// `oomlens diagnose DIR` walks it, and bounded.
#include <catch2/catch.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "lsp/job_siblings.hpp"
#include "tests/temp_tree.hpp"

using namespace oomlens::lsp;
using oomlens::testing::TempTree;
namespace fs = std::filesystem;

namespace {

std::vector<std::string> relative(const JobSiblings& job, const TempTree& t) {
  std::vector<std::string> out;
  for (const auto& p : job.paths) out.push_back(fs::path(p).lexically_relative(t.root).string());
  return out;
}

}  // namespace

TEST_CASE("a torchrun log directory: every file under the attempt's rank directories", "[lsp][job]") {
  TempTree t;
  for (const char* rank : {"0", "1", "2", "3"}) t.file(std::string("run/attempt_0/") + rank + "/stderr.log");
  t.file("run/attempt_0/0/stdout.log");
  t.file("run/attempt_0/0/.stderr.log.swp");  // an editor's swap file: hidden
  t.file("run/attempt_0/extra/stderr.log");   // not a rank directory
  t.file("run/attempt_1/0/stderr.log");       // another attempt: another job
  auto job = find_job_siblings(t.path("run/attempt_0/2/stderr.log"));
  REQUIRE(job);
  CHECK(relative(*job, t) == std::vector<std::string>{"run/attempt_0/0/stderr.log", "run/attempt_0/0/stdout.log",
                                                      "run/attempt_0/1/stderr.log", "run/attempt_0/2/stderr.log",
                                                      "run/attempt_0/3/stderr.log"});
  CHECK(job->self == 3);
  CHECK(job->ranks == std::vector<std::optional<int>>{0, 0, 1, 2, 3});
  CHECK_FALSE(job->truncated);
}

TEST_CASE("rank files: hidden files and symbolic links are not read", "[lsp][job]") {
  TempTree t;
  for (const char* name : {"rank0.log", "rank1.log", "rank2.log", "train.log", "rank3.txt"}) t.file(std::string("logs/") + name);
  t.file("logs/.rank4.log");
  fs::create_symlink(t.root / "logs/rank0.log", t.root / "logs/rank5.log");
  fs::create_directory(t.root / "logs/rank6.log");  // a directory named like one
  auto job = find_job_siblings(t.path("logs/rank1.log"));
  REQUIRE(job);
  CHECK(relative(*job, t) == std::vector<std::string>{"logs/rank0.log", "logs/rank1.log", "logs/rank2.log"});
  CHECK(job->self == 1);
}

TEST_CASE("a symbolic link to a rank directory is not followed", "[lsp][job]") {
  TempTree t;
  t.file("a/attempt_0/0/stderr.log");
  t.file("a/attempt_0/1/stderr.log");
  t.file("elsewhere/stderr.log");
  fs::create_directory_symlink(t.root / "elsewhere", t.root / "a/attempt_0/2");
  auto job = find_job_siblings(t.path("a/attempt_0/0/stderr.log"));
  REQUIRE(job);
  CHECK(relative(*job, t) == std::vector<std::string>{"a/attempt_0/0/stderr.log", "a/attempt_0/1/stderr.log"});
}

TEST_CASE("a file of no job: no rank in its path, or no other file shares its key", "[lsp][job]") {
  TempTree t;
  t.file("x/train.log");
  t.file("x/eval.log");
  t.file("y/rank3.log");
  CHECK_FALSE(find_job_siblings(t.path("x/train.log")));
  CHECK_FALSE(find_job_siblings(t.path("y/rank3.log")));
  CHECK(job_key_of(t.path("x/train.log")).empty());
  CHECK(job_key_of(t.path("y/rank3.log")) == t.path("y/rank*.log"));
}

TEST_CASE("SLURM's %j-%t is a job only with a rank 0 among the files", "[lsp][job]") {
  TempTree t;
  t.file("out/train-881234-1.out");
  t.file("out/train-881234-2.out");
  CHECK_FALSE(find_job_siblings(t.path("out/train-881234-2.out")));
  t.file("out/train-881234-0.out");
  auto job = find_job_siblings(t.path("out/train-881234-2.out"));
  REQUIRE(job);
  CHECK(job->paths.size() == 3);
  CHECK(job->ranks[2] == 2);
}

TEST_CASE("open documents not on disk take part", "[lsp][job]") {
  TempTree t;
  t.file("logs/rank0.log");
  auto job = find_job_siblings(t.path("logs/rank0.log"), {t.path("logs/rank1.log"), t.path("other/rank1.log")});
  REQUIRE(job);
  CHECK(relative(*job, t) == std::vector<std::string>{"logs/rank0.log", "logs/rank1.log"});
}

TEST_CASE("the walk stops at its bound and keeps the document", "[lsp][job]") {
  TempTree t;
  for (int r = 0; r < 300; ++r) t.file("logs/rank" + std::to_string(r) + ".log");
  auto job = find_job_siblings(t.path("logs/rank299.log"));
  REQUIRE(job);
  CHECK(job->paths.size() == kMaxJobFiles);
  CHECK(job->truncated);
  CHECK(job->paths[job->self] == t.path("logs/rank299.log"));
}
