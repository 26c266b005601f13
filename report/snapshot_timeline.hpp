// A device's memory over its trace, drawn: a sparkline for the terminal and
// an inline SVG chart for the HTML page (no script, nothing fetched), with the
// peaks and the OOM marked and the largest blocks alive at the peak labelled
// by the user's frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/snapshot/replay.hpp"

namespace oomlens::report {

// `values` resampled to `width` cells (each the most of the values it covers)
// and drawn with the eight block elements ▁..█, scaled to `scale` (the
// largest value when 0).
std::string sparkline(const std::vector<std::uint64_t>& values, std::size_t width, std::uint64_t scale = 0);

// The curve's allocated (or reserved) values, in order.
std::vector<std::uint64_t> curve_allocated(const analyzer::snapshot::DeviceTimeline& timeline);
std::vector<std::uint64_t> curve_reserved(const analyzer::snapshot::DeviceTimeline& timeline);

// The chart of one device: reserved as an area, allocated as a line over it,
// the allocated peak and the oom marked, the largest blocks at the peak listed
// beside it. Every string from the file is escaped.
std::string timeline_svg(const analyzer::snapshot::DeviceTimeline& timeline);

// "model.py:88 forward": a block's user frame, or why it has none.
std::string frame_label(const analyzer::snapshot::FrameList& frames);

}  // namespace oomlens::report
