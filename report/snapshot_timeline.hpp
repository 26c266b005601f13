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

// Where a trace's moments lie: seconds from its first entry when the trace
// is timed (DeviceTimeline::timed), else entry counts.
struct TraceAxis {
  bool seconds = false;
  double extent = 1;  // the last entry's place, in the axis' unit
};
TraceAxis trace_axis(const analyzer::snapshot::DeviceTimeline& timeline);
// One axis for several traces drawn together: seconds only when all are timed.
TraceAxis shared_axis(const std::vector<const analyzer::snapshot::DeviceTimeline*>& timelines);
// A moment's place on `axis`.
double moment_at(const analyzer::snapshot::DeviceTimeline& timeline, const analyzer::snapshot::TraceMoment& moment,
                 const TraceAxis& axis);
// The oom's place: its own entry, just after the moment before it.
double oom_at(const analyzer::snapshot::DeviceTimeline& timeline, const TraceAxis& axis);
// "+2.500 s" on a timed axis, "after entry 10" otherwise.
std::string moment_label(const analyzer::snapshot::DeviceTimeline& timeline,
                         const analyzer::snapshot::TraceMoment& moment);

// One run's curves in a chart of several (compare, ranks): drawn in `css`
// ("run-a", "run-b"), its peak marked with `label`.
struct ChartRun {
  const analyzer::snapshot::DeviceTimeline* timeline = nullptr;
  std::string label;
  std::string css;
};
struct ChartSize {
  double width = 640, height = 160;
  bool labels = true;  // the peaks named and the axes' ticks drawn; a small chart draws neither
};
// The runs on one x axis (shared_axis) and one y scale (`scale`, else the
// highest of them).
std::string runs_svg(const std::vector<ChartRun>& runs, const ChartSize& size, std::uint64_t scale = 0);

// The chart of one device: reserved as an area, allocated as a line over it,
// the allocated peak and the oom marked, the largest blocks at the peak listed
// beside it. Every string from the file is escaped.
std::string timeline_svg(const analyzer::snapshot::DeviceTimeline& timeline);

// "model.py:88 forward": a block's user frame, or why it has none.
std::string frame_label(const analyzer::snapshot::FrameList& frames);

}  // namespace oomlens::report
