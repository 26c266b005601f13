// Where lines of a file on disk are, as LSP ranges: for the files of a job
// the editor has not opened, whose text the server streamed through the
// analyzer without keeping it. A diagnostic's relatedInformation points into
// them, and LSP lines (which a bare '\r' also ends) are not the '\n' lines
// the analyzer counts, so the file is read once more, up to the last line
// asked for.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lsp/positions.hpp"

namespace oomlens::lsp {

// '\n' lines [first, last], 1-based, as the analyzer reports them.
struct NewlineSpan {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  friend auto operator<=>(const NewlineSpan&, const NewlineSpan&) = default;
};

// The range of each span, from the start of its first line to the end of its
// last (before the terminator), as LineIndex::range_of gives it for a text in
// memory; nothing for a span past the end of the file. All nothing when the
// file cannot be read or `cancelled` is set.
std::vector<std::optional<Range>> locate_file_lines(const std::string& path, const std::vector<NewlineSpan>& spans,
                                                    PositionEncoding encoding, const std::atomic<bool>& cancelled);

}  // namespace oomlens::lsp
