#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/report.hpp"

namespace oomlens::cli {
namespace {

// Regular files are mapped and read in place, as ripgrep does: no copy from
// the page cache. Pages behind the analyzer are dropped from this process
// (MADV_DONTNEED), so memory stays flat whatever the file's size.
std::optional<analyzer::Analysis> analyze_mapped(int fd, std::size_t size, analyzer::LogAnalyzer& analyzer) {
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return std::nullopt;  // e.g. a FUSE file: fall back to read()
  ::madvise(map, size, MADV_SEQUENTIAL);
  auto* base = static_cast<char*>(map);
  const std::uint64_t page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  analyzer.feed_contiguous(std::string_view(base, size), [&](std::uint64_t offset, std::uint64_t length) {
    std::uint64_t start = (offset + page - 1) / page * page;
    std::uint64_t end = (offset + length) / page * page;
    if (end > start) ::madvise(base + start, end - start, MADV_DONTNEED);
  });
  auto result = analyzer.finish();
  ::munmap(map, size);
  return result;
}

}  // namespace

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
  if (S_ISREG(st.st_mode) && st.st_size > 0) {
    if (auto done = analyze_mapped(fd, static_cast<std::size_t>(st.st_size), analyzer)) {
      ::close(fd);
      return done;
    }
  }
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
