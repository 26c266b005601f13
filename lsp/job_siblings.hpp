// The other files of a log's job, found on disk: a launcher that writes a
// file per rank (torchrun --log-dir, SLURM %x-%j-%t.out, rank3.log) puts
// them beside each other, so the walk is the one directory pattern the
// path's job key names (analyzer/log/job.hpp), not the workspace.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace oomlens::lsp {

struct JobSiblings {
  // The job's files, the document's own among them, in the order a
  // directory walk in name order meets them (as `oomlens diagnose DIR`
  // reads them): the order of the job's inputs.
  std::vector<std::string> paths;
  std::vector<std::optional<int>> ranks;  // what each path names (group_job_files)
  std::size_t self = 0;                   // the document's index in `paths`
  bool truncated = false;                 // the walk stopped at its bound: the job may have more files
};

// At most this many files of one job are read: a job of a thousand ranks
// would otherwise make every keystroke in one of its logs read them all.
constexpr std::size_t kMaxJobFiles = 256;
// At most this many directory entries are looked at in one walk, so that a
// rank file in a directory of a million others costs no more than this.
constexpr std::size_t kMaxWalkEntries = 16384;

// The files of the job `path` belongs to, or nothing when it is a job of its
// own (no rank in its path, or no other file shares its key, or a weak
// pattern that no rank 0 confirms). `also` are paths to consider besides
// those on disk (documents the editor holds that may not be saved yet).
// Regular, non-hidden files only; symbolic links are never followed.
std::optional<JobSiblings> find_job_siblings(const std::string& path, const std::vector<std::string>& also = {});

// The job key of a path, empty when it names no rank: files with equal keys
// may be one job's.
std::string job_key_of(const std::string& path);

}  // namespace oomlens::lsp
