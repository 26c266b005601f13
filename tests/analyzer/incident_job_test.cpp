// One job, many files: which files belong together, and one incident across them.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "analyzer/log/job.hpp"
#include "tests/analyzer/mixed_log.hpp"

using namespace oomlens::analyzer;

TEST_CASE("path_rank reads launchers' per-rank file layouts", "[incident][job]") {
  auto torchrun = path_rank("logs/run_ab12/attempt_0/3/stderr.log");
  CHECK(torchrun.rank == 3);
  CHECK(torchrun.job_key == "logs/run_ab12/attempt_0/*/");
  CHECK(path_rank("logs/run_ab12/attempt_0/3/error.json").job_key == torchrun.job_key);
  CHECK(path_rank("logs/run_ab12/attempt_1/3/stderr.log").job_key != torchrun.job_key);

  CHECK(path_rank("out/rank3.log").rank == 3);
  CHECK(path_rank("out/rank3.log").job_key == "out/rank*.log");
  CHECK(path_rank("out/train_rank_12.out").rank == 12);
  CHECK(path_rank("out/20260301120000_rank3.log").rank == 3);
  CHECK(path_rank("out/worker-2.err").rank == 2);
  CHECK(path_rank("out/rank3.stderr.log").rank == 3);
  CHECK(path_rank("out/rank_3/stdout.log").rank == 3);
  CHECK(path_rank("out/rank_3/stdout.log").job_key == "out/rank_*/");
  CHECK(path_rank("out/local_rank-1/log.txt").rank == 1);

  auto node = path_rank("out/node2.log");
  CHECK(!node.rank);
  CHECK(node.job_key == "out/node*.log");

  auto slurm = path_rank("out/train-881234-3.out");
  CHECK(slurm.weak);
  CHECK(slurm.rank == 3);
  CHECK(slurm.job_key == "out/train-881234-*.out");

  // Not ranks.
  CHECK(path_rank("fixtures/logs/torchrun_4ranks_rank2_first.log").job_key.empty());
  CHECK(path_rank("slurm-881234.out").job_key.empty());
  CHECK(path_rank("slurm-881234_3.out").job_key.empty());  // %A_%a: array tasks are separate jobs
  CHECK(path_rank("train.log").job_key.empty());
}

TEST_CASE("group_job_files puts one job's files together", "[incident][job]") {
  std::vector<std::string> paths = {
      "run/attempt_0/0/stderr.log", "run/attempt_0/0/stdout.log", "other.log",
      "run/attempt_0/1/stderr.log", "slurm/train-77-0.out",     "slurm/train-77-1.out",
      "months/log-2024-03.txt",     "months/log-2024-04.txt",   "solo/rank5.log",
  };
  auto jobs = group_job_files(paths);
  REQUIRE(jobs.size() == 6);
  CHECK(jobs[0].inputs == std::vector<std::size_t>{0, 1, 3});
  CHECK(jobs[0].ranks == std::vector<std::optional<int>>{0, 0, 1});
  CHECK(jobs[1].inputs == std::vector<std::size_t>{2});
  CHECK(jobs[2].inputs == std::vector<std::size_t>{4, 5});
  CHECK(jobs[2].ranks == std::vector<std::optional<int>>{0, 1});
  // Months are not ranks: no rank 0 among them.
  CHECK(jobs[3].inputs == std::vector<std::size_t>{6});
  CHECK(!jobs[3].ranks[0]);
  CHECK(jobs[4].inputs == std::vector<std::size_t>{7});
  // A strong pattern names the rank of a file alone.
  CHECK(jobs[5].inputs == std::vector<std::size_t>{8});
  CHECK(jobs[5].ranks[0] == 5);
}

namespace {

ParsedLog parse(const std::string& text) {
  LogAnalyzer a;
  a.feed(text);
  return a.finish_parsed();
}

const char* kOom =
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB "
    "of which 1.00 GiB is free. Of the allocated memory 70.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved "
    "by PyTorch but unallocated.\n";

// A watchdog timeout as rank `rank` prints it.
std::string watchdog(int rank) {
  return "[E301 12:10:00.000000000 ProcessGroupNCCL.cpp:607] [Rank " + std::to_string(rank) +
         "] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, "
         "NumelOut=1, Timeout(ms)=600000) ran for 600100 milliseconds before timing out.\n";
}

}  // namespace

