// Reading a snapshot file for both front ends (the CLI and the language
// server): one place that opens, maps and parses, so they refuse the same
// files with the same words.
#pragma once

#include <string>

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

}  // namespace oomlens::report
