// What a memory snapshot says: per-device figures, the verdict on an OOM
// event in its trace, and the allocation sites holding the most memory.
// Pure computation on the model (no JSON, no files); the CLI renders it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/verdict.hpp"
#include "analyzer/snapshot/model.hpp"
#include "analyzer/snapshot/replay.hpp"
#include "analyzer/snapshot/sites.hpp"

namespace oomlens::analyzer::snapshot {

// Largest free (inactive) block of one pool on one device. The default pool
// is split by segment type (large/small); a private pool (CUDA graph or
// MemPool, pool id other than (0, 0)) is its own entry.
struct PoolFree {
  std::string pool;  // "large", "small", "unknown" or "private (0, 1)"
  std::pair<std::int64_t, std::int64_t> pool_id{0, 0};
  SegmentType segment_type = SegmentType::unknown;
  std::uint64_t largest_free_block = 0;
  std::uint64_t free_bytes = 0;  // all inactive blocks of the pool
  std::size_t segments = 0;
};

struct DeviceSummary {
  std::int64_t device = 0;
  std::uint64_t reserved = 0;        // sum of segment total_size
  std::uint64_t allocated = 0;       // active_allocated blocks
  std::uint64_t active = 0;          // active_allocated + active_pending_free blocks
  std::uint64_t inactive = 0;        // free cached blocks
  std::uint64_t inactive_split = 0;  // free blocks in segments that also hold an active block
  std::uint64_t largest_free_block = 0;
  std::size_t segments = 0;
  std::size_t blocks = 0;
  // inactive_split / reserved: the share of reserved memory cached but
  // unusable for a request as large as its segment, because an active block
  // pins the segment (it cannot be released or coalesced whole). 0 when
  // nothing is reserved.
  double fragmentation = 0.0;
  std::vector<PoolFree> pools;  // large, small, then private pools by id
};

// An `oom` trace entry judged against the segments. The segments are the
// state at dump time (usually right after the OOM, when the exception was
// caught), not necessarily the state at the failed call; the verdict says so.
struct OomAnalysis {
  std::int64_t device = 0;
  std::uint64_t requested = 0;    // the entry's size: the rounded request
  std::uint64_t device_free = 0;  // cudaMemGetInfo free at the OOM
  bool device_free_known = false;
  // Largest free cached block the request could have used: default-pool
  // segments of the request's kind (small when <= 1 MiB, else large).
  std::uint64_t largest_free_block = 0;
  std::uint64_t cached_free = 0;  // all inactive blocks on the device
  std::uint64_t reserved = 0;
  std::uint64_t allocated = 0;
  std::int64_t time_us = 0;
  std::size_t oom_events = 0;  // on this device; the last one is judged
  FrameList frames;            // the failing call's stack, when recorded
  MissingStack missing = MissingStack::none;  // why frames is empty
  Verdict verdict;
};

struct AnalysisOptions {
  std::size_t top_sites = 10;
  ClassifyThresholds thresholds{};
  // The device's total memory when known from elsewhere (a log's "total
  // capacity", the GPU model): a snapshot does not record it. Lets the
  // external-versus-capacity judgement use shares of the device.
  std::optional<std::uint64_t> device_total;
  // Without a device total: capacity when reserved is at least this share of
  // reserved + device_free + requested (the least memory the device must
  // have had for the request to fit); below it, memory outside this
  // allocator is the likelier cause (external), marked as an estimate.
  double capacity_reserved_share = 0.90;
  ReplayOptions replay{};
};

struct Analysis {
  std::vector<DeviceSummary> devices;  // ascending device ordinal
  std::optional<OomAnalysis> oom;      // the last oom entry of the trace (latest time)
  std::vector<SiteFrames> top_sites;   // most bytes first
  std::size_t sites_total = 0;         // distinct sites before the top-N cut
  std::vector<DeviceTimeline> timelines;  // one per device whose trace was read whole
};

Analysis analyze(const Snapshot& snapshot, const AnalysisOptions& options = {});

}  // namespace oomlens::analyzer::snapshot
