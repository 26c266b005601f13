// One job, many files: launchers write a file per rank (torchrun --log-dir,
// SLURM --output=%x-%j-%t.out, DeepSpeed --enable_each_rank_log). Which files
// belong together and which rank each holds is read from their paths (never
// from the disk: the caller reads the files); their events are then merged
// into one timeline and grouped as one log.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analyzer/log/analyzer.hpp"

namespace oomlens::analyzer {

// What a path says about its file.
struct PathRank {
  // Files with the same non-empty key are one job's ("logs/attempt_0/*",
  // "out/train-8812-*.out").
  std::string job_key;
  // The rank the path names, when it names one (a node index does not).
  std::optional<int> rank;
  // A weak pattern (SLURM's "%j-%t": two numbers) counts only when another
  // file shares the key; strong ones ("rank3", "attempt_0/3/") count alone.
  bool weak = false;
};

// Recognised, on '/'-separated paths:
//   torchrun --log-dir     ".../attempt_K/<local_rank>/{stdout,stderr}.log|error.json"
//   a rank directory       ".../rank3/...", "rank_3", "local_rank-3", "worker3"
//   a rank file name       "rank3.log", "train_rank3.out", "20260301_rank3.log", "worker-3.err"
//   a node file name       "node3.log", "host-3.out" (grouped, no rank)
//   SLURM %j-%t (weak)     "train-881234-3.out", "881234.3.err" ('_' is not taken: %A_%a
//                          names array tasks, which are separate jobs)
PathRank path_rank(std::string_view path);

// A '/'-separated path's components as path_rank reads them: "/a/b" gives
// "", "a", "b" (so a job key and its path line up component by component).
std::vector<std::string> path_components(std::string_view path);

// One job's files: indexes into the caller's paths, in input order, and the
// rank each path names (none where it names none, or the pattern was weak and
// unconfirmed).
struct JobFiles {
  std::vector<std::size_t> inputs;
  std::vector<std::optional<int>> ranks;
};

// Groups inputs into jobs, in the order of each job's first file. A file that
// shares its key with no other (or has none) is a job of its own. A weak
// pattern groups files only when one of them is rank 0 (SLURM's %t starts
// there; "log-2024-03.txt", "log-2024-04.txt" are months, not ranks).
std::vector<JobFiles> group_job_files(const std::vector<std::string>& paths);

// One input of a job: what it yielded, and what its path says.
struct JobInput {
  ParsedLog log;
  std::string name;         // for notes that name the file
  std::optional<int> rank;  // from the path
};

// Merges the inputs' events into one timeline and groups them: events and
// findings get their input's index in `file`. A single input without a path
// rank gives exactly what LogAnalyzer::finish() gives.
Analysis analyze_job(std::vector<JobInput> inputs);

}  // namespace oomlens::analyzer
