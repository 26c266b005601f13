#include "report/snapshot_file.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include "report/files.hpp"

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
Result read_whole(OpenFile& file) {
  std::string bytes;
  FileError error;
  // Bounded by the largest pickle the reader takes: a pipe that never ends
  // is refused once past it, not read until memory runs out.
  if (!file.read_rest(bytes, error, snap::kMaxPickleBytes)) return unreadable(error.reason);
  return parsed(snap::parse_snapshot(std::string_view(bytes), read_options()));
}

Result read_mapped(OpenFile& file) {
  const std::size_t size = file.size();
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file.fd(), 0);
  if (map == MAP_FAILED) return read_whole(file);
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
  FileError error;
  auto file = OpenFile::open(path, error);
  if (!file) return unreadable(error.reason);
  return file->regular() && file->size() > 0 ? read_mapped(*file) : read_whole(*file);
}

}  // namespace oomlens::report
