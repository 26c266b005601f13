// Reading a long log file in two halves side by side, on two threads, as the
// language server reads a long document (analyzer/log/segmented_log.hpp):
// the file is cut at a line start near its middle, and each half is scanned
// in place in a read-only mapping (report/mapped_range.hpp), with a margin
// past the cut (more than a region reaches) whose results are dropped. The
// second half's lines are numbered from the first half's count. Each half
// releases the pages behind its scan, so memory stays bounded whatever the
// file's size; a file cut short while mapped is read again in one pass.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "analyzer/log/analyzer.hpp"
#include "report/files.hpp"

namespace oomlens::report {

// The file read in two halves, or nothing when it is not worth it or not
// safe (a short file, not a regular file, no line start near the middle, a
// mapping refused, the file cut short while read): then `error` is empty and
// the caller reads the file in one pass. Cancelled: nothing, with "cancelled"
// in `error`.
std::optional<analyzer::ParsedLog> read_log_in_halves(const OpenFile& file, const std::atomic<bool>* cancelled,
                                                      std::string& error);

}  // namespace oomlens::report
