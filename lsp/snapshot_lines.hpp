// Memory alive at the peak of a snapshot's trace, by the line of code whose
// call allocated it: what the editor shows on the user's own lines once a
// snapshot of their script's run was analysed (oomlens.analyzeSnapshot), as
// an inlay hint at the line's end and a hover with the breakdown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/snapshot/analysis.hpp"

namespace oomlens::lsp {

// A share of a line's memory: the blocks of one allocation site, reached
// from the line through `depth` calls (0: the line allocated them itself).
struct LineSite {
  std::size_t site = 0;   // index into SnapshotLines::sites
  std::size_t frame = 0;  // the line's frame in the site's stack (innermost is 0)
};

struct LineMemory {
  std::uint64_t bytes = 0;
  std::size_t blocks = 0;
  std::vector<LineSite> sites;  // most bytes first
};

struct SnapshotLines {
  std::string snapshot;  // the file analysed
  std::int64_t device = 0;
  std::uint64_t peak_allocated = 0;
  std::size_t peak_entry = 0, entries = 0;
  std::vector<analyzer::snapshot::SiteFrames> sites;  // alive at the peak, most bytes first
  // By the frame's file name as recorded, then its 1-based line.
  std::map<std::string, std::map<std::int64_t, LineMemory>> files;
};

// From the analysis of a snapshot read with ReplayOptions::all_peak_sites:
// the trace of the device that ran out of memory, else the one whose peak
// is highest. Nothing when no trace was recorded.
std::optional<SnapshotLines> snapshot_lines(const analyzer::snapshot::Analysis& analysis, std::string snapshot);

// The lines of the document at `path` (absolute): frames that name it, or
// name a path relative to one of the workspace folders that resolves to it.
std::vector<std::pair<std::int64_t, const LineMemory*>> lines_of_document(const SnapshotLines& lines,
                                                                          const std::string& path,
                                                                          const std::vector<std::string>& folders);

// "+12.7 GiB at peak, 291 blocks"
std::string line_memory_label(const LineMemory& memory);
// The breakdown: the figures, then each site's share and its call path from
// the allocation up to this line.
std::string line_memory_markdown(const SnapshotLines& lines, const LineMemory& memory);

}  // namespace oomlens::lsp
