// What `oomlens verify` learns about one run of a job: from outside (exit
// status, wall time, the OOM its output shows) and from inside, through the
// probe every Python process of the job loads (cli/verify/probe/).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/verdict.hpp"

namespace oomlens::rules::verify {

// One CUDA device as one process saw it (torch.cuda.memory_stats).
struct DeviceMeasure {
  int index = 0;
  std::string name;
  std::uint64_t total_memory = 0;
  std::uint64_t peak_reserved = 0;
  std::uint64_t peak_allocated = 0;
  std::uint64_t inactive_split_peak = 0;
  std::uint64_t num_alloc_retries = 0;
  std::uint64_t num_ooms = 0;
};

// An OOM as PyTorch's out-of-memory observer reported it.
struct ObservedOom {
  int device = 0;
  std::uint64_t requested = 0;
  double seconds = 0;  // since the process started
};

// The allocator's settings as PyTorch read them back in the process.
struct AllocatorReadback {
  std::string backend;  // "native", "cudaMallocAsync"; empty: torch cannot tell
  // allocator_settings of torch.cuda.memory._snapshot(), where torch has it:
  // "expandable_segments" -> "true", "max_split_size" -> "536870912" ...
  std::map<std::string, std::string> settings;
  std::optional<bool> expandable_segments_seen;  // some segment is expandable
};

// One process's probe report.
struct ProcessMeasure {
  int pid = 0;
  std::optional<int> rank;
  std::string reason;  // when it was written: "exit", "oom", "sigterm"
  std::string torch_version;
  bool cuda_initialized = false;
  double seconds = 0;
  // The allocator variables (PYTORCH_CUDA_ALLOC_CONF ...) in the process's
  // environment when CUDA started; none when CUDA started outside torch.cuda's
  // lazy initialisation and the probe could not see the moment.
  std::optional<std::map<std::string, std::string>> env_at_cuda_init;
  std::vector<DeviceMeasure> devices;
  AllocatorReadback allocator;
  std::vector<ObservedOom> ooms;
  std::string snapshot;  // path of the snapshot dumped at the OOM
};

// The OOM a run's output shows, as `oomlens diagnose` reads it.
struct LoggedOom {
  analyzer::OomClass cls = analyzer::OomClass::unquantified;
  std::string rule;     // OOM101 ...
  std::string message;  // the diagnosis's one line
};

struct RunMeasure {
  std::string label;  // "A", "B"
  bool started = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  bool timed_out = false;    // stopped by --max-seconds
  bool interrupted = false;  // stopped by Ctrl-C
  double wall_seconds = 0;
  std::optional<LoggedOom> oom;
  std::vector<ProcessMeasure> processes;  // every probe report, CUDA or not
  std::string log_path;
};

// Sums over a run's processes: the largest peak of any device of any rank
// (each rank has its own device budget), retries and OOMs added up.
struct RunTotals {
  bool measured = false;  // some process used CUDA
  std::uint64_t peak_reserved = 0;
  std::uint64_t peak_allocated = 0;
  std::uint64_t num_alloc_retries = 0;
  std::uint64_t num_ooms = 0;
  std::optional<double> first_oom_seconds;  // the earliest observed OOM
};

RunTotals totals_of(const RunMeasure& run);

// A run ran out of memory: its output shows an OOM, or a process counted one.
bool ran_out_of_memory(const RunMeasure& run);

}  // namespace oomlens::rules::verify
