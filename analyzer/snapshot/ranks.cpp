#include "analyzer/snapshot/ranks.hpp"

#include <algorithm>
#include <charconv>

namespace oomlens::analyzer::snapshot {

std::int64_t rank_from_name(std::string_view name) {
  if (auto dot = name.find('.'); dot != std::string_view::npos) name = name.substr(0, dot);  // not "pickle5"
  std::size_t end = name.find_last_of("0123456789");
  if (end == std::string_view::npos) return -1;
  std::size_t start = end;
  while (start > 0 && name[start - 1] >= '0' && name[start - 1] <= '9') --start;
  std::int64_t rank = -1;
  auto [ptr, ec] = std::from_chars(name.data() + start, name.data() + end + 1, rank);
  return ec == std::errc() ? rank : -1;
}

JobSummary summarize_job(std::vector<RankRun> ranks) {
  JobSummary job;
  std::stable_sort(ranks.begin(), ranks.end(), [](const RankRun& x, const RankRun& y) { return x.rank < y.rank; });
  job.ranks = std::move(ranks);
  if (job.ranks.empty()) return job;
  long double sum = 0;
  job.peak_min = job.ranks[0].figures.peak_allocated;
  for (std::size_t i = 0; i < job.ranks.size(); ++i) {
    const std::uint64_t peak = job.ranks[i].figures.peak_allocated;
    sum += static_cast<long double>(peak);
    job.peak_min = std::min(job.peak_min, peak);
    if (peak > job.peak_max) job.peak_max = peak, job.highest = i;
  }
  job.peak_mean = static_cast<std::uint64_t>(sum / static_cast<long double>(job.ranks.size()));
  job.imbalance = job.peak_mean ? static_cast<double>(job.peak_max) / static_cast<double>(job.peak_mean) : 0.0;
  return job;
}

}  // namespace oomlens::analyzer::snapshot