TEST_CASE("per-rank files of one job give one incident", "[incident][job]") {
  std::vector<JobInput> in;
  in.push_back({parse("step 1\n" + watchdog(0)), "rank0.log", 0});
  in.push_back({parse(std::string("step 1\nstep 2\n") + kOom), "rank1.log", 1});
  in.push_back({parse("step 1\n" + watchdog(2)), "rank2.log", 2});
  auto a = analyze_job(std::move(in));
  REQUIRE(a.incidents.size() == 1);
  const Incident& inc = a.incidents[0];
  CHECK(inc.first_failing_rank == 1);
  CHECK(inc.primary.file == 1);
  CHECK(inc.primary.line == 3);
  CHECK(inc.first_failing_source == RankSource::path);
  REQUIRE(inc.collateral.size() == 2);
  CHECK(inc.collateral[0].file == 0);
  CHECK(inc.collateral[1].file == 2);
  CHECK(inc.collateral_ranks == std::vector<int>{0, 2});
}

TEST_CASE("without timestamps the order across files is unknown", "[incident][job]") {
  std::vector<JobInput> in;
  in.push_back({parse(kOom), "rank0.log", 0});
  in.push_back({parse(kOom), "rank1.log", 1});
  auto a = analyze_job(std::move(in));
  REQUIRE(a.incidents.size() == 1);
  const Incident& inc = a.incidents[0];
  CHECK(!inc.first_failing_rank);
  CHECK(inc.order == FailureOrder::unknown);
  CHECK(inc.oom_ranks == std::vector<int>{0, 1});
}

TEST_CASE("timestamps order ranks across files", "[incident][job]") {
  std::vector<JobInput> in;
  in.push_back({parse(std::string("2026-03-01 12:00:09,000 ERROR x\n") + kOom), "rank0.log", 0});
  in.push_back({parse(std::string("2026-03-01 12:00:04,000 ERROR x\n") + kOom), "rank1.log", 1});
  in.push_back({parse(std::string("2026-03-01 15:00:00,000 ERROR later\n") + kOom), "rank2.log", 2});
  auto a = analyze_job(std::move(in));
  REQUIRE(a.incidents.size() == 2);  // rank 2's failure three hours later is another incident
  CHECK(a.incidents[0].first_failing_rank == 1);
  CHECK(a.incidents[0].order == FailureOrder::timestamps);
  CHECK(a.incidents[0].oom_ranks == std::vector<int>{0, 1});
  CHECK(a.incidents[1].oom_ranks == std::vector<int>{2});
}

TEST_CASE("a single input without a path rank is analysed as before", "[incident][job]") {
  std::string log = std::string("[rank0]:") + kOom + "[rank1]:" + kOom;
  std::vector<JobInput> in;
  in.push_back({parse(log), "x.log", std::nullopt});
  auto job = analyze_job(std::move(in));
  auto direct = analyze_text(log);
  REQUIRE(job.incidents.size() == direct.incidents.size());
  CHECK(job.incidents[0].first_failing_rank == direct.incidents[0].first_failing_rank);
  CHECK(job.incidents[0].primary.line == direct.incidents[0].primary.line);
}

TEST_CASE("the incidents do not depend on the order the events arrive in", "[incident][job]") {
  // Two files of a job, each with OOMs that group (echoes, ranks) and one
  // that stands apart; the second copy of the job hands its events over
  // reversed, which the grouping must put back in (file, line) order.
  // The later failure asks for another size, three hours on.
  const std::string first = kOom;
  std::string later = kOom;
  later.replace(later.find("2.00 GiB"), 8, "4.00 GiB");
  auto at = [](const char* time, const std::string& message) {
    return std::string("2026-03-01 ") + time + ",000 ERROR x\n" + message;
  };
  const std::string log0 = at("12:00:04", first) + "step 1\n" + at("12:00:04", first) + std::string(40, '\n') +
                           at("15:00:00", later);
  const std::string log1 = at("12:00:05", first) + watchdog(1) + at("15:00:01", later);
  auto job = [&](bool reversed) {
    std::vector<JobInput> in;
    in.push_back({parse(log0), "rank0.log", 0});
    in.push_back({parse(log1), "rank1.log", 1});
    REQUIRE(in[0].log.events.size() == 3);
    if (reversed)
      for (auto& input : in) std::reverse(input.log.events.begin(), input.log.events.end());
    return analyze_job(std::move(in));
  };
  const Analysis in_order = job(false);
  const Analysis reversed = job(true);
  REQUIRE(in_order.incidents.size() >= 2);
  CHECK(oomlens::analyzer::testing::summary(reversed) == oomlens::analyzer::testing::summary(in_order));
}
