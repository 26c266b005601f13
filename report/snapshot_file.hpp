// Reading a snapshot file for both front ends (the CLI and the language
// server): one place that opens, maps and parses, so they refuse the same
// files with the same words.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/snapshot/model.hpp"

namespace oomlens::report {

struct SnapshotFileError {
  enum class Kind {
    unreadable,  // the file could not be opened or read (missing, a directory, no permission)
    refused,     // it was read, but is not a snapshot this reader accepts (or is hostile)
  };
  Kind kind = Kind::unreadable;
  std::string reason;  // one line: strerror's text, or the reader's message (opcode and offset)
};

// Maps the file read-only and parses it in place; pages the reader has passed
// are handed back to the kernel as it goes, so the file's bytes do not add to
// the peak memory on top of the model (see bench/README.md, snapshot).
analyzer::snapshot::Expected<analyzer::snapshot::Snapshot, SnapshotFileError> read_snapshot_file(const std::string& path);

class MappedRange;

// What read_snapshot_file does once the file is mapped. A file cut short
// while it is read shows zeros past its new end (MappedRange::vanished):
// that is refused as unreadable, never parsed into a result.
analyzer::snapshot::Expected<analyzer::snapshot::Snapshot, SnapshotFileError> read_mapped_snapshot(MappedRange& mapped);

struct RankFile {
  std::int64_t rank = 0;
  std::string path;  // to read
  std::string name;  // as shown: the file's name, or folder/file
};

// The snapshots of a job's folder, by rank: the snapshot files directly in it
// (rank0.pickle, rank1.pickle, ...), or else one folder per rank holding one
// snapshot each (rank0/snapshot.pickle, ...). The rank is the last number in
// the file's (or folder's) name; without one, its place in name order.
// Snapshot files end in .pickle, .pkl or .json, optionally .gz.
std::vector<RankFile> rank_snapshot_files(const std::string& dir);

bool is_directory(const std::string& path);

}  // namespace oomlens::report
