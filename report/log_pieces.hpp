// Reading a long log file in pieces side by side, on a few threads, as the
// language server reads a long document (analyzer/log/segmented_log.hpp):
// the file is cut at line starts into pieces that a queue hands out, each
// piece read with pread(2) into its analyzer's buffer, a MiB at a time, with
// a margin on either side (more than a region reaches) whose results are
// dropped. Each piece's lines are numbered from the line counts of the pieces
// before it. Memory stays at a few buffers whatever the file's size; a file
// cut short while read is read again in one pass.
//
// Why a queue and not one half a thread: the halves' times differed by 20 to
// 110 ms on a 1 GiB log, from the content's density on either side and from
// one core running slower than the other for a while (a shared machine).
// Pieces that shrink toward the end let the thread that is ahead take more.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analyzer/log/analyzer.hpp"
#include "report/files.hpp"

namespace oomlens::report {

struct PieceOptions {
  // Threads reading pieces at once (the caller's among them); 0: as many as
  // the machine has cores, 2 or 3 (memory: see reading_threads).
  unsigned threads = 0;
  // The smallest piece, and at least a 32nd of the file: every cut makes two
  // margins to read twice (6 MiB), so that a GiB is read in about 8 pieces.
  std::uint64_t min_piece = 24u << 20;
  // OOM messages kept from the whole file, shared between the pieces in
  // proportion to the bytes each reads, so that what is kept does not depend
  // on which thread took which piece.
  std::size_t max_events = 200000;
};

// Where a file of `size` bytes is cut: 0, then line starts, then `size`.
// Each piece is a share of what is left (one part in `threads` + 1), never
// under the smallest piece; a file under two of those is cut near its middle,
// and one under 24 MiB not at all. A place with no line start near it
// (kLineSearch) is passed over.
std::vector<std::uint64_t> piece_cuts(int fd, std::uint64_t size, unsigned threads, std::uint64_t min_piece);

// The file read in pieces, or nothing when it is not worth it or not safe (a
// short file, not a regular file, no line start to cut at, a read that
// failed, a line past kLineSearch after a margin, the file cut short while
// read): then `error` is empty and the caller reads the file in one pass.
// Cancelled: nothing, with "cancelled" in `error`.
std::optional<analyzer::ParsedLog> read_log_in_pieces(const OpenFile& file, const std::atomic<bool>* cancelled,
                                                      std::string& error, const PieceOptions& options = {});

}  // namespace oomlens::report
