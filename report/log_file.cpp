#include <algorithm>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "report/files.hpp"
#include "report/log_file.hpp"
#include "report/log_pieces.hpp"

namespace oomlens::report {

ReadResult read_log(const std::string& path, bool skip_binary, const std::atomic<bool>* cancelled) {
  ReadResult result;
  FileError error;
  auto file = OpenFile::open(path, error, /*dash_is_stdin=*/true);
  if (!file) {
    result.error = error.reason;
    return result;
  }
  // A long regular file is read in pieces side by side (report/log_pieces.hpp).
  // Anything else is read in one pass into the analyzer's buffer; memory
  // stays at the buffer and the lookback.
  if (file->regular()) ::posix_fadvise(file->fd(), 0, 0, POSIX_FADV_SEQUENTIAL);
  // 1 MiB reads: large enough to amortise the syscall, small enough to stay in
  // cache for the scanner that runs right after.
  constexpr std::size_t kRead = 1 << 20;
  // ripgrep's test for a binary file: a NUL byte in its first 8 KiB.
  constexpr std::size_t kBinaryProbe = 8 * 1024;
  if (file->regular()) {
    if (skip_binary) {
      char probe[kBinaryProbe];
      const ssize_t got = ::pread(file->fd(), probe, sizeof probe, 0);
      if (got > 0 && std::memchr(probe, '\0', static_cast<std::size_t>(got)) != nullptr) {
        result.binary = true;
        return result;
      }
    }
    std::string pieces_error;
    if (auto log = read_log_in_pieces(*file, cancelled, pieces_error)) {
      result.log = std::move(log);
      return result;
    }
    if (!pieces_error.empty()) {
      result.error = pieces_error;
      return result;
    }
  }
  analyzer::LogAnalyzer analyzer;
  std::size_t probed = 0;
  for (;;) {
    if (cancelled && cancelled->load(std::memory_order_relaxed)) {
      result.error = "cancelled";
      return result;
    }
    auto span = analyzer.prepare(kRead);
    auto n = file->read(span, error);
    if (!n) {
      result.error = error.reason;
      return result;
    }
    if (*n == 0) break;
    if (skip_binary && probed < kBinaryProbe) {
      std::size_t look = std::min(*n, kBinaryProbe - probed);
      probed += look;
      if (std::memchr(span.data(), '\0', look) != nullptr) {
        result.binary = true;
        return result;
      }
    }
    analyzer.commit(*n);
  }
  result.log = analyzer.finish_parsed();
  return result;
}

}  // namespace oomlens::report
