// Reading a log file for both front ends (`oomlens diagnose` and the language
// server, which reads the files of a job the editor has not opened): one
// place that streams a file through the analyzer with bounded memory.
#pragma once

#include <atomic>
#include <optional>
#include <string>

#include "analyzer/log/analyzer.hpp"

namespace oomlens::report {

// One input read through the analyzer, its events not yet grouped.
struct ReadResult {
  std::optional<analyzer::ParsedLog> log;
  bool binary = false;  // skipped: a NUL byte in the first 8 KiB (only when asked to skip)
  std::string error;    // when neither: the reason ("No such file or directory", "is a directory")
};

// Reads and parses one input ("-" = standard input) with bounded memory,
// streaming it through the analyzer with read(2). With `skip_binary`, a file
// with a NUL byte in its first 8 KiB is left unread, as ripgrep leaves it.
// `cancelled`, when given, is polled between reads: then the error is
// "cancelled".
ReadResult read_log(const std::string& path, bool skip_binary, const std::atomic<bool>* cancelled = nullptr);

}  // namespace oomlens::report
