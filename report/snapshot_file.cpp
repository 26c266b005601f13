#include "report/snapshot_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace oomlens::report {
namespace {

namespace snap = analyzer::snapshot;
using Result = snap::Expected<snap::Snapshot, SnapshotFileError>;

SnapshotFileError unreadable(std::string reason) { return {SnapshotFileError::Kind::unreadable, std::move(reason)}; }

// The front ends show the analysis, which reads only the trace's oom
// entries: the rest of a long trace is checked and dropped as it is read.
snap::ReadOptions read_options() {
  snap::ReadOptions options;
  options.keep_full_trace = false;
  return options;
}

Result parsed(snap::Expected<snap::Snapshot, snap::SnapshotError> result) {
  if (!result) return SnapshotFileError{SnapshotFileError::Kind::refused, result.error().message};
  return std::move(*result);
}

// Pipes and other unmappable files: read whole, as there is nothing to map.
Result read_whole(int fd) {
  std::string bytes;
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      return unreadable(std::strerror(errno));
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<std::size_t>(n));
  }
  return parsed(snap::parse_snapshot(std::string_view(bytes), read_options()));
}

Result read_mapped(int fd, std::size_t size) {
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  if (map == MAP_FAILED) return read_whole(fd);
  ::madvise(map, size, MADV_SEQUENTIAL);
  auto* base = static_cast<char*>(map);
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::size_t released = 0;
  snap::ReadOptions options = read_options();
  options.progress = [&](std::size_t consumed) {
    // The reader copies what it keeps, so the bytes behind it are never
    // read again: drop those pages from this process.
    std::size_t end = consumed / page * page;
    if (end > released) {
      ::madvise(base + released, end - released, MADV_DONTNEED);
      released = end;
    }
  };
  Result result = parsed(snap::parse_snapshot(std::string_view(base, size), options));
  ::munmap(map, size);
  return result;
}

}  // namespace

Result read_snapshot_file(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return unreadable(std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int error = errno;
    ::close(fd);
    return unreadable(std::strerror(error));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return unreadable("is a directory");
  }
  Result result = S_ISREG(st.st_mode) && st.st_size > 0 ? read_mapped(fd, static_cast<std::size_t>(st.st_size))
                                                        : read_whole(fd);
  ::close(fd);
  return result;
}

}  // namespace oomlens::report
