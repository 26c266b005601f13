// A snapshot file cut short while it is mapped and read
// (report/snapshot_file.hpp): refused as unreadable, never a wrong model.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "report/mapped_range.hpp"
#include "report/snapshot_file.hpp"
#include "tests/temp_tree.hpp"

using oomlens::report::MappedRange;
using oomlens::report::read_mapped_snapshot;
using oomlens::report::SnapshotFileError;

namespace {

// A real snapshot of several pages (PyTorch's pickle of a capacity OOM),
// copied to a file open for writing and mapped whole.
struct MappedSnapshot {
  oomlens::testing::TempTree tree;
  std::string bytes = fixture();
  int fd = ::open(tree.write("rank0.pickle", bytes).c_str(), O_RDWR);
  MappedRange mapped{fd, 0, bytes.size()};

  MappedSnapshot() {
    REQUIRE(bytes.size() > 4 * 4096);
    REQUIRE(mapped.ok());
  }
  ~MappedSnapshot() { ::close(fd); }
  MappedSnapshot(const MappedSnapshot&) = delete;
  MappedSnapshot& operator=(const MappedSnapshot&) = delete;

  static std::string fixture() {
    std::ifstream in(std::filesystem::path(OOMLENS_SOURCE_DIR) / "fixtures/snapshots/capacity_p2.pickle",
                     std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  }
};

}  // namespace

TEST_CASE("a mapped snapshot is read whole when the file stays as it was") {
  MappedSnapshot file;
  auto snapshot = read_mapped_snapshot(file.mapped);
  REQUIRE(snapshot);
  CHECK_FALSE(snapshot->segments.empty());
}

TEST_CASE("a snapshot cut short after it was mapped is refused as unreadable, not parsed from zeros") {
  MappedSnapshot file;
  // Rotated or rewritten under the reader: past the new end it reads zeros,
  // in the rest of the last page without any fault.
  REQUIRE(::ftruncate(file.fd, 4096 + 17) == 0);
  auto snapshot = read_mapped_snapshot(file.mapped);
  REQUIRE_FALSE(snapshot);
  CHECK(snapshot.error().kind == SnapshotFileError::Kind::unreadable);
  CHECK(snapshot.error().reason == "the file was cut short while it was read");
}
