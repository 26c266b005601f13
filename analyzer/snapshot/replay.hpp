// The trace replayed: allocated and reserved memory over time on each device,
// the moments of their peaks (and of an oom event), and what was alive then.
//
// The trace may begin after memory was already allocated (recording started
// late, or its max_entries ring buffer dropped the oldest entries). The
// segments at dump time are the end of the trace, so the start is rebuilt
// backwards from them: blocks alive at the end whose allocation is not in the
// trace, and frees of blocks the trace never saw allocated, were alive when
// it began. What the two ends disagree on is reported as unaccounted.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "analyzer/snapshot/model.hpp"
#include "analyzer/snapshot/sites.hpp"

namespace oomlens::analyzer::snapshot {

struct LiveBlock {
  std::uint64_t address = 0;
  std::uint64_t size = 0;
  FrameList frames;
  std::int64_t time_us = 0;   // its allocation; 0 when older than the trace
  bool before_trace = false;  // allocated before the trace begins
};

// The state after the first `entries` entries of a device's trace.
struct TraceMoment {
  std::size_t entries = 0;
  std::int64_t time_us = 0;  // of the last entry applied (or of the first, at the start)
  std::uint64_t allocated = 0;
  std::uint64_t reserved = 0;
  std::size_t live_blocks = 0;
  std::vector<SiteFrames> top_sites;
  std::size_t sites_total = 0;
  std::vector<LiveBlock> largest;  // the largest live blocks, most bytes first
  // ReplayOptions::all_peak_sites, at the peak of allocated memory only:
  // every site, most bytes first (the editor shows each user line's share).
  std::vector<SiteFrames> all_sites;
};

struct CurvePoint {
  std::uint64_t allocated = 0;  // the most within the point's span of entries
  std::uint64_t reserved = 0;
  std::int64_t time_us = 0;     // of the last entry in the span
};

struct DeviceTimeline {
  std::int64_t device = 0;
  std::size_t entries = 0;
  bool overflow_suspected = false;
  // Alive when the trace begins, allocated before it (their allocation is
  // not in the trace): the part of any moment the trace cannot attribute to
  // an allocation it saw.
  std::uint64_t before_trace_bytes = 0;
  std::size_t before_trace_blocks = 0;
  // Allocated at dump time minus what the trace rebuilds: entries missing
  // from the middle, or segments that do not match the trace. 0 when they agree.
  std::int64_t unaccounted_bytes = 0;
  TraceMoment start;
  TraceMoment peak_allocated;
  TraceMoment peak_reserved;
  std::optional<TraceMoment> at_oom;  // just before the device's last oom entry
  std::vector<CurvePoint> curve;      // allocated and reserved over the trace, in order
  std::size_t entries_per_point = 1;
  // Every entry carries a time, none goes back, and the last is later than
  // the first: the trace can be drawn against time. Otherwise only entry
  // counts place a moment.
  bool timed = false;
  // Addresses of blocks alive at dump time that the trace never saw
  // allocated (sorted): older than the trace.
  std::vector<std::uint64_t> older_than_trace;
};

struct ReplayOptions {
  std::size_t top_sites = 5;
  std::size_t largest_blocks = 5;
  std::size_t curve_points = 240;
  bool all_peak_sites = false;
};

// The trace looks cut by a ring buffer when its length is a number someone
// would pass as max_entries (a multiple of 1000, or a power of two >= 1024)
// and the trace frees blocks it never saw allocated.
bool looks_like_ring_limit(std::size_t entries);

// One timeline per device whose trace was read whole and is not empty.
std::vector<DeviceTimeline> replay_traces(const Snapshot& snapshot, const ReplayOptions& options = {});

}  // namespace oomlens::analyzer::snapshot
