#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/report.hpp"

namespace oomlens::cli {
std::optional<analyzer::Analysis> analyze_input(const std::string& path, std::string& error) {
  int fd = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    if (fd != STDIN_FILENO) ::close(fd);
    error = "is a directory";
    return std::nullopt;
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
  for (;;) {
    auto span = analyzer.prepare(kRead);
    ssize_t n = ::read(fd, span.data(), span.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      error = std::strerror(errno);
      if (fd != STDIN_FILENO) ::close(fd);
      return std::nullopt;
    }
    if (n == 0) break;
    analyzer.commit(static_cast<std::size_t>(n));
  }
  if (fd != STDIN_FILENO) ::close(fd);
  return analyzer.finish();
}

}  // namespace oomlens::cli
