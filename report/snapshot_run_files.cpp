#include "report/snapshot_run_files.hpp"

#include <tuple>
#include <utility>
#include <vector>

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;

RunFilesError stopped() { return {.path = {}, .error = {}, .stopped = true}; }

bool asked(const StopAsked& stop) { return stop && stop(); }

// One run's analysis, or why there is none; the snapshot itself is dropped
// before the next file is read.
snap::Expected<snap::Analysis, RunFilesError> analyze_file(const std::string& path,
                                                          const snap::AnalysisOptions& options, const StopAsked& stop) {
  auto snapshot = read_snapshot_file(path);
  if (!snapshot) return RunFilesError{.path = path, .error = snapshot.error()};
  if (asked(stop)) return stopped();
  return snap::analyze(*snapshot, options);
}

}  // namespace

snap::Expected<snap::Comparison, RunFilesError> compare_snapshot_files(const std::string& path_a,
                                                                       const std::string& path_b,
                                                                       const snap::AnalysisOptions& options,
                                                                       const StopAsked& stop) {
  snap::AnalysisOptions every_site = options;  // sites are matched across the runs: none may be cut yet
  every_site.top_sites = static_cast<std::size_t>(-1);
  auto a = analyze_file(path_a, every_site, stop);
  if (!a) return a.error();
  if (asked(stop)) return stopped();
  auto b = analyze_file(path_b, every_site, stop);
  if (!b) return b.error();
  if (asked(stop)) return stopped();
  return snap::compare_runs(*a, *b, options.top_sites);
}

snap::Expected<JobRuns, RunFilesError> read_job_folder(const std::string& dir, const snap::AnalysisOptions& options,
                                                       const StopAsked& stop) {
  const auto files = rank_snapshot_files(dir);
  if (files.empty())
    return RunFilesError{.path = dir,
                         .error = {SnapshotFileError::Kind::unreadable,
                                   "is a directory with no snapshot in it (rank0.pickle, rank1.pickle, ... or one "
                                   "folder per rank)"}};
  std::vector<snap::RankRun> runs;
  JobRuns job;
  std::int64_t highest_rank = 0;
  snap::RunFigures highest_figures;
  for (const auto& file : files) {
    auto analysis = analyze_file(file.path, options, stop);
    if (!analysis) return analysis.error();
    if (asked(stop)) return stopped();
    snap::RunFigures figures = snap::run_figures(*analysis);
    const bool higher = runs.empty() || std::tuple(figures.peak_allocated, -file.rank) >
                                            std::tuple(highest_figures.peak_allocated, -highest_rank);
    if (higher) job.highest = std::move(*analysis), highest_figures = figures, highest_rank = file.rank;
    runs.push_back({file.rank, file.name, std::move(figures)});
  }
  job.summary = snap::summarize_job(std::move(runs));
  return job;
}

}  // namespace oomlens::report
