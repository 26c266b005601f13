#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/log_file.hpp"

namespace oomlens::report {

ReadResult read_log(const std::string& path, bool skip_binary, const std::atomic<bool>* cancelled) {
  ReadResult result;
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    result.error = std::strerror(errno);
    return result;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (fd != STDIN_FILENO) ::close(fd);
    result.error = "is a directory";
    return result;
  }
  analyzer::LogAnalyzer analyzer;
  // Files are read, not mapped: a first pass over freshly mapped pages costs
  // page faults and TLB misses that made a mapped 256 MiB log twice as slow
  // as reading it (bench/README.md), and the copy lands in a buffer the
  // scanner reads from cache. Memory stays at the buffer and the lookback.
  if (S_ISREG(st.st_mode)) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  // 1 MiB reads: large enough to amortise the syscall, small enough to stay in
  // cache for the scanner that runs right after.
  constexpr std::size_t kRead = 1 << 20;
  // ripgrep's test for a binary file: a NUL byte in its first 8 KiB.
  constexpr std::size_t kBinaryProbe = 8 * 1024;
  std::size_t probed = 0;
  for (;;) {
    if (cancelled && cancelled->load(std::memory_order_relaxed)) {
      if (fd != STDIN_FILENO) ::close(fd);
      result.error = "cancelled";
      return result;
    }
    auto span = analyzer.prepare(kRead);
    ssize_t n = ::read(fd, span.data(), span.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      result.error = std::strerror(errno);
      if (fd != STDIN_FILENO) ::close(fd);
      return result;
    }
    if (n == 0) break;
    if (skip_binary && probed < kBinaryProbe) {
      std::size_t look = std::min<std::size_t>(static_cast<std::size_t>(n), kBinaryProbe - probed);
      probed += look;
      if (std::memchr(span.data(), '\0', look) != nullptr) {
        if (fd != STDIN_FILENO) ::close(fd);
        result.binary = true;
        return result;
      }
    }
    analyzer.commit(static_cast<std::size_t>(n));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  result.log = analyzer.finish_parsed();
  return result;
}

}  // namespace oomlens::report
