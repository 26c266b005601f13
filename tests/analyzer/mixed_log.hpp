// A generated log with what makes the analyzer's work hard to split: OOMs
// under deep tracebacks of 8 interleaved ranks, look-alikes, pressure
// warnings, settings and collateral failures; and a summary of an analysis
// that two analyses must agree on (lines, offsets, classes, tracebacks,
// echoes, grouped findings).
#pragma once

#include <cstdint>
#include <random>
#include <sstream>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "analyzer/log/classify.hpp"

namespace oomlens::analyzer::testing {


// A deep traceback printed by 8 interleaved ranks: the OOM's own frames lie
// well above the short lookback the stream tries first.
inline void interleaved_oom(std::string& log, int n) {
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

inline std::string mixed_log(std::size_t bytes, std::uint64_t seed = 7) {
  std::mt19937_64 rng(seed);
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

inline std::string summary(const Analysis& a) {
  std::ostringstream out;
  out << "lines " << a.lines << " bytes " << a.bytes << "\n";
  for (const auto& inc : a.incidents) {
    out << "incident " << inc.primary.line << " at " << inc.primary.offset << " " << to_string(inc.verdict.cls)
        << " rank " << inc.first_failing_rank.value_or(-1) << " frames " << inc.primary.traceback.size();
    for (const auto& f : inc.primary.traceback) out << " " << f.file << ":" << f.line;
    out << " echoes";
    for (const auto& e : inc.echoes) out << " " << e.line;
    out << " warnings " << inc.warnings_before.size() << " collateral " << inc.collateral.size() << "\n";
  }
  for (const auto& f : a.findings) {
    out << "finding " << to_string(f.kind) << " " << f.line << " at " << f.offset << " x" << f.count << " last " << f.last_line << " more";
    for (auto l : f.more_lines) out << " " << l;
    out << " " << f.detail << "\n";
  }
  return out.str();
}

}  // namespace oomlens::analyzer::testing
