// Lines a terminal or `fold` hard-wrapped, joined back into the line the
// program printed. A wrap can fall anywhere - inside a number ("21." /
// "30 GiB"), between a number and its unit, mid-word - so every parser would
// otherwise have to expect every cut.
#pragma once

#include "analyzer/log/line.hpp"

namespace oomlens::analyzer {

// Joins, in place, each run of physical lines that a wrap at a fixed width
// split: a line exactly as wide as the region's widest lines (the wrap width:
// at least 40 columns, seen on two lines in a row or on three) continues on the next physical
// line, unless that line starts a record of its own (a launcher prefix, a
// timestamp, a traceback or exception line, an empty line). The joined line
// keeps the first line's number, rank and time; end_number is the last
// line's. Anchors are remapped to the joined lines.
void join_hard_wraps(Region& region);

}  // namespace oomlens::analyzer
