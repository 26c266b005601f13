// Parsing on a second thread beside the reading gives the same analysis as
// parsing on the reading thread: the same incidents with the same tracebacks
// (including those that need the full lookback, decided on the reading
// thread), and the findings grouped in the same OOM epochs, in log order.
#include <catch2/catch.hpp>

#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include "analyzer/analyzer.hpp"

using namespace oomlens::analyzer;

namespace {

// A deep traceback printed by 8 interleaved ranks: the OOM's own frames lie
// well above the short lookback the stream tries first.
void interleaved_oom(std::string& log, int n) {
  for (int r = 0; r < 8; ++r) log += "[rank" + std::to_string(r) + "]:Traceback (most recent call last):\n";
  for (int f = 0; f < 40; ++f)
    for (int r = 0; r < 8; ++r) {
      log += "[rank" + std::to_string(r) + "]:  File \"/work/train.py\", line " + std::to_string(100 + f) +
             ", in step" + std::to_string(f) + "\n";
      log += "[rank" + std::to_string(r) + "]:    loss = model(batch)\n";
    }
  log += "[rank3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate " + std::to_string(2 + n) +
         ".00 GiB. GPU 3 has a total capacity of 79.15 GiB of which 120.00 MiB is free. Including non-PyTorch "
         "memory, this process has 79.02 GiB memory in use. Of the allocated memory 70.00 GiB is allocated by "
         "PyTorch, and 8.00 GiB is reserved by PyTorch but unallocated.\n";
}

std::string mixed_log(std::size_t bytes) {
  std::mt19937_64 rng(7);
  std::string log;
  int n = 0;
  while (log.size() < bytes) {
    switch (rng() % 40) {
      case 0: log += "[rank1]:[2026-03-01 12:00:00,000] [WARNING] [stage3.py:2069:step] 3 pytorch allocator cache flushes since last step.\n"; break;
      case 1: log += "[rank2]:DataLoader worker (pid 4242) is killed by signal: Killed.\n"; break;
      case 2: log += "Out of memory: Killed process 4242 (python) total-vm:1234kB, anon-rss:5678kB\n"; break;
      case 3: log += "[rank0]:RuntimeError: CUDA error: an illegal memory access was encountered\n"; break;
      case 4: log += "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n"; break;
      case 5: log += "[rank4]:[E301 12:00:00.000000000 ProcessGroupNCCL.cpp:616] [Rank 4] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600123 milliseconds before timing out.\n"; break;
      case 6:
        if (rng() % 50 == 0) interleaved_oom(log, n++);
        break;
      default:
        log += "[rank" + std::to_string(rng() % 8) + "]:epoch 3 step " + std::to_string(rng() % 5000) +
               " loss 0.2311 memory_allocated 12.3 GiB\n";
    }
  }
  return log;
}

std::string summary(const Analysis& a) {
  std::ostringstream out;
  out << "lines " << a.lines << " bytes " << a.bytes << "\n";
  for (const auto& inc : a.incidents) {
    out << "incident " << inc.primary.line << " frames " << inc.primary.traceback.size();
    for (const auto& f : inc.primary.traceback) out << " " << f.file << ":" << f.line;
    out << " echoes";
    for (const auto& e : inc.echoes) out << " " << e.line;
    out << " warnings " << inc.warnings_before.size() << " collateral " << inc.collateral.size() << "\n";
  }
  for (const auto& f : a.findings) {
    out << "finding " << to_string(f.kind) << " " << f.line << " x" << f.count << " last " << f.last_line << " more";
    for (auto l : f.more_lines) out << " " << l;
    out << " " << f.detail << "\n";
  }
  return out.str();
}

Analysis analyze(const std::string& log, std::uint64_t beside_from) {
  LogAnalyzer analyzer(AnalyzerOptions{beside_from});
  for (std::size_t i = 0; i < log.size(); i += 1 << 20) analyzer.feed(std::string_view(log).substr(i, 1 << 20));
  return analyzer.finish();
}

}  // namespace

TEST_CASE("parsing beside the reading gives the same analysis as parsing in line") {
  const std::string log = mixed_log(24u << 20);
  const Analysis alone = analyze(log, std::numeric_limits<std::uint64_t>::max());
  REQUIRE(alone.incidents.size() >= 4);
  REQUIRE(alone.findings.size() >= 5);
  // The traceback above the interleaved OOMs was read whole: 40 frames.
  CHECK(alone.incidents.front().primary.traceback.size() == 40);
  const std::string expected = summary(alone);
  CHECK(summary(analyze(log, 0)) == expected);
  CHECK(summary(analyze(log, 4u << 20)) == expected);
}
