// Reading several snapshots as runs, for both front ends (the CLI's
// --compare A B and FOLDER, the language server's commands): one snapshot in
// memory at a time, only each run's analysis or figures kept, and the same
// refusals with the same words.
#pragma once

#include <functional>
#include <string>

#include "analyzer/snapshot/analysis.hpp"
#include "analyzer/snapshot/compare.hpp"
#include "analyzer/snapshot/ranks.hpp"
#include "report/snapshot_file.hpp"

namespace oomlens::report {

// Why the runs could not be read: the file (or folder) at fault and its
// error, or that the caller asked to stop between two files.
struct RunFilesError {
  std::string path;
  SnapshotFileError error;
  bool stopped = false;
};

// Asked between files (and between reading and analysing one): true gives up.
using StopAsked = std::function<bool()>;

// Two runs compared by their user frames, each list cut at options.top_sites.
analyzer::snapshot::Expected<analyzer::snapshot::Comparison, RunFilesError> compare_snapshot_files(
    const std::string& path_a, const std::string& path_b, const analyzer::snapshot::AnalysisOptions& options,
    const StopAsked& stop = {});

// A folder of per-rank snapshots (rank_snapshot_files): every rank's figures,
// and the analysis of the rank with the highest peak (the lowest rank on a tie).
struct JobRuns {
  analyzer::snapshot::JobSummary summary;
  analyzer::snapshot::Analysis highest;
};
analyzer::snapshot::Expected<JobRuns, RunFilesError> read_job_folder(const std::string& dir,
                                                                     const analyzer::snapshot::AnalysisOptions& options,
                                                                     const StopAsked& stop = {});

}  // namespace oomlens::report
