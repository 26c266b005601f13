// A job's snapshots, one per rank, read as one: each rank's figures, the rank
// with the highest peak, and how unevenly memory was spread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/snapshot/compare.hpp"

namespace oomlens::analyzer::snapshot {

struct RankRun {
  std::int64_t rank = 0;
  std::string name;  // the file (or folder) it was read from, as given
  RunFigures figures;
};

struct JobSummary {
  std::vector<RankRun> ranks;  // ascending rank
  std::size_t highest = 0;     // index in ranks of the highest peak allocated (the first on a tie)
  std::uint64_t peak_min = 0, peak_max = 0, peak_mean = 0;
  // peak_max / peak_mean: 1.0 when every rank peaks alike; 0 without ranks.
  double imbalance = 0.0;
};

JobSummary summarize_job(std::vector<RankRun> ranks);

// The rank a file or folder name gives: the last run of digits ("rank3.pickle",
// "snapshot_rank_12", "3"); -1 without digits.
std::int64_t rank_from_name(std::string_view name);

}  // namespace oomlens::analyzer::snapshot
