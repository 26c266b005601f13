// One incident, many ranks: who failed first, and each rank's own class.
#include <catch2/catch.hpp>

#include <string>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/job.hpp"

using namespace oomlens::analyzer;

namespace {

// An Era-H message with the numbers of one rank.
std::string full_oom(int gpu, const char* request, const char* free, const char* allocated, const char* unallocated) {
  return std::string("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ") + request + ". GPU " +
         std::to_string(gpu) + " has a total capacity of 79.15 GiB of which " + free +
         " is free. Of the allocated memory " + allocated + " is allocated by PyTorch, and " + unallocated +
         " is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
         "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
         "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n";
}

Incident only(const Analysis& a) {
  REQUIRE(a.incidents.size() == 1);
  return a.incidents[0];
}

}  // namespace

TEST_CASE("timestamps decide the first failing rank, not print order", "[incident][ranks]") {
  std::string log;
  log += "[rank1]:2026-03-01 12:00:09,500 ERROR step 40 failed\n";
  log += "[rank1]:" + full_oom(1, "2.00 GiB", "1.10 GiB", "70.00 GiB", "6.00 GiB");
  log += "[rank0]:2026-03-01 12:00:07,250 ERROR step 40 failed\n";
  log += "[rank0]:" + full_oom(0, "2.00 GiB", "1.20 GiB", "69.90 GiB", "6.10 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 0);
  CHECK(inc.order == FailureOrder::timestamps);
  CHECK(inc.primary.line == 4);
  CHECK(inc.same_second.empty());
  REQUIRE(inc.per_rank.size() == 2);
  CHECK(inc.per_rank[0].rank == 0);
  CHECK(inc.per_rank[1].rank == 1);
}

TEST_CASE("two ranks failing in the same second are named", "[incident][ranks]") {
  std::string log;
  log += "[rank3]:2026-03-01 12:00:05,480 ERROR oom\n";
  log += "[rank3]:" + full_oom(3, "2.00 GiB", "1.10 GiB", "70.00 GiB", "6.00 GiB");
  log += "[rank1]:2026-03-01 12:00:05,120 ERROR oom\n";
  log += "[rank1]:" + full_oom(1, "2.00 GiB", "1.10 GiB", "70.00 GiB", "6.00 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 1);
  CHECK(inc.same_second == std::vector<int>{1, 3});
  bool said = false;
  for (const auto& n : inc.notes) said = said || n.find("same second") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a tie at second resolution falls back to print order within one file", "[incident][ranks]") {
  std::string log;
  log += "(VllmWorker rank=2 pid=300) ERROR 03-01 12:00:05 [executor.py:9] " +
         full_oom(2, "1.00 GiB", "512.00 MiB", "70.00 GiB", "1.00 GiB");
  log += "(VllmWorker rank=0 pid=100) ERROR 03-01 12:00:05 [executor.py:9] " +
         full_oom(0, "1.00 GiB", "512.00 MiB", "70.00 GiB", "1.00 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 2);
  CHECK(inc.same_second == std::vector<int>{2, 0});
  CHECK(inc.oom_ranks == std::vector<int>{0, 2});
}

TEST_CASE("a bare CUDA error first does not make the burst unquantified", "[incident][ranks]") {
  std::string log;
  log += "[rank0]:RuntimeError: CUDA error: out of memory\n";
  log += "[rank1]:" + full_oom(1, "4.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  log += "[rank2]:" + full_oom(2, "4.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 0);  // stays truthful
  CHECK(inc.verdict.cls == OomClass::capacity);
  CHECK(inc.primary.rank == 1);
  REQUIRE(inc.per_rank.size() == 3);
  CHECK(inc.per_rank[0].rank == 0);
  CHECK(inc.per_rank[0].cls == OomClass::unquantified);
  CHECK(inc.per_rank[1].cls == OomClass::capacity);
  bool said = false;
  for (const auto& n : inc.notes) said = said || n.find("carries no numbers") != std::string::npos;
  CHECK(said);
}

TEST_CASE("each rank keeps its own class", "[incident][ranks]") {
  std::string log;
  log += "[rank0]:" + full_oom(0, "8.00 GiB", "800.00 MiB", "40.00 GiB", "30.00 GiB");  // fragmentation
  log += "[rank1]:" + full_oom(1, "8.00 GiB", "800.00 MiB", "77.00 GiB", "1.30 GiB");  // capacity
  const Incident inc = only(analyze_text(log));
  CHECK(inc.verdict.cls == OomClass::fragmentation);
  REQUIRE(inc.per_rank.size() == 2);
  CHECK(inc.per_rank[0].cls == OomClass::fragmentation);
  CHECK(inc.per_rank[1].cls == OomClass::capacity);
  CHECK(inc.per_rank[1].numbers.allocated);
}

TEST_CASE("the launcher names the rank when the lines carry none", "[incident][ranks][launcher]") {
  std::string log;
  log += full_oom(1, "2.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  log += "E0301 12:00:09.000000 4242 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) "
         "local_rank: 1 (pid: 5151) of binary: /usr/bin/python3\n";
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 1);
  CHECK(inc.first_failing_source == RankSource::launcher);
  CHECK(inc.collateral_ranks.empty());
}

TEST_CASE("ChildFailedError's root cause orders ranks without timestamps", "[incident][ranks][launcher]") {
  std::string log;
  log += "[default0]:" + full_oom(0, "2.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  log += "[default3]:" + full_oom(3, "2.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  log += "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n"
         "============================================================\n"
         "train.py FAILED\n"
         "------------------------------------------------------------\n"
         "Root Cause (first observed failure):\n"
         "[0]:\n"
         "  time      : 2026-03-01_12:00:05\n"
         "  rank      : 3 (local_rank: 3)\n"
         "  exitcode  : 1 (pid: 4244)\n"
         "============================================================\n";
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 3);
  CHECK(inc.order == FailureOrder::launcher);
  CHECK(inc.collateral_ranks.empty());
}

TEST_CASE("NCCL's device index stands in for a rank, and says so", "[incident][ranks][nccl]") {
  std::string log =
      "node4:7310:7402 [2] include/alloc.h:103 NCCL WARN Cuda failure 'out of memory'\n"
      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, "
      "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
      "ncclUnhandledCudaError: Call to CUDA function failed.\n"
      "Last error:\n"
      "Cuda failure 'out of memory'\n";
  const Incident inc = only(analyze_text(log));
  CHECK(inc.first_failing_rank == 2);
  CHECK(inc.first_failing_source == RankSource::device_index);
  bool said = false;
  for (const auto& n : inc.notes) said = said || n.find("device index") != std::string::npos;
  CHECK(said);
}

TEST_CASE("a launcher summary echo is attributed to the rank it repeats", "[incident][ranks]") {
  std::string log;
  log += "[rank2]:" + full_oom(2, "2.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  log += "  " + full_oom(2, "2.00 GiB", "1.00 GiB", "70.00 GiB", "500.00 MiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.oom_ranks == std::vector<int>{2});
  REQUIRE(inc.per_rank.size() == 1);
}

namespace {

// An unprefixed, timestamped OOM under its own traceback: `call` is the
// user's line it went through.
std::string stamped_oom(const char* time, int gpu, int call, const char* request = "264.00 MiB") {
  const std::string at = std::string("2026-03-07 ") + time + " ";
  return at + "Traceback (most recent call last):\n" + at + "  File \"/home/user/proj/train.py\", line " +
         std::to_string(call) + ", in <module>\n" + at + "    loss.backward()\n" + at +
         full_oom(gpu, request, "132.00 MiB", "78.00 GiB", "100.00 MiB");
}

}  // namespace

TEST_CASE("an unprefixed burst stamped within seconds is one failure, whatever GPU each names", "[incident][ranks]") {
  // Nodes of 8 GPUs: the fourth message names GPU 4 again (another node's);
  // each went through another call with other figures, so only the times
  // tie them.
  std::string log = "2026-03-07 07:28:20,000 INFO step 900\n";
  log += stamped_oom("07:28:21,239", 6, 514, "264.00 MiB");
  log += stamped_oom("07:28:21,241", 2, 515, "690.00 MiB");
  log += stamped_oom("07:28:21,260", 4, 516, "1.00 GiB");
  log += stamped_oom("07:28:21,269", 4, 517, "2.00 GiB");
  const Incident inc = only(analyze_text(log));
  CHECK(inc.echoes.size() == 3);
}

TEST_CASE("unprefixed OOMs minutes apart through other calls stay separate failures", "[incident][ranks]") {
  std::string log = "2026-03-07 07:28:20,000 INFO step 900\n";
  log += stamped_oom("07:28:21,239", 4, 514);
  log += "2026-03-07 07:28:30,000 INFO retrying with a smaller batch\n";
  log += stamped_oom("07:31:02,500", 4, 517, "1.25 GiB");  // not an echo: other figures
  CHECK(analyze_text(log).incidents.size() == 2);
}
