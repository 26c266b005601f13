// One cleaned line of a log, with where it came from.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomlens::analyzer {

struct Line {
  // 1-based, counted by '\n' as grep and editors' "go to line" do.
  std::uint64_t number = 0;
  // Byte offset of the start of the raw line in the input.
  std::uint64_t offset = 0;
  // Text with ANSI escapes, the rank prefix and the timestamp removed; when the
  // raw line held bare '\r' redraws, one Line per redrawn segment (same number).
  std::string text;
  // Rank of the process that printed it, from a launcher prefix ([rank3]:,
  // [default3]:, srun's "3: ", mpirun's "[1,3]<stderr>:").
  std::optional<int> rank;
  // Milliseconds since the Unix epoch, from a leading timestamp (UTC assumed).
  std::optional<std::int64_t> time_ms;
  // Width of the raw text as a terminal showed it (prefix included, colour
  // escapes not): in code points and in bytes, since `fold` counts bytes.
  std::uint32_t columns = 0;
  std::uint32_t bytes = 0;
  // The last physical line the text comes from, when it spans several: a
  // line a terminal hard-wrapped is joined back into one (analyzer/log/unwrap.hpp).
  // 0 means `number`.
  std::uint64_t end_number = 0;
  // The text starts after a bare '\r' of its raw line (a progress bar's
  // redraw with a message written over it), or inside a huge line: what a
  // terminal drew over a line, never the continuation of a wrapped one.
  bool redrawn = false;

  std::uint64_t last_number() const { return end_number ? end_number : number; }
};

// A window of consecutive lines around something interesting in the log. The
// analyzer never holds the whole log: only regions.
struct Region {
  std::vector<Line> lines;
  // Indexes into `lines` of the lines on which the scanner found an anchor.
  std::vector<std::size_t> anchors;
  // For each anchor line, a bit per scanner literal found on it (literal
  // index < 64); empty when the region was built by hand (tests).
  std::vector<std::uint64_t> anchor_literals;
  // The region's last line is the input's last: nothing follows it at all
  // (rather than: the region stopped reading).
  bool reaches_end = true;  // the stream sets it; a region built by hand is a whole text
  // The stream can build this region again with more lines above it.
  bool can_look_further_back = false;
};

}  // namespace oomlens::analyzer
