// Reading a long log file in two halves side by side, on two threads, as the
// language server reads a long document (analyzer/log/segmented_log.hpp):
// the file is cut at a line start near its middle, and each half is read
// with pread(2) into its analyzer's own bounded buffer, with a margin past
// the cut (more than a region reaches) whose results are dropped. The second
// half's lines are numbered from the first half's count. Nothing is mapped:
// memory stays at two readers' buffers whatever the file does while read.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "report/files.hpp"

namespace oomlens::report {

// The file read in two halves, or nothing when it is not worth it (a short
// file, not a regular file, no line start near the middle): then `error` is
// empty and the caller reads the file in one pass. On a read error, nothing
// with the reason in `error`.
std::optional<analyzer::ParsedLog> read_log_in_halves(const OpenFile& file, const std::atomic<bool>* cancelled,
                                                      std::string& error);

}  // namespace oomlens::report
