#include "analyzer/snapshot/analysis.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "analyzer/size.hpp"

namespace oomlens::analyzer::snapshot {
namespace {

using u64 = std::uint64_t;

constexpr u64 kSmallRequestMax = u64{1} << 20;  // the allocator's small pool serves requests <= 1 MiB

std::string sz(u64 b) { return format_size(b); }
std::string pct(u64 part, u64 whole) {
  return whole ? fmt::format("{:.1f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole)) : "?";
}
bool is_active(BlockState s) { return s == BlockState::active_allocated || s == BlockState::active_pending_free; }
bool is_default_pool(const Segment& s) { return s.pool_id.first == 0 && s.pool_id.second == 0; }

std::string pool_name(const Segment& s) {
  if (!is_default_pool(s)) return fmt::format("private ({}, {})", s.pool_id.first, s.pool_id.second);
  return std::string(to_string(s.segment_type));
}

DeviceSummary& device_entry(std::map<std::int64_t, DeviceSummary>& devices, std::int64_t device) {
  auto [it, inserted] = devices.try_emplace(device);
  if (inserted) it->second.device = device;
  return it->second;
}

void add_segment(DeviceSummary& d, const Segment& segment) {
  ++d.segments;
  d.reserved += segment.total_size;
  bool holds_active = std::any_of(segment.blocks.begin(), segment.blocks.end(),
                                  [](const Block& b) { return is_active(b.state); });
  auto pool = std::find_if(d.pools.begin(), d.pools.end(), [&](const PoolFree& p) {
    return p.pool_id == segment.pool_id && (!is_default_pool(segment) || p.segment_type == segment.segment_type);
  });
  if (pool == d.pools.end()) {
    PoolFree p;
    p.pool = pool_name(segment);
    p.pool_id = segment.pool_id;
    p.segment_type = is_default_pool(segment) ? segment.segment_type : SegmentType::unknown;
    d.pools.push_back(std::move(p));
    pool = d.pools.end() - 1;
  }
  ++pool->segments;
  for (const Block& block : segment.blocks) {
    ++d.blocks;
    if (block.state == BlockState::active_allocated) d.allocated += block.size;
    if (is_active(block.state)) d.active += block.size;
    if (block.state == BlockState::inactive) {
      d.inactive += block.size;
      if (holds_active) d.inactive_split += block.size;
      d.largest_free_block = std::max(d.largest_free_block, block.size);
      pool->largest_free_block = std::max(pool->largest_free_block, block.size);
      pool->free_bytes += block.size;
    }
  }
}

int pool_rank(const PoolFree& p) {
  if (p.pool_id != std::pair<std::int64_t, std::int64_t>{0, 0}) return 3;
  return p.segment_type == SegmentType::large ? 0 : p.segment_type == SegmentType::small ? 1 : 2;
}

// Judges the failed request from the dump-time segments, in the classes of
// classify.hpp. Order: limit (the device had room), fragmentation (the cache
// had the bytes, no block had the size), then capacity or external.
void judge(OomAnalysis& o, const AnalysisOptions& opt, const AllocatorSettings& settings) {
  Verdict& v = o.verdict;
  const auto& t = opt.thresholds;
  u64 req = o.requested;
  v.notes.push_back("the free blocks are the segments' state when the snapshot was dumped, which may differ from "
                    "the moment of the OOM");
  if (!o.device_free_known || req == 0) {
    v.cls = OomClass::unquantified;
    v.notes.push_back("the oom entry records no device_free (or no size): the snapshot cannot tell the cause");
    return;
  }
  const u64 free = o.device_free;
  if (free >= req) {
    // A 2.6 snapshot keeps no cap: set_per_process_memory_fraction() leaves no
    // key, and the observer's allowed maximum is not saved. The evidence is
    // that the driver had room and the allocator refused.
    v.cls = OomClass::limit;
    v.arithmetic.push_back(fmt::format("the device still had {} free ≥ requested {}: the allocator refused, not the driver",
                                       sz(free), sz(req)));
    v.arithmetic.push_back(fmt::format("reserved {} + requested {} = {} crossed the cap", sz(o.reserved), sz(req),
                                       sz(o.reserved + req)));
    if (settings.per_process_memory_fraction) {
      const double fraction = *settings.per_process_memory_fraction;
      if (opt.device_total && *opt.device_total) {
        auto cap = static_cast<u64>(fraction * static_cast<double>(*opt.device_total));
        v.arithmetic.push_back(fmt::format("per_process_memory_fraction {} of the {} device allows {}", fraction,
                                           sz(*opt.device_total), sz(cap)));
      } else {
        auto floor = static_cast<u64>(fraction * static_cast<double>(o.reserved + free));
        v.arithmetic.push_back(fmt::format("per_process_memory_fraction {} (PYTORCH_CUDA_ALLOC_CONF) of a device of at "
                                           "least {} (reserved + free) allows at least {}",
                                           fraction, sz(o.reserved + free), sz(floor)));
      }
    } else {
      v.notes.push_back("the cap itself is not in the snapshot: set_per_process_memory_fraction() leaves no key "
                        "behind; look for it in the training code");
    }
    return;
  }
  // Significant share, as classify.cpp: of the device when its total is
  // known, else of reserved memory.
  auto significant = [&](u64 amount) {
    if (amount < req) return false;
    if (opt.device_total && *opt.device_total)
      return static_cast<double>(amount) >= t.significant_share * static_cast<double>(*opt.device_total);
    if (o.reserved) return static_cast<double>(amount) >= t.significant_share_of_reserved * static_cast<double>(o.reserved);
    return false;
  };
  auto share_line = [&](u64 amount) {
    if (opt.device_total && *opt.device_total)
      return fmt::format("{} is {} of the {} device (threshold {:.0f}%)", sz(amount), pct(amount, *opt.device_total),
                         sz(*opt.device_total), t.significant_share * 100);
    return fmt::format("{} is {} of the {} reserved (threshold {:.0f}%)", sz(amount), pct(amount, o.reserved),
                       sz(o.reserved), t.significant_share_of_reserved * 100);
  };
  if (o.cached_free >= req && o.largest_free_block < req) {
    if (significant(o.cached_free)) {
      v.cls = OomClass::fragmentation;
      v.arithmetic.push_back(fmt::format("cached free {} (inactive blocks) ≥ requested {}", sz(o.cached_free), sz(req)));
      v.arithmetic.push_back(share_line(o.cached_free));
      v.arithmetic.push_back(fmt::format("largest free block {} < requested {}", sz(o.largest_free_block), sz(req)));
      v.arithmetic.push_back(fmt::format("free on the device {} < requested {}: the driver could not supply a new segment",
                                         sz(free), sz(req)));
      return;
    }
    v.notes.push_back(fmt::format("cached free {} would cover the request but is not a significant share; {}",
                                  sz(o.cached_free), share_line(o.cached_free)));
  }
  if (o.largest_free_block >= req) {
    v.cls = OomClass::unquantified;
    v.notes.push_back(fmt::format("a free block of {} ≥ requested {} exists at dump time: memory was freed after the OOM, "
                                  "so the snapshot cannot show the state that failed",
                                  sz(o.largest_free_block), sz(req)));
    return;
  }
  const u64 avail = free + o.cached_free;
  // Together they may reach the request and still fail it: neither the
  // device's free memory nor any cached block holds it in one piece.
  const std::string avail_line =
      avail < req ? fmt::format("free {} + cached free {} = {} < requested {}", sz(free), sz(o.cached_free), sz(avail),
                                sz(req))
                  : fmt::format("free {} + cached free {} = {} ≥ requested {}, but in pieces: neither the device's free "
                                "memory nor any cached block holds it whole",
                                sz(free), sz(o.cached_free), sz(avail), sz(req));
  if (opt.device_total && *opt.device_total) {
    u64 total = *opt.device_total;
    u64 used = total > free ? total - free : 0;
    u64 outside = used > o.reserved ? used - o.reserved : 0;
    if (outside >= req && static_cast<double>(outside) >= t.significant_share * static_cast<double>(total)) {
      v.cls = OomClass::external;
      v.arithmetic.push_back(fmt::format("device {} − free {} − reserved {} = {} in use outside this allocator ≥ requested {}",
                                         sz(total), sz(free), sz(o.reserved), sz(outside), sz(req)));
      v.arithmetic.push_back(fmt::format("{} is {} of the {} device (threshold {:.0f}%)", sz(outside), pct(outside, total),
                                         sz(total), t.significant_share * 100));
      v.arithmetic.push_back(avail_line);
    } else {
      v.cls = OomClass::capacity;
      v.arithmetic.push_back(fmt::format("allocated {} of the {} device ({}) is held by live blocks", sz(o.allocated),
                                         sz(total), pct(o.allocated, total)));
      v.arithmetic.push_back(avail_line);
    }
    return;
  }
  // No device total in a snapshot: the device had at least reserved + free,
  // and needed reserved + free + the missing part for the request to fit.
  const u64 needed = o.reserved + free + (req - std::min(req, free));
  const bool mostly_ours = needed && static_cast<double>(o.reserved) >=
                                         opt.capacity_reserved_share * static_cast<double>(needed);
  if (mostly_ours) {
    v.cls = OomClass::capacity;
    v.arithmetic.push_back(avail_line);
    v.arithmetic.push_back(fmt::format("allocated {} of reserved {} ({}) is held by live blocks", sz(o.allocated),
                                       sz(o.reserved), pct(o.allocated, o.reserved)));
    v.arithmetic.push_back(fmt::format("reserved {} is {} of reserved + free + missing {} (threshold {:.0f}%)",
                                       sz(o.reserved), pct(o.reserved, needed), sz(needed),
                                       opt.capacity_reserved_share * 100));
  } else {
    v.cls = OomClass::external;
    v.arithmetic.push_back(avail_line);
    v.arithmetic.push_back(fmt::format("reserved {} is only {} of reserved + free + missing {} (threshold {:.0f}%): "
                                       "the rest of the device is held outside this allocator",
                                       sz(o.reserved), pct(o.reserved, needed), sz(needed),
                                       opt.capacity_reserved_share * 100));
    v.notes.push_back("a snapshot does not record the device's total memory: external is an estimate from how little "
                      "is reserved; give the device total (--device-total) to quantify it");
  }
}

std::optional<OomAnalysis> find_oom(const Snapshot& snapshot, const std::map<std::int64_t, DeviceSummary>& devices,
                                    const AnalysisOptions& options) {
  const TraceEntry* last = nullptr;
  std::int64_t last_device = 0;
  std::vector<std::size_t> counts(snapshot.device_traces.size(), 0);
  for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d)
    for (const TraceEntry& e : snapshot.device_traces[d]) {
      if (e.action != TraceAction::oom) continue;
      ++counts[d];
      if (!last || e.time_us >= last->time_us) {
        last = &e;
        last_device = static_cast<std::int64_t>(d);
      }
    }
  if (!last) return std::nullopt;
  OomAnalysis o;
  o.device = last_device;
  o.requested = last->size;
  o.device_free_known = last->device_free.has_value();
  o.device_free = last->device_free.value_or(0);
  o.time_us = last->time_us;
  o.frames = last->frames;
  o.oom_events = counts[static_cast<std::size_t>(last_device)];
  if (auto it = devices.find(last_device); it != devices.end()) {
    o.reserved = it->second.reserved;
    o.allocated = it->second.allocated;
    o.cached_free = it->second.inactive;
  }
  const SegmentType kind = o.requested <= kSmallRequestMax ? SegmentType::small : SegmentType::large;
  for (const Segment& segment : snapshot.segments) {
    if (segment.device != last_device || !is_default_pool(segment)) continue;
    if (segment.segment_type != kind && segment.segment_type != SegmentType::unknown) continue;
    for (const Block& block : segment.blocks)
      if (block.state == BlockState::inactive) o.largest_free_block = std::max(o.largest_free_block, block.size);
  }
  judge(o, options, snapshot.settings);
  return o;
}

}  // namespace

Analysis analyze(const Snapshot& snapshot, const AnalysisOptions& options) {
  Analysis a;
  std::map<std::int64_t, DeviceSummary> devices;
  for (const Segment& segment : snapshot.segments) add_segment(device_entry(devices, segment.device), segment);
  // A device with a trace but no segments still shows (all zero).
  for (std::size_t d = 0; d < snapshot.device_traces.size(); ++d)
    if (!snapshot.device_traces[d].empty() || (d < snapshot.trace_lengths.size() && snapshot.trace_lengths[d] > 0))
      device_entry(devices, static_cast<std::int64_t>(d));
  for (auto& [id, d] : devices) {
    d.fragmentation = d.reserved ? static_cast<double>(d.inactive_split) / static_cast<double>(d.reserved) : 0.0;
    std::stable_sort(d.pools.begin(), d.pools.end(), [](const PoolFree& x, const PoolFree& y) {
      return std::tuple(pool_rank(x), x.pool_id) < std::tuple(pool_rank(y), y.pool_id);
    });
  }
  a.oom = find_oom(snapshot, devices, options);
  for (auto& [id, d] : devices) a.devices.push_back(std::move(d));

  a.timelines = replay_traces(snapshot, options.replay);
  const bool frames = any_frames(snapshot);
  auto recording_of = [&](std::int64_t device) {
    StackRecording r{snapshot.legacy, frames, false, false};
    for (const auto& t : a.timelines)
      if (t.device == device) r.trace_recorded = true, r.overflow_suspected = t.overflow_suspected;
    return r;
  };
  if (a.oom && (!a.oom->frames || a.oom->frames->empty()))
    a.oom->missing = missing_stack_cause(recording_of(a.oom->device), true);

  // Sites: live blocks grouped by their user frames; blocks without a stack
  // by why they have none.
  SiteGrouper sites;
  std::optional<std::int64_t> device;
  StackRecording recording;
  const DeviceTimeline* timeline = nullptr;
  for (const Segment& segment : snapshot.segments) {
    if (device != segment.device) {
      device = segment.device;
      recording = recording_of(segment.device);
      timeline = nullptr;
      for (const auto& t : a.timelines)
        if (t.device == segment.device) timeline = &t;
    }
    for (const Block& block : segment.blocks) {
      if (block.state != BlockState::active_allocated) continue;
      MissingStack missing = MissingStack::none;
      if (!block.frames || block.frames->empty()) {
        const bool in_trace = timeline && !std::binary_search(timeline->older_than_trace.begin(),
                                                              timeline->older_than_trace.end(), block.address);
        missing = missing_stack_cause(recording, in_trace);
      }
      sites.add(block.frames, block.size, missing);
    }
  }
  a.top_sites = sites.take(options.top_sites, a.sites_total);
  return a;
}
}  // namespace oomlens::analyzer::snapshot
